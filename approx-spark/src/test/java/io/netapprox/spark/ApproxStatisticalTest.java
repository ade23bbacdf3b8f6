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
 * The promise is statistical, so it is tested statistically (local[2], real ATP over loopback with
 * 20% of the sender's datagrams dropped): over many seeded trials, every group's interval covers
 * the exact answer and the achieved error is within e_max at (close to) the stated confidence, and
 * each group's sample honours its MSR. Map side submits only the MSR target per group ({@code
 * spark.approx.submit=target}), so every trial really is a sample (an idle loopback would otherwise
 * deliver nearly everything).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ApproxStatisticalTest {
    /** {@code -Dnetapprox.stat.trials=N} runs more trials (to measure coverage more finely). */
    static final int TRIALS = Integer.getInteger("netapprox.stat.trials", 30);

    static SparkSession spark;
    static Dataset<Row> trips;

    @BeforeAll
    static void start() {
        spark =
                SparkTestSupport.local(
                        "approx-statistics",
                        SparkTestSupport.conf(
                                "spark.approx.submit", "target",
                                "spark.approx.recordsPerMessage", "8",
                                "spark.approx.faultDropOutgoing", "0.2"));
        trips = SparkTestSupport.trips(spark, 120_000, 4, 11).cache();
        trips.count();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void everyGroupWithinItsBoundAtTheStatedConfidenceOverSeededTrials() {
        double conf = 0.95;
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
        int coveredAvg = 0;
        int within = 0;
        int medianChecks = 0;
        int medianWithin = 0;
        int medianCovered = 0;
        long sampled = 0;
        long population = 0;
        int sampledGroups = 0;
        // diagnostics per group-aggregate: misses with the truth below / above the interval, the
        // relative error's sum and sum of squares (a bias shows as a mean error many SE from 0)
        Map<String, double[]> diag = new java.util.TreeMap<>();
        for (int t = 0; t < TRIALS; t++) {
            Map<String, Row> approx =
                    SparkTestSupport.byKey(
                            ApproxQuery.on(trips)
                                    .groupBy("hour")
                                    .avg("distance")
                                    .sum("fare")
                                    .median("fare")
                                    .errorBound(0.05)
                                    .errorBound("hour=17", 0.02)
                                    .confidence(conf)
                                    .seed(1000 + t)
                                    .run());
            assertEquals(exact.size(), approx.size());
            for (Map.Entry<String, Row> e : exact.entrySet()) {
                Row a = approx.get(e.getKey());
                double truth = e.getValue().getDouble(4);
                double est = a.getDouble(4);
                double eMax = a.getDouble(8);
                assertEquals(e.getKey().startsWith("hour=17|") ? 0.02 : 0.05, eMax, 1e-12);
                if (e.getKey().endsWith("median(fare)")) {
                    // quantiles: e_max bounds the value's relative error, planned by the quantile's
                    // own variance
                    medianChecks++;
                    medianWithin += Math.abs(est - truth) <= eMax * Math.abs(truth) ? 1 : 0;
                    medianCovered += a.getDouble(5) <= truth && truth <= a.getDouble(6) ? 1 : 0;
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
                if (a.getDouble(5) <= truth && truth <= a.getDouble(6)) {
                    covered++;
                    if (e.getKey().endsWith("avg(distance)")) {
                        coveredAvg++;
                    }
                }
                if (Math.abs(est - truth) <= eMax * Math.abs(truth)) {
                    within++;
                }
                if (e.getKey().endsWith("avg(distance)")) {
                    sampled += a.getLong(9);
                    population += a.getLong(10);
                    if (a.getLong(9) < a.getLong(10)) {
                        sampledGroups++;
                    }
                }
            }
        }
        double cov = (double) covered / checks;
        System.out.printf(
                "[spark] coverage by aggregate: avg %.4f, sum %.4f%n",
                (double) coveredAvg / (checks / 2), (double) (covered - coveredAvg) / (checks / 2));
        printDiagnostics(diag, TRIALS);
        double win = (double) within / checks;
        // binomial tolerance: 3 standard errors of a proportion at the nominal confidence
        double tol = 3 * Math.sqrt(conf * (1 - conf) / checks);
        System.out.printf(
                "[spark] %d trials x %d group-aggregates: coverage %.4f, within e_max %.4f (need >= %.4f);"
                        + " sampled %.1f%% of rows, %d of %d group-trials sampled%n",
                TRIALS,
                checks / TRIALS,
                cov,
                win,
                conf - tol,
                100.0 * sampled / population,
                sampledGroups,
                TRIALS * 24);
        double medTol = 3 * Math.sqrt(conf * (1 - conf) / medianChecks);
        System.out.printf(
                "[spark] median(fare): within e_max %.4f, coverage %.4f of %d (need >= %.4f)%n",
                (double) medianWithin / medianChecks,
                (double) medianCovered / medianChecks,
                medianChecks,
                conf - medTol);
        assertTrue(
                sampledGroups >= TRIALS * 12, "most groups are really sampled: " + sampledGroups);
        assertTrue(
                (double) medianWithin / medianChecks >= conf - medTol,
                "median within e_max " + medianWithin);
        // The promise (P(|est - truth| <= e_max |truth|) >= confidence) is asserted at the binomial
        // tolerance.
        assertTrue(win >= conf - tol, "within e_max " + win);
        // Interval coverage at the same tolerance (measured 0.944). With submit=target the sample
        // is a
        // deterministic function of the seeds (the first ceil(MSR*N) messages of each randomly
        // permuted stratum,
        // delivered reliably), so this is not flaky. The trips' Pareto(2.5) distance tail is where
        // approx-core's
        // intervals are weakest (docs/sampling.md, "Known limitations").
        assertTrue(cov >= conf - tol, "coverage " + cov);
    }

    /**
     * Where the intervals miss: per aggregate, misses below/above and the mean relative error with
     * its standard error; the five group-aggregates with the most misses.
     */
    static void printDiagnostics(Map<String, double[]> diag, int trials) {
        for (String agg : java.util.List.of("avg(distance)", "sum(fare)")) {
            double below = 0;
            double above = 0;
            double bias = 0;
            double se = 0;
            int groups = 0;
            for (Map.Entry<String, double[]> e : diag.entrySet()) {
                if (e.getKey().endsWith(agg)) {
                    double[] d = e.getValue();
                    below += d[0];
                    above += d[1];
                    double mean = d[2] / trials;
                    // the group's mean relative error, in units of its own standard error
                    double sd = Math.sqrt(Math.max(0, d[3] / trials - mean * mean));
                    double z = sd > 0 ? mean / (sd / Math.sqrt(trials)) : 0;
                    bias += z;
                    se += z * z;
                    groups++;
                }
            }
            System.out.printf(
                    "[spark] %s: %d misses with the truth below the interval, %d above, of %d;"
                            + " group mean errors in SE units: mean %.2f, rms %.2f over %d groups"
                            + " (no bias: mean 0 +- %.2f, rms 1)%n",
                    agg,
                    (long) below,
                    (long) above,
                    groups * trials,
                    bias / groups,
                    Math.sqrt(se / groups),
                    groups,
                    1 / Math.sqrt(groups));
        }
        diag.entrySet().stream()
                .sorted(
                        (x, y) ->
                                Double.compare(
                                        y.getValue()[0] + y.getValue()[1],
                                        x.getValue()[0] + x.getValue()[1]))
                .limit(5)
                .forEach(
                        e ->
                                System.out.printf(
                                        "[spark]   %s: coverage %.3f (%d below, %d above), sample fraction %.3f%n",
                                        e.getKey(),
                                        1 - (e.getValue()[0] + e.getValue()[1]) / trials,
                                        (long) e.getValue()[0],
                                        (long) e.getValue()[1],
                                        e.getValue()[4]));
    }
}
