package io.netapprox.core.engine;

import static io.netapprox.core.engine.TestPayloads.crc;
import static io.netapprox.core.engine.TestPayloads.fill;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code payloadAuth} and {@code preferAesGcm} reach the engine and behave as documented. */
class CryptoOptionsTest {
    private static final int N = 64;
    private static final int SIZE = 10_000;

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void headerOnlyTagsAndChaChaStillDeliverExactly() throws Exception {
        AtpConfig cfg = EngineTestSupport.loopback().payloadAuth(false).preferAesGcm(false).build();
        assertFalse(cfg.payloadAuth());
        assertFalse(cfg.preferAesGcm());
        assertFalse(cfg.toBuilder().build().payloadAuth(), "toBuilder keeps the option");
        long[] sent = new long[N];
        long[] got = new long[N];
        CompletableFuture<JobReport> done = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        try {
                            got[m.messageId()] = crc(m.content());
                        } finally {
                            m.release();
                        }
                    }

                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        done.complete(r);
                    }
                };
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(N, 1.0));
            ByteBuf buf = Unpooled.directBuffer(SIZE);
            try {
                for (int i = 0; i < N; i++) {
                    fill(buf, i, SIZE);
                    sent[i] = crc(buf);
                    assertEquals(SendResult.ACCEPTED, job.send(0, i, buf));
                }
            } finally {
                buf.release();
            }
            assertTrue(job.outcome().get(20, TimeUnit.SECONDS).isSuccess());
            assertEquals(N, done.get(5, TimeUnit.SECONDS).delivered());
            assertArrayEquals(sent, got);
            assertEquals(0, p.receiver.stats().get("dropped_auth"));
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void receiverRequiringPayloadTagsDropsHeaderOnlyDataAndCountsIt() throws Exception {
        AtpConfig sender =
                EngineTestSupport.loopback()
                        .payloadAuth(false)
                        .peerDeathTimeout(Duration.ofMillis(600))
                        .build();
        AtpConfig receiver = EngineTestSupport.loopback().payloadAuth(true).build();
        IncomingJobListener ignore =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        m.release();
                    }
                };
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(sender, receiver, ignore)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(4, 1.0));
            ByteBuf buf = Unpooled.directBuffer(SIZE);
            try {
                for (int i = 0; i < 4; i++) {
                    fill(buf, i, SIZE);
                    job.send(0, i, buf, 5, TimeUnit.SECONDS);
                }
            } catch (AtpJobFailedException expectedWhenTheJobDiesFirst) {
                // the job may already have failed; the outcome below says how
            } finally {
                buf.release();
            }
            ExecutionException e =
                    assertThrows(
                            ExecutionException.class, () -> job.outcome().get(5, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof AtpJobFailedException, String.valueOf(e.getCause()));
            // both ends learn at once that the configurations disagree (not a peer-death or idle
            // timeout)
            assertEquals(AtpStatus.PROTOCOL, ((AtpJobFailedException) e.getCause()).status());
            assertTrue(p.receiver.stats().get("dropped_auth") > 0, p.receiver.stats().toString());
            // ... and counts why: a header-only tag where payload tags are required (a counter
            // na_stats now exports)
            assertTrue(
                    p.receiver.stats().get("auth_policy_mismatches") > 0,
                    p.receiver.stats().toString());
        }
    }
}
