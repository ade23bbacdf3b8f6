package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bound with {@code approx.flushInterval}: senders end an epoch every 50 ms while windows are
 * open, so each (window, group) is split into several strata per sender (shipped and pulled before
 * the window closes), each sampled and weighted on its own. Over 30 seeded jobs (2 TaskManagers x 2
 * slots, 30% outgoing loss, exactly the planned sample), the sampled (window, group) averages
 * within e_max and those covered by their intervals each reach the exact binomial floor of 0.95
 * ({@link StatisticalRuns}), sums agree, counts and populations are exact, no group ends below
 * target, and the flush really split the windows (more epochs than windows, flush-ended epochs
 * counted).
 */
class FlushStatisticalTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int RUNS = 30;
    static final int WINDOWS = 5;
    static final double E_MAX = 0.05;

    @Test
    void windowsShippedInFlushedEpochsStayWithinTheirBound() throws Exception {
        StatisticalRuns.Tally tally = StatisticalRuns.Tally.pooled(E_MAX);
        long flushEpochs = 0;
        long epochs = 0;
        for (int run = 1; run <= RUNS; run++) {
            Configuration conf = StatisticalRuns.lossyRun(run);
            conf.setString("approx.flushInterval", "50 ms");
            // paced so that the stream lasts about 1 s: each window spans several flush periods
            Rides rides = new Rides(9000 + run, 120_000, WINDOWS, 6);
            FlinkCluster.Run done =
                    StatisticalRuns.pacedRun(
                            FLINK, tally, rides, conf, E_MAX, "flush run " + run, true);
            flushEpochs += FLINK.senderCounter(done.job(), "approxFlushEpochs");
            epochs += FLINK.senderCounter(done.job(), "approxEpochs");
        }
        System.out.printf(
                "[flink-flush] %d runs, %d epochs (%d ended by the flush timer):%s%n",
                RUNS, epochs, flushEpochs, tally.describe());
        // without the flush each sender ends about one epoch per window
        long perWindow = (long) RUNS * FlinkCluster.PARALLELISM * WINDOWS;
        assertTrue(flushEpochs > perWindow, "flush epochs " + flushEpochs + " <= " + perWindow);
        tally.assertRates(300);
    }
}
