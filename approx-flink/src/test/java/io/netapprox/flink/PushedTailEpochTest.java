package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.flink.api.common.JobID;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The tail epoch of a window (ended because the watermark passed the window's end) is pushed right
 * behind its manifest once the sender's TaskManager has a session with the receiver's (learned from
 * an earlier pull): it reaches the receiver without a DATA_REQUEST. Over 30 seeded jobs (2
 * TaskManagers x 2 slots, 30% outgoing loss, exactly the planned sample, a paced stream so windows
 * close one after another): every manifest's epoch arrives by exactly one path (pulled with a
 * request, pushed without one, or taken locally), some epochs arrive pushed, the answers stay
 * within their bound at the exact binomial floors ({@link StatisticalRuns}) and no group ends below
 * target. Before the push existed no epoch arrived without a request (approxEpochsPushed was 0).
 */
class PushedTailEpochTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int RUNS = 30;
    static final int WINDOWS = 6;
    static final double E_MAX = 0.05;

    @Test
    void tailEpochsArriveWithoutARequestAndStayWithinTheirBound() throws Exception {
        StatisticalRuns.Tally tally = StatisticalRuns.Tally.pooled(E_MAX);
        long pushedManifests = 0;
        long pushedArrived = 0;
        long pulled = 0;
        long manifests = 0;
        for (int run = 1; run <= RUNS; run++) {
            // paced: the windows close one after another, so later windows' tail epochs find the
            // sessions their predecessors' pulls opened
            Rides rides = new Rides(7100 + run, 120_000, WINDOWS, 6);
            JobID job =
                    StatisticalRuns.pacedRun(
                                    FLINK,
                                    tally,
                                    rides,
                                    StatisticalRuns.lossyRun(run),
                                    E_MAX,
                                    "push run " + run,
                                    false)
                            .job();
            long m = FLINK.senderCounter(job, "approxManifests");
            long pushed = FLINK.receiverCounter(job, "approxEpochsPushed");
            long requested = FLINK.receiverCounter(job, "approxEpochsPulled");
            long local = FLINK.receiverCounter(job, "approxLocalEpochs");
            // every epoch exactly once: a pushed epoch was never also requested
            assertEquals(m, pushed + requested + local, "epochs by path, run " + run);
            long announced = FLINK.senderCounter(job, "approxEpochsPushed");
            assertTrue(pushed <= announced, pushed + " pushed > " + announced + ", run " + run);
            pushedManifests += announced;
            pushedArrived += pushed;
            pulled += requested;
            manifests += m;
        }
        System.out.printf(
                "[flink-push] %d runs, %d manifests: %d epochs pushed (of %d announced as pushed),"
                        + " %d pulled:%s%n",
                RUNS, manifests, pushedArrived, pushedManifests, pulled, tally.describe());
        assertTrue(pushedArrived > 0, "no tail epoch arrived without a request");
        tally.assertRates(300);
    }
}
