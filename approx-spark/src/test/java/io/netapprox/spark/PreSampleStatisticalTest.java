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
 * The map-side pre-sample, statistically (local[2], real ATP over loopback, 20% of the sender's
 * datagrams dropped, {@code submit=target}, e_max 5%, 240,000 generated rows in 4 map outputs x 24
 * groups): with {@code spark.approx.mapSampleRecords=512} every map output writes only a uniform
 * sample of each large group (Spark's own shuffle write metrics count the records written: a
 * fraction of the input), the reducers sample that sample, and over {@code >= 100} seeded trials
 * the estimates - weighted by the whole share each sample stands for - are within e_max and the
 * intervals cover the exact answer at the stated confidence (binomial tolerance of 3 standard
 * errors); no group's plan asks more than a pre-sample holds.
 */
@Timeout(value = 1200, unit = TimeUnit.SECONDS)
class PreSampleStatisticalTest {
    /** {@code -Dnetapprox.presample.trials=N}. */
    static final int TRIALS = Integer.getInteger("netapprox.presample.trials", 100);

    static final long ROWS = 240_000;
    static SparkSession spark;
    static Dataset<Row> trips;
    static final AtomicLong recordsWritten = new AtomicLong();

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
        spark.sparkContext()
                .addSparkListener(
                        new SparkListener() {
                            @Override
                            public void onTaskEnd(SparkListenerTaskEnd e) {
                                if (e.taskMetrics() != null) {
                                    recordsWritten.addAndGet(
                                            e.taskMetrics().shuffleWriteMetrics().recordsWritten());
                                }
                            }
                        });
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
        int checks = 0;
        int covered = 0;
        int within = 0;
        int medianChecks = 0;
        int medianWithin = 0;
        int medianCovered = 0;
        long written = 0;
        long shortOfPlan = 0;
        long below = 0;
        long sampled = 0;
        long population = 0;
        Map<String, double[]> diag = new java.util.TreeMap<>();
        for (int t = 0; t < TRIALS; t++) {
            spark.sparkContext().listenerBus().waitUntilEmpty();
            long before = recordsWritten.get();
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
            spark.sparkContext().listenerBus().waitUntilEmpty();
            written += recordsWritten.get() - before;
            Map<String, Object> m = q.metrics().values();
            shortOfPlan += (Long) m.get("groups short of plan");
            below += (Long) m.get("groups below target");
            assertEquals(exact.size(), approx.size());
            for (Map.Entry<String, Row> e : exact.entrySet()) {
                Row a = approx.get(e.getKey());
                double truth = e.getValue().getDouble(4);
                double est = a.getDouble(4);
                boolean in = Math.abs(est - truth) <= eMax * Math.abs(truth);
                boolean cov = a.getDouble(5) <= truth && truth <= a.getDouble(6);
                if (e.getKey().endsWith("median(fare)")) {
                    medianChecks++;
                    medianWithin += in ? 1 : 0;
                    medianCovered += cov ? 1 : 0;
                    continue;
                }
                checks++;
                double[] d = diag.computeIfAbsent(e.getKey(), k -> new double[5]);
                double rel = (est - truth) / Math.abs(truth);
                d[0] += truth < a.getDouble(5) ? 1 : 0;
                d[1] += truth > a.getDouble(6) ? 1 : 0;
                d[2] += rel;
                d[3] += rel * rel;
                d[4] = (double) a.getLong(9) / a.getLong(10);
                within += in ? 1 : 0;
                covered += cov ? 1 : 0;
                if (e.getKey().endsWith("avg(distance)")) {
                    sampled += a.getLong(9);
                    population += a.getLong(10);
                }
            }
        }
        double tol = 3 * Math.sqrt(conf * (1 - conf) / checks);
        double medTol = 3 * Math.sqrt(conf * (1 - conf) / medianChecks);
        double writtenFraction = (double) written / ((double) ROWS * TRIALS);
        System.out.printf(
                "[spark] pre-sample (mapSampleRecords 512): %d trials, map side wrote %.1f%% of the"
                        + " input rows, reducers sampled %.1f%%; avg/sum within e_max %.4f, coverage"
                        + " %.4f of %d (need >= %.4f); median within e_max %.4f, coverage %.4f of %d"
                        + " (need >= %.4f); groups short of plan %d, below target %d%n",
                TRIALS,
                100 * writtenFraction,
                100.0 * sampled / population,
                (double) within / checks,
                (double) covered / checks,
                checks,
                conf - tol,
                (double) medianWithin / medianChecks,
                (double) medianCovered / medianChecks,
                medianChecks,
                conf - medTol,
                shortOfPlan,
                below);
        ApproxStatisticalTest.printDiagnostics(diag, TRIALS);
        assertTrue(writtenFraction < 0.5, "the map side wrote a sample: " + writtenFraction);
        assertEquals(0, shortOfPlan, "no plan asked more than a pre-sample holds");
        assertEquals(0, below, "every share met its target");
        assertTrue((double) within / checks >= conf - tol, "within e_max " + within);
        assertTrue((double) covered / checks >= conf - tol, "coverage " + covered);
        assertTrue(
                (double) medianWithin / medianChecks >= conf - medTol,
                "median within e_max " + medianWithin);
        assertTrue(
                (double) medianCovered / medianChecks >= conf - medTol,
                "median coverage " + medianCovered);
    }
}
