package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.time.Duration;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Approximate jobs under 30 % injected loss on the sender's datagrams, as the Kafka relay runs
 * them: one session, many jobs one after the other, each with several small groups (MSR = target /
 * candidates, candidates = 1.25 x target), MRDF off, the groups' messages submitted round-robin.
 * Every job completes with every group at its target, and the sender's engine puts at most a small
 * multiple of the payload on the wire (no job keeps the engines busy without end). Run in the
 * default mode and in the paper's mode (which the Java mode maps to {@code NA_MODE_PAPER}).
 */
class ApproximateUnderLossTest {
    /** Jobs per mode; -Dnetapprox.test.lossJobs=N soaks longer. */
    private static final int JOBS = Integer.getInteger("netapprox.test.lossJobs", 15);

    @ParameterizedTest
    @EnumSource(
            value = AtpMode.class,
            names = {"FULL", "PAPER"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void kafkaLikeApproximateJobsCompleteAt30PercentLoss(AtpMode mode) throws Exception {
        run(mode, Duration.ZERO);
    }

    /**
     * The same jobs with the relay's default deadline (1 s, the streaming-epoch sending policy:
     * planned samples first and escalating, extras in the lowest class) complete the same way.
     */
    @ParameterizedTest
    @EnumSource(
            value = AtpMode.class,
            names = {"FULL", "PAPER"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void kafkaLikeDeadlineJobsCompleteAt30PercentLoss(AtpMode mode) throws Exception {
        run(mode, Duration.ofSeconds(1));
    }

    private static void run(AtpMode mode, Duration deadline) throws Exception {
        Map<Integer, CompletableFuture<JobReport>> received = new ConcurrentHashMap<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        received.computeIfAbsent(r.jobId(), k -> new CompletableFuture<>())
                                .complete(r);
                    }
                };
        AtpConfig senderCfg =
                EngineTestSupport.loopback().mode(mode).faultInjection(0.3, 0.0, 7).build();
        AtpConfig receiverCfg = EngineTestSupport.loopback().mode(mode).build();
        SplittableRandom rnd = new SplittableRandom(11);
        long payloadBytes = 0;
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(senderCfg, receiverCfg, l)) {
            for (int j = 0; j < JOBS; j++) {
                int groups = 1 + rnd.nextInt(8);
                int[] sizes = new int[groups];
                JobSpec.Builder b = JobSpec.builder().mrdf(false).deadline(deadline);
                for (int g = 0; g < groups; g++) {
                    int target = 1 + rnd.nextInt(40);
                    sizes[g] = (int) Math.ceil(target * 1.25 - 1e-9);
                    b.addGroup(g, sizes[g], (double) target / sizes[g]);
                }
                OutgoingJob job = p.out.startJob(b.build());
                ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(256);
                try {
                    boolean more = true;
                    for (int i = 0; more; i++) {
                        more = false;
                        for (int g = 0; g < groups; g++) {
                            if (i >= sizes[g]) {
                                continue;
                            }
                            more |= i + 1 < sizes[g];
                            int len = 40 + rnd.nextInt(160);
                            buf.clear();
                            for (int k = 0; k < len; k++) {
                                buf.writeByte(k ^ i ^ g);
                            }
                            payloadBytes += len;
                            if (job.send(g, i, buf, 20, TimeUnit.SECONDS)
                                    == SendResult.NOT_NEEDED) {
                                more = false;
                                break;
                            }
                        }
                    }
                } finally {
                    buf.release();
                }
                JobReport sr = job.outcome().get(30, TimeUnit.SECONDS);
                JobReport rr =
                        received.computeIfAbsent(job.id(), k -> new CompletableFuture<>())
                                .get(10, TimeUnit.SECONDS);
                assertTrue(sr.isSuccess(), "job " + j + " sender: " + sr);
                assertTrue(rr.isSuccess(), "job " + j + " receiver: " + rr);
                assertEquals(groups, rr.groups().size());
                for (GroupReport g : rr.groups()) {
                    assertTrue(g.delivered() >= g.target(), "job " + j + ": " + g);
                }
            }
            long out = p.sender.stats().get("bytes_out");
            assertTrue(p.sender.stats().get("dropped_fault_out") > 0, "fault injection active");
            System.out.printf(
                    "%s, deadline %s: %d jobs, payload %d bytes, sender bytes_out %d (%.1fx)%n",
                    mode, deadline, JOBS, payloadBytes, out, (double) out / payloadBytes);
            // Per-datagram headers and tags about double a ~120-byte message; loss adds 1 / 0.7.
            assertTrue(out < 10 * payloadBytes, "sender bytes_out " + out + " for " + payloadBytes);
        }
    }
}
