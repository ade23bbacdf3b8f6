package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The map side writes what the sample needs, not the input: on local-cluster[2,1,1024] (executor
 * JVMs, real ATP between them, 5% of datagrams dropped) an approximate query over {@code ROWS}
 * generated rows in 8 map tasks x 24 groups, with the default {@code spark.approx.mapSampleRecords}
 * (8192). Spark's own shuffle write metrics (records and bytes, summed over the map tasks) are at
 * least the pre-sample's floor and at most its ceiling - {@code 8 x 24 x (2K + 6 sqrt(2K))}
 * records, at the records' encoded size plus framing - far below the input; the answer is right
 * (counts exact, averages within e_max of the truth known by construction) and no group is short of
 * its plan.
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
class PreSampleLocalClusterTest {
    static final long ROWS = Long.getLong("netapprox.presample.rows", 6_000_000L);
    static final int MAPS = 8;
    static final int GROUPS = 24;

    static SparkSession spark;
    static final AtomicLong records = new AtomicLong();
    static final AtomicLong bytes = new AtomicLong();

    @BeforeAll
    static void start() throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-presample-cluster",
                        SparkTestSupport.conf("spark.approx.faultDropOutgoing", "0.05"));
        spark.sparkContext()
                .addSparkListener(
                        new SparkListener() {
                            @Override
                            public void onTaskEnd(SparkListenerTaskEnd e) {
                                if (e.taskMetrics() != null) {
                                    records.addAndGet(
                                            e.taskMetrics().shuffleWriteMetrics().recordsWritten());
                                    bytes.addAndGet(
                                            e.taskMetrics().shuffleWriteMetrics().bytesWritten());
                                }
                            }
                        });
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (spark.sparkContext().getExecutorIds().size() < 2) {
            assertTrue(System.nanoTime() < deadline, "executors did not register");
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void shuffleWriteIsBoundedByThePreSampleNotTheInput() throws Exception {
        Dataset<Row> input =
                spark.range(0, ROWS, 1, MAPS)
                        .selectExpr(
                                "cast(id % " + GROUPS + " as int) as hour",
                                "rand(5) * 10 + cast(id % " + GROUPS + " as double) as x");
        spark.sparkContext().listenerBus().waitUntilEmpty();
        long recordsBefore = records.get();
        long bytesBefore = bytes.get();
        ApproxQuery q =
                ApproxQuery.on(input)
                        .groupBy("hour")
                        .avg("x")
                        .sum("x")
                        .count()
                        .errorBound(0.05)
                        .seed(4)
                        .partitions(2);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        spark.sparkContext().listenerBus().waitUntilEmpty();
        long written = records.get() - recordsBefore;
        long writtenBytes = bytes.get() - bytesBefore;
        long k = 8192;
        long floor = (long) MAPS * GROUPS * k;
        long ceiling = (long) (MAPS * GROUPS * (2 * k + 6 * Math.sqrt(2 * k)));
        // a record: 2 doubles (avg and sum of x share no column here) = 16 bytes; a message of 32
        // records adds 8 bytes (its length and record count); each segment a table of a few dozen
        // bytes per group
        long bytesCeiling =
                ceiling * 16 + (ceiling / 32 + MAPS * GROUPS) * 8 + MAPS * 2 * (GROUPS * 100 + 16);
        System.out.printf(
                "[spark] pre-sample on local-cluster: %d input rows, map side wrote %d records"
                        + " (floor %d, ceiling %d) and %.2f MB (ceiling %.2f MB, %.3f%% of the"
                        + " input's 16 bytes a row); metrics %s%n",
                ROWS,
                written,
                floor,
                ceiling,
                writtenBytes / 1e6,
                bytesCeiling / 1e6,
                100.0 * writtenBytes / (16.0 * ROWS),
                q.metrics().values());
        assertTrue(
                written >= floor && written <= ceiling,
                "records written " + written + " within [" + floor + ", " + ceiling + "]");
        assertTrue(
                writtenBytes <= bytesCeiling,
                "bytes written " + writtenBytes + " <= " + bytesCeiling);
        assertTrue(written < ROWS / 2, "a sample of the input, not the input");
        for (int h = 0; h < GROUPS; h++) {
            String g = "hour=" + h;
            long n = ROWS / GROUPS + (h < ROWS % GROUPS ? 1 : 0);
            Row avg = approx.get(g + "|avg(x)");
            Row count = approx.get(g + "|count");
            assertEquals(n, count.getLong(10), g + ": population rows");
            assertEquals((double) n, count.getDouble(4), 0.0, g + ": count is exact");
            // x is uniform on [h, h + 10]: the group mean is h + 5 up to 10 / sqrt(12 n) ~ 0.006
            double err = Math.abs(avg.getDouble(4) - (h + 5)) / (h + 5);
            assertTrue(err <= 2 * 0.05, g + ": avg error " + err);
            assertTrue(avg.getLong(9) < n, g + ": a sample");
        }
        Map<String, Object> m = q.metrics().values();
        assertEquals(0L, m.get("groups below target"));
        assertEquals(0L, m.get("groups short of plan"));
    }
}
