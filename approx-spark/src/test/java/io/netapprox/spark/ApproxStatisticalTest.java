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
        CoverageTally sums = new CoverageTally("avg(distance), sum(fare)");
        CoverageTally medians = new CoverageTally("median(fare)");
        long sampled = 0;
        long population = 0;
        int sampledGroups = 0;
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
                assertEquals(
                        e.getKey().startsWith("hour=17|") ? 0.02 : 0.05, a.getDouble(8), 1e-12);
                // quantiles: e_max bounds the value's relative error, planned by the quantile's
                // own variance
                boolean median = e.getKey().endsWith("median(fare)");
                (median ? medians : sums).add(e.getKey(), e.getValue().getDouble(4), a);
                if (e.getKey().endsWith("avg(distance)")) {
                    sampled += a.getLong(9);
                    population += a.getLong(10);
                    if (a.getLong(9) < a.getLong(10)) {
                        sampledGroups++;
                    }
                }
            }
        }
        System.out.printf(
                "[spark] coverage by aggregate: avg %.4f, sum %.4f; %d trials, sampled %.1f%% of"
                        + " rows, %d of %d group-trials sampled%n",
                sums.coverage("avg(distance)"),
                sums.coverage("sum(fare)"),
                TRIALS,
                100.0 * sampled / population,
                sampledGroups,
                TRIALS * 24);
        sums.printDiagnostics(List.of("avg(distance)", "sum(fare)"), TRIALS);
        assertTrue(
                sampledGroups >= TRIALS * 12, "most groups are really sampled: " + sampledGroups);
        // The promise (P(|est - truth| <= e_max |truth|) >= confidence) and the intervals'
        // coverage, at exact binomial floors (3 assertions share the false-alarm rate). avg and sum
        // of a group come from one sample (fare is linear in distance), so their misses come in
        // pairs: one independent unit. With submit=target the sample is a deterministic function
        // of the seeds (the first ceil(MSR*N) messages of each randomly permuted stratum,
        // delivered reliably). The trips' Pareto(2.5) distance tail is where approx-core's
        // intervals are weakest (docs/sampling.md, "Known limitations"; measured 0.9465 over 100
        // trials).
        double alpha = StatisticalFloor.FALSE_ALARM / 3;
        medians.assertPromise(conf, 1, alpha, false);
        sums.assertPromise(conf, 2, alpha, true);
    }
}
