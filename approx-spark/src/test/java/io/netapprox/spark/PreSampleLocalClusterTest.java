package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * The map side writes what the sample needs, not the input: on local-cluster[2,1,1024] (executor
 * JVMs, real ATP between them, 5% of datagrams dropped) an approximate query over {@code ROWS}
 * generated rows in 8 map tasks x 24 groups, with the default {@code spark.approx.mapSampleRecords}
 * (8192, the cap) and {@code mapSampleFactor} (2). Spark's own shuffle write metrics (records and
 * bytes, summed over the map tasks) are at most the pre-sample's ceiling - {@code 8 x 24 x (2K + 6
 * sqrt(2K))} records, at the records' encoded size plus framing - and at most {@code 2 x factor x
 * M} times the records the plan read (the rows sampled: each share writes twice what the plan would
 * ask were it the whole group, which for 8 alike shares is about 8 times what it asks of each), far
 * below the input; the answer is right (counts exact, averages within e_max of the truth known by
 * construction) and no group is short of its plan.
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
class PreSampleLocalClusterTest {
    static final long ROWS = Long.getLong("netapprox.presample.rows", 6_000_000L);
    static final int MAPS = 8;
    static final int GROUPS = 24;

    static SparkSession spark;
    static TaskMetricsTally tasks;

    @BeforeAll
    static void start() throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-presample-cluster",
                        SparkTestSupport.conf("spark.approx.faultDropOutgoing", "0.05"));
        tasks = TaskMetricsTally.on(spark);
        SparkTestSupport.awaitExecutors(spark, 2);
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    /** The default {@code spark.approx.mapSampleRecords}. */
    static final long K = 8192;

    /** The most records the pre-sample writes: {@code 2K + 6 sqrt(2K)} per (map output, group). */
    static long preSampleCeiling() {
        return (long) (MAPS * GROUPS * (2 * K + 6 * Math.sqrt(2 * K)));
    }

    /** {@code ROWS} rows in {@code MAPS} map tasks: group {@code hour}, x uniform on [h, h+10]. */
    static Dataset<Row> input(int seed) {
        return spark.range(0, ROWS, 1, MAPS)
                .selectExpr(
                        "cast(id % " + GROUPS + " as int) as hour",
                        "rand(" + seed + ") * 10 + cast(id % " + GROUPS + " as double) as x");
    }

    @Test
    void shuffleWriteIsBoundedByThePreSampleNotTheInput() throws Exception {
        Dataset<Row> input = input(5);
        TaskMetricsTally.Snapshot before = tasks.settle().snapshot();
        ApproxQuery q = avgSumCount(input, 4); // sampled: the session has no exact partials
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        TaskMetricsTally.Snapshot query = tasks.settle().snapshot().minus(before);
        long written = query.recordsWritten();
        long writtenBytes = query.bytesWritten();
        long sampled = (Long) q.metrics().values().get("rows sampled");
        long ceiling = preSampleCeiling();
        // a record: 2 doubles (avg and sum of x share no column here) = 16 bytes; a message of 32
        // records adds 8 bytes (its length and record count); each segment a table of a few dozen
        // bytes per group
        long bytesCeiling =
                ceiling * 16 + (ceiling / 32 + MAPS * GROUPS) * 8 + MAPS * 2 * (GROUPS * 100 + 16);
        System.out.printf(
                "[spark] pre-sample on local-cluster: %d input rows, map side wrote %d records"
                        + " (%.2fx the %d rows sampled; ceiling %d) and %.2f MB (ceiling %.2f MB,"
                        + " %.3f%% of the input's 16 bytes a row); metrics %s%n",
                ROWS,
                written,
                (double) written / sampled,
                sampled,
                ceiling,
                writtenBytes / 1e6,
                bytesCeiling / 1e6,
                100.0 * writtenBytes / (16.0 * ROWS),
                q.metrics().values());
        // each share writes mapSampleFactor (2) times what the plan would ask of it as the whole
        // group: for MAPS alike shares about 2 x MAPS times what the plan asks of each, more where
        // the plan asks only its minimum of every share (27.5x measured: 343,810 records for 12,488
        // sampled). Before it was sized by the plan the map side wrote the whole pre-sample,
        // 2,997,695 records (~240x)
        assertTrue(sampled > 0, "a sample was read");
        assertTrue(
                written >= sampled && written <= 4L * MAPS * sampled,
                "records written " + written + " within [1, 32]x the " + sampled + " sampled");
        assertTrue(written <= ceiling, "records written " + written + " <= " + ceiling);
        assertTrue(
                writtenBytes <= bytesCeiling,
                "bytes written " + writtenBytes + " <= " + bytesCeiling);
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
        // bytes saved are against what an exact shuffle would move - every row, one double (x,
        // which avg and sum read) plus its share of a message's framing - not against the
        // pre-sample the map side wrote
        long exactBytes = (Long) m.get("exact bytes");
        assertTrue(
                exactBytes >= 8L * ROWS && exactBytes <= 9L * ROWS,
                "exact bytes " + exactBytes + " for " + ROWS + " rows of 8 bytes");
        assertTrue(exactBytes > writtenBytes, "the pre-sample is smaller than every row");
        assertEquals(exactBytes - (Long) m.get("bytes read"), m.get("bytes saved vs exact"));
    }

    /** avg, sum and count of x per hour, e_max 5%, on 2 reduce partitions. */
    static ApproxQuery avgSumCount(Dataset<Row> input, long seed) {
        return ApproxQuery.on(input)
                .groupBy("hour")
                .avg("x")
                .sum("x")
                .count()
                .errorBound(0.05)
                .seed(seed)
                .partitions(2);
    }

    /** hour=h -> Spark's own {@code (hour, avg(x), sum(x), count(x))}. */
    static Map<String, Row> sparksAnswer(Dataset<Row> input) {
        Map<String, Row> truth = new java.util.HashMap<>();
        for (Row r :
                input.groupBy("hour")
                        .agg(
                                org.apache.spark.sql.functions.avg("x"),
                                org.apache.spark.sql.functions.sum("x"),
                                org.apache.spark.sql.functions.count("x"))
                        .collectAsList()) {
            truth.put("hour=" + r.getInt(0), r);
        }
        return truth;
    }

    /**
     * Exact partials with the pre-sample on: avg, sum and count of every group equal Spark's own
     * exact aggregation (up to floating-point rounding, which the interval covers and is no wider
     * than), while the median in the same query still comes from a sample of the pre-sample.
     */
    @Test
    void avgSumAndCountAreExactFromThePartialsWhileTheMedianIsSampled() throws Exception {
        Dataset<Row> input = input(6).cache();
        Map<String, Row> truth = sparksAnswer(input);
        TaskMetricsTally.Snapshot before = tasks.settle().snapshot();
        ApproxQuery q =
                ApproxQuery.on(input)
                        .groupBy("hour")
                        .avg("x")
                        .sum("x")
                        .count()
                        .median("x")
                        .errorBound(0.05)
                        .exactPartials(true)
                        .seed(6)
                        .partitions(2);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        long written = tasks.settle().snapshot().minus(before).recordsWritten();
        System.out.printf(
                "[spark] exact partials on local-cluster: %d rows, map side wrote %d records;"
                        + " with a median: %s%n",
                ROWS, written, q.metrics().values());
        assertTrue(written <= preSampleCeiling(), "the pre-sample is on: " + written);
        // sized by the median's plan, as above
        long sampled = (Long) q.metrics().values().get("rows sampled");
        assertTrue(
                written >= sampled && written <= 4L * MAPS * sampled,
                "records written " + written + " within [1, 32]x the " + sampled + " sampled");
        assertEquals(0L, q.metrics().values().get("groups short of plan"));
        for (int h = 0; h < GROUPS; h++) {
            String g = "hour=" + h;
            Row exact = truth.get(g);
            long n = exact.getLong(3);
            assertExact(g + " avg", exact.getDouble(1), approx.get(g + "|avg(x)"));
            assertExact(g + " sum", exact.getDouble(2), approx.get(g + "|sum(x)"));
            assertExact(g + " count", n, approx.get(g + "|count"));
            assertEquals(n, approx.get(g + "|avg(x)").getLong(10), g + ": population rows");
            Row median = approx.get(g + "|median(x)");
            assertTrue(median.getLong(9) > 0 && median.getLong(9) < n, "the median is sampled");
            assertTrue(median.getDouble(5) < median.getDouble(6), "with an interval");
        }
        assertEquals(0L, q.metrics().values().get("groups below target"));
        input.unpersist();
    }

    /**
     * A query of only avg/sum/count with exact partials samples nothing, so it is Spark's own
     * aggregation: the map side writes one partial record per (map task, group) - not a pre-sample
     * of up to 2K records per (map task, group), as before (regression: 43 MB written and unread in
     * benchmarks/spark/scale.sh) - and every answer is Spark's, exact.
     */
    @Test
    void aQueryThatNeedsNoSampleIsSparksOwnAggregation() throws Exception {
        Dataset<Row> input = input(7).cache();
        Map<String, Row> truth = sparksAnswer(input);
        TaskMetricsTally.Snapshot before = tasks.settle().snapshot();
        ApproxQuery q = avgSumCount(input, 7).exactPartials(true);
        Map<String, Row> answer = SparkTestSupport.byKey(q.run());
        TaskMetricsTally.Snapshot query = tasks.settle().snapshot().minus(before);
        System.out.printf(
                "[spark] avg/sum/count with exact partials on local-cluster: %d rows, map side"
                        + " wrote %d records, %d bytes%n",
                ROWS, query.recordsWritten(), query.bytesWritten());
        assertTrue(
                query.recordsWritten() <= (long) MAPS * GROUPS,
                "partial aggregation: records written "
                        + query.recordsWritten()
                        + " <= "
                        + MAPS * GROUPS);
        assertEquals(null, q.metrics(), "no approximate shuffle");
        assertEquals(GROUPS * 3, answer.size(), "one row per group and aggregate");
        for (int h = 0; h < GROUPS; h++) {
            String g = "hour=" + h;
            Row exact = truth.get(g);
            long n = exact.getLong(3);
            double[] spark = {exact.getDouble(1), exact.getDouble(2), n};
            String[] labels = {"|avg(x)", "|sum(x)", "|count"};
            for (int i = 0; i < 3; i++) {
                Row a = answer.get(g + labels[i]);
                String what = g + labels[i];
                assertEquals(spark[i], a.getDouble(4), 1e-12 * Math.abs(spark[i]), what);
                assertEquals(a.getDouble(4), a.getDouble(5), 0.0, what + ": low");
                assertEquals(a.getDouble(4), a.getDouble(6), 0.0, what + ": high");
                assertEquals(n, a.getLong(9), what + ": sample rows (every row)");
                assertEquals(n, a.getLong(10), what + ": population rows");
                assertEquals(false, a.getBoolean(11), what + ": not approximate");
                assertEquals(0.05, a.getDouble(8), 0.0, what + ": e_max");
            }
        }
        input.unpersist();
    }

    /**
     * The answer is Spark's up to rounding: its interval contains Spark's value and is as narrow as
     * a summation's rounding error.
     */
    static void assertExact(String what, double spark, Row a) {
        double est = a.getDouble(4);
        double low = a.getDouble(5);
        double high = a.getDouble(6);
        assertTrue(
                low <= spark && spark <= high,
                what + ": " + spark + " in [" + low + ", " + high + "]");
        assertTrue(
                high - low <= 1e-9 * Math.abs(est),
                what + ": interval [" + low + ", " + high + "] is rounding, not sampling");
        assertEquals(spark, est, 1e-9 * Math.abs(spark), what);
    }
}
