package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
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
 * The map-side pre-sample, statistically (local[2], real ATP over loopback, 20% of the sender's
 * datagrams dropped, {@code submit=target}, e_max 5%, 240,000 generated rows in 4 map outputs x 24
 * groups): with {@code spark.approx.mapSampleRecords=512} every map output keeps a uniform sample
 * of each large group and writes the part of it sized by the share's own plan ({@code
 * mapSampleFactor} 2; Spark's own shuffle write metrics count the records written: a fraction of
 * the input), the reducers sample that sample, and over {@code >= 100} seeded trials the estimates
 * - weighted by the whole share each sample stands for - are within e_max and the intervals cover
 * the exact answer at the stated confidence (exact binomial floors, {@link StatisticalFloor}); no
 * group's plan asks more than a map output wrote.
 */
@Timeout(value = 1200, unit = TimeUnit.SECONDS)
class PreSampleStatisticalTest {
    /** {@code -Dnetapprox.presample.trials=N}. */
    static final int TRIALS = Integer.getInteger("netapprox.presample.trials", 100);

    static final long ROWS = 240_000;
    static SparkSession spark;
    static Dataset<Row> trips;
    static TaskMetricsTally tasks;

    @BeforeAll
    static void start() {
        spark =
                SparkTestSupport.local(
                        "approx-presample",
                        SparkTestSupport.conf(
                                "spark.approx.submit", "target",
                                "spark.approx.recordsPerMessage", "8",
                                "spark.approx.mapSampleRecords", "512",
                                "spark.approx.faultDropOutgoing", "0.2"));
        tasks = TaskMetricsTally.on(spark);
        // hourly groups of 10,000 rows (2,500 per map output, so every share is pre-sampled),
        // lognormal(sigma 0.5) distances scaled by hour, fares linear in distance plus noise: a
        // moderately skewed population on which approx-core's intervals are calibrated (the taxi
        // trips' Pareto(2.5) tail, where they under-cover at small samples, is
        // ApproxStatisticalTest's)
        trips =
                spark.range(0, ROWS, 1, 4)
                        .selectExpr(
                                "cast(id % 24 as int) as hour",
                                "exp(randn(7) * 0.5) * (1 + cast(id % 24 as double) / 4) as"
                                        + " distance")
                        .selectExpr("hour", "distance", "3 + 2.5 * distance + rand(8) * 2 as fare")
                        .cache();
        trips.count();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void preSampledSharesKeepTheBoundAndTheCoverageOverSeededTrials() throws Exception {
        double conf = 0.95;
        double eMax = 0.05;
        Map<String, Row> exact =
                SparkTestSupport.byKey(
                        ApproxQuery.on(trips)
                                .groupBy("hour")
                                .avg("distance")
                                .sum("fare")
                                .median("fare")
                                .exact()
                                .run());
        CoverageTally sums = new CoverageTally("pre-sampled avg(distance), sum(fare)");
        CoverageTally medians = new CoverageTally("pre-sampled median(fare)");
        long written = 0;
        long shortOfPlan = 0;
        long below = 0;
        long sampled = 0;
        long population = 0;
        for (int t = 0; t < TRIALS; t++) {
            TaskMetricsTally.Snapshot before = tasks.settle().snapshot();
            ApproxQuery q =
                    ApproxQuery.on(trips)
                            .groupBy("hour")
                            .avg("distance")
                            .sum("fare")
                            .median("fare")
                            .errorBound(eMax)
                            .confidence(conf)
                            .seed(5000 + t);
            Map<String, Row> approx = SparkTestSupport.byKey(q.run());
            written += tasks.settle().snapshot().minus(before).recordsWritten();
            Map<String, Object> m = q.metrics().values();
            shortOfPlan += (Long) m.get("groups short of plan");
            below += (Long) m.get("groups below target");
            assertEquals(exact.size(), approx.size());
            for (Map.Entry<String, Row> e : exact.entrySet()) {
                Row a = approx.get(e.getKey());
                boolean median = e.getKey().endsWith("median(fare)");
                (median ? medians : sums).add(e.getKey(), e.getValue().getDouble(4), a);
                if (e.getKey().endsWith("avg(distance)")) {
                    sampled += a.getLong(9);
                    population += a.getLong(10);
                }
            }
        }
        double writtenFraction = (double) written / ((double) ROWS * TRIALS);
        System.out.printf(
                "[spark] pre-sample (mapSampleRecords 512): %d trials, map side wrote %.1f%% of the"
                        + " input rows, reducers sampled %.1f%%; groups short of plan %d, below"
                        + " target %d%n",
                TRIALS, 100 * writtenFraction, 100.0 * sampled / population, shortOfPlan, below);
        sums.printDiagnostics(List.of("avg(distance)", "sum(fare)"), TRIALS);
        assertTrue(writtenFraction < 0.5, "the map side wrote a sample: " + writtenFraction);
        assertEquals(0, shortOfPlan, "no plan asked more than a pre-sample holds");
        assertEquals(0, below, "every share met its target");
        // 4 assertions share the false-alarm rate; avg and sum of a group share one sample
        double alpha = StatisticalFloor.FALSE_ALARM / 4;
        sums.assertPromise(conf, 2, alpha, true);
        medians.assertPromise(conf, 1, alpha, true);
    }
}
