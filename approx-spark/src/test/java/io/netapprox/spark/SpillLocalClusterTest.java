package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bounded memory: local-cluster[2,1,512] (two executor JVMs of 512 MB, Spark's production 300 MB
 * reserve, so about 120 MB of execution memory each), an approximate query whose approximate
 * shuffle data is more than twice an executor's heap (140M rows, 17.5M per map task: held in
 * memory, one task's records alone would need about 400 MB). The map tasks spill through Spark's
 * memory manager (Spark's own task metrics show it), no task's execution memory exceeds the pool,
 * the reducers aggregate as they read, and the query completes with the counts exact and every
 * group's average and median within 2 e_max of the truth (x is uniform on [hour, hour + 10], so the
 * population's mean and median are hour + 5 up to about 0.002; an exact pass over 140M rows would
 * dominate the test's time), so that one run cannot fail by chance (the e_max promise itself is
 * tested statistically elsewhere). Runs with {@code spark.approx.mapSampleRecords=0} and {@code
 * mapSampleFactor=0} (every record written: the most the map side can hold). {@code
 * -Dnetapprox.spill.rows=N} changes the size.
 */
@Timeout(value = 1200, unit = TimeUnit.SECONDS)
class SpillLocalClusterTest {
    static final long ROWS = Long.getLong("netapprox.spill.rows", 140_000_000L);
    static final long EXECUTOR_BYTES = 512L << 20;

    /** Spark's reserve outside the unified memory pool (spark.testing would make it 0). */
    static final long RESERVED_BYTES = 300L << 20;

    static SparkSession spark;
    static TaskMetricsTally tasks;

    @BeforeAll
    static void start() throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-spill",
                        512,
                        "512m",
                        SparkTestSupport.conf(
                                "spark.testing.reservedMemory", Long.toString(RESERVED_BYTES),
                                // every record written (no pre-sample): the spill path at its
                                // largest; PreSampleLocalClusterTest covers the default
                                "spark.approx.mapSampleRecords", "0",
                                "spark.approx.mapSampleFactor", "0",
                                "spark.approx.faultDropOutgoing", "0.05",
                                "spark.approx.fetchTimeoutMs", "300000"));
        tasks = TaskMetricsTally.on(spark);
        SparkTestSupport.awaitExecutors(spark, 2);
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void queryOverSeveralTimesExecutorMemoryCompletes() throws Exception {
        Dataset<Row> input =
                spark.range(0, ROWS, 1, 8)
                        .selectExpr(
                                "cast(id % 24 as int) as hour",
                                "rand(3) * 10 + cast(id % 24 as double) as x");
        // the truth without an exact pass over the input (one would dominate the test's time):
        // hour h has every id = h (mod 24), and x is uniform on [h, h + 10], so the population's
        // mean and median are h + 5 up to about 0.002 (10 / sqrt(12 * 5.8M) standard deviations)
        Map<String, double[]> exact = new HashMap<>();
        for (int h = 0; h < 24; h++) {
            long rows = ROWS / 24 + (h < ROWS % 24 ? 1 : 0);
            exact.put("hour=" + h, new double[] {h + 5, rows, h + 5});
        }
        TaskMetricsTally.Snapshot before = tasks.settle().snapshot();
        long t0 = System.nanoTime();
        ApproxQuery q =
                ApproxQuery.on(input)
                        .groupBy("hour")
                        .avg("x")
                        .count()
                        .median("x")
                        .errorBound(0.05)
                        .seed(2)
                        .partitions(2);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        double seconds = (System.nanoTime() - t0) / 1e9;
        TaskMetricsTally.Snapshot query = tasks.settle().snapshot().minus(before);
        long shuffleBytes = query.bytesWritten();
        long spillBytes = query.bytesSpilled();
        long peakTaskMemory = query.peakTaskMemory();
        System.out.printf(
                "[spark] spill: %d rows, %.1f MB of approximate shuffle data (%.1fx an executor's"
                        + " 512 MB), %.1f MB spilled, largest task execution memory %.1f MB,"
                        + " %.0f s; metrics %s%n",
                ROWS,
                shuffleBytes / 1e6,
                (double) shuffleBytes / EXECUTOR_BYTES,
                spillBytes / 1e6,
                peakTaskMemory / 1e6,
                seconds,
                q.metrics().values());
        assertTrue(spillBytes > 0, "the map tasks spilled");
        // the unified pool: (heap - reserve) * spark.memory.fraction, heap at most 512 MB
        long pool = (long) ((EXECUTOR_BYTES - RESERVED_BYTES) * 0.6);
        assertTrue(
                peakTaskMemory > 0 && peakTaskMemory <= pool,
                "largest task execution memory " + peakTaskMemory + " within the pool " + pool);
        if (ROWS >= 80_000_000L) {
            assertTrue(
                    shuffleBytes > 2 * EXECUTOR_BYTES,
                    "shuffle data " + shuffleBytes + " bytes is several times 512 MB");
        }
        assertEquals(24, exact.size());
        for (Map.Entry<String, double[]> e : exact.entrySet()) {
            String g = e.getKey();
            double[] truth = e.getValue();
            Row avg = approx.get(g + "|avg(x)");
            Row count = approx.get(g + "|count");
            Row median = approx.get(g + "|median(x)");
            assertEquals((long) truth[1], count.getLong(10), g + ": population rows");
            assertEquals(truth[1], count.getDouble(4), 0.0, g + ": count is exact");
            double avgErr = Math.abs(avg.getDouble(4) - truth[0]) / truth[0];
            double medErr = Math.abs(median.getDouble(4) - truth[2]) / truth[2];
            assertTrue(avgErr <= 2 * 0.05, g + ": avg error " + avgErr);
            assertTrue(medErr <= 2 * 0.05, g + ": median error " + medErr);
            assertTrue(avg.getLong(9) < avg.getLong(10), g + ": a sample, not the whole group");
        }
        assertEquals(0L, q.metrics().values().get("groups below target"));
    }
}
