package io.netapprox.flink;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The statistical promise, tested statistically: over 30 seeded jobs on the MiniCluster (2
 * TaskManagers, ATP between them with 30% of every engine's outgoing datagrams dropped, senders
 * submit exactly the planned sample), the sampled (window, group) averages within e_max of the
 * truth, and those covered by their interval, each reach the exact binomial floor of 0.95 ({@link
 * StatisticalRuns}); sums agree with their averages, counts and populations are exact, no group
 * ends below its target and no epoch hits its deadline.
 */
class ApproxStatisticalTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int RUNS = 30;
    static final double E_MAX = 0.05;

    @Test
    void windowsAreWithinTheirBoundAtTheStatedRateUnderLoss() throws Exception {
        StatisticalRuns.Tally tally = StatisticalRuns.Tally.pooled(E_MAX);
        for (int run = 1; run <= RUNS; run++) {
            Rides rides = new Rides(1000 + run, 240_000, 5, 6);
            StreamExecutionEnvironment env =
                    StatisticalRuns.environment(StatisticalRuns.lossyRun(run));
            DataStream<WindowEstimate> out =
                    StatisticalRuns.avgSumCount(rides.stream(env).rebalance(), E_MAX);
            FlinkCluster.Run done = FlinkCluster.collect(env, out, "statistical run " + run);
            tally.add(done.results(), rides.truth(), "run " + run);
            StatisticalRuns.assertRunHealthy(FLINK, done.job(), "run " + run, false);
        }
        System.out.printf("[flink-stat] %d runs:%s%n", RUNS, tally.describe());
        tally.assertRates(600);
    }
}
