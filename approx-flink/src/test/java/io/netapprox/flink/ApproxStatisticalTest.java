package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The statistical promise, tested statistically: over 30 seeded jobs on the MiniCluster (2
 * TaskManagers, ATP between them with 30% of every engine's outgoing datagrams dropped), every
 * sampled (window, group)'s average (and its sum, M times the average with M exact) is within e_max
 * of the truth, and its interval covers it, at the stated rate (>= 0.93, i.e. 0.95 minus about 3
 * binomial standard errors); no group ends below its target and no epoch hits its deadline. Senders
 * submit exactly the planned sample ({@code approx.submit=target}; lost messages are
 * retransmitted), so the bound is tested at the planned rate, not at whatever more the engine
 * delivered.
 */
class ApproxStatisticalTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int RUNS = 30;
    static final double E_MAX = 0.05;

    @Test
    void windowsAreWithinTheirBoundAtTheStatedRateUnderLoss() throws Exception {
        int checks = 0;
        int within = 0;
        int covered = 0;
        int censusChecks = 0;
        long sampled = 0;
        long population = 0;
        for (int run = 1; run <= RUNS; run++) {
            Rides rides = new Rides(1000 + run, 240_000, 5, 6);
            Configuration conf = new Configuration();
            conf.setString("approx.enabled", "true");
            conf.setString("approx.faultDropOutgoing", "0.3");
            conf.setString("approx.faultSeed", String.valueOf(run));
            conf.setString("approx.submit", "target"); // the sample is exactly the planned one
            conf.setString("pipeline.auto-watermark-interval", "20 ms");
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(FlinkCluster.PARALLELISM);
            DataStream<WindowEstimate> out =
                    Approx.of(rides.stream(env).rebalance())
                            .stratifyBy(Ride::getGroup)
                            .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                            .errorBound(E_MAX)
                            .confidence(0.95)
                            .aggregate(
                                    Aggregate.avg("value", Ride::getValue),
                                    Aggregate.sum("value", Ride::getValue),
                                    Aggregate.count());
            FlinkCluster.Run done = FlinkCluster.collect(env, out, "statistical run " + run);
            List<WindowEstimate> result = done.results();
            JobID job = done.job();
            Map<Long, Map<Integer, double[]>> truth = rides.truth();
            Map<String, WindowEstimate> byKey = new java.util.HashMap<>();
            for (WindowEstimate e : result) {
                if (e.aggregate.startsWith("avg")) {
                    byKey.put(e.windowStart + "/" + e.group, e);
                }
            }
            int answers = 0;
            for (WindowEstimate e : result) {
                double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
                assertEquals((long) t[0], e.populationRecords, e.toString());
                if (e.aggregate.equals("count")) {
                    assertEquals(t[0], e.estimate, e.toString());
                    answers++;
                    sampled += e.sampleRecords;
                    population += e.populationRecords;
                    continue;
                }
                boolean avg = e.aggregate.startsWith("avg");
                double exact = avg ? t[1] / t[0] : t[1];
                if (e.sampleRecords == e.populationRecords) {
                    censusChecks++;
                    assertEquals(exact, e.estimate, 1e-9 * Math.abs(exact), e.toString());
                    continue;
                }
                if (!avg) {
                    // sum = M * avg with M exact: the same event as the average's, checked for
                    // consistency
                    WindowEstimate a = byKey.get(e.windowStart + "/" + e.group);
                    assertEquals(a.covers(t[1] / t[0]), e.covers(exact), e.toString());
                    assertEquals(
                            e.populationRecords * a.estimate,
                            e.estimate,
                            1e-9 * Math.abs(e.estimate));
                    continue;
                }
                checks++;
                if (e.relativeError(exact) <= E_MAX) {
                    within++;
                }
                if (e.covers(exact)) {
                    covered++;
                }
            }
            assertEquals(truth.values().stream().mapToInt(Map::size).sum(), answers, "run " + run);
            assertEquals(
                    0,
                    FLINK.receiverCounter(job, "approxGroupsBelowTarget"),
                    "groups below target, run " + run);
            assertEquals(
                    0,
                    FLINK.receiverCounter(job, "approxEpochDeadlines"),
                    "epoch deadlines, run " + run);
            assertTrue(
                    FLINK.receiverCounter(job, "approxMessagesReceived") > 0,
                    "nothing went over ATP, run " + run);
        }
        double withinRate = (double) within / checks;
        double coverage = (double) covered / checks;
        System.out.printf(
                "[flink-stat] %d runs: %d sampled (window, group) averages, within e_max %.3f, CI coverage"
                        + " %.3f (sums agree);"
                        + " %d census checks exact; %.1f%% of records arrived%n",
                RUNS, checks, withinRate, coverage, censusChecks, 100.0 * sampled / population);
        assertTrue(checks >= 600, "too few sampled (window, group)s to test: " + checks);
        assertTrue(withinRate >= 0.93, "within e_max " + withinRate);
        assertTrue(coverage >= 0.93, "coverage " + coverage);
    }
}
