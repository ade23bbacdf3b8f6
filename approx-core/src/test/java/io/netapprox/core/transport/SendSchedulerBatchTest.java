package io.netapprox.core.transport;

import static io.netapprox.core.engine.TestPayloads.crc;
import static io.netapprox.core.engine.TestPayloads.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpEndpoint;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.IncomingJobListener;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendBatch;
import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SendScheduler#sendAll} gathers small messages into {@link SendBatch}es (one JNI crossing
 * and engine lock per batch, {@code na_job_submit_batch}) and sends larger ones singly: the bytes,
 * the order of an exact group, the count it returns, and an approximate job that the receiver ends
 * early (the rest of a batch is then not needed, not an error).
 */
class SendSchedulerBatchTest {
    private static final long TIMEOUT_S = 60;

    /** Sizes from 1 B to 9000 B: most are batched, every tenth goes alone between batches. */
    private static int sizeOf(int id) {
        return id % 10 == 9 ? 4097 + (id * 131) % 5000 : 1 + (id * 37) % 600;
    }

    private static final class Received implements IncomingJobListener {
        final List<Integer> ids = new ArrayList<>();
        final List<Long> crcs = new ArrayList<>();
        final CompletableFuture<JobReport> done = new CompletableFuture<>();

        @Override
        public void onMessage(AtpMessage m) {
            try {
                synchronized (this) {
                    ids.add(m.messageId());
                    crcs.add(crc(m.content()));
                }
            } finally {
                m.release();
            }
        }

        @Override
        public void onJobDone(AtpSession s, JobReport r) {
            done.complete(r);
        }
    }

    /** Runs {@code body} with a session from a fresh sender endpoint to a receiver that records. */
    private static void withSession(Received rx, SessionBody body) throws Exception {
        AtpConfig cfg =
                AtpConfig.builder().bindAddress("127.0.0.1").lineRateBps(40_000_000_000L).build();
        try (AtpEndpoint a = AtpEndpoint.open(cfg);
                AtpEndpoint b = AtpEndpoint.open(cfg)) {
            long sid = new SplittableRandom(5).nextLong();
            byte[] key = new byte[32];
            new SplittableRandom(6).nextBytes(key);
            AtpSession out =
                    a.openSession(
                            sid, key, new InetSocketAddress("127.0.0.1", b.localPort()), true);
            b.openSession(sid, key, new InetSocketAddress("127.0.0.1", a.localPort()), false, rx);
            body.run(out);
        }
    }

    /** A job started and sent by {@link #startAndSendAll}: the job and the messages that went. */
    private record Sent(OutgoingJob job, long count) {}

    /**
     * Starts {@code spec} on {@code out} and sends it in SendScheduler order with {@code writer}.
     */
    private static Sent startAndSendAll(
            AtpSession out, JobSpec spec, SendScheduler.MessageWriter writer) throws Exception {
        OutgoingJob job = out.startJob(spec);
        return new Sent(
                job, new SendScheduler(spec).sendAll(job, writer, TIMEOUT_S, TimeUnit.SECONDS));
    }

    @FunctionalInterface
    private interface SessionBody {
        void run(AtpSession out) throws Exception;
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void batchedAndSingleMessagesArriveWholeAndInOrder() throws Exception {
        int n = 3000;
        Received rx = new Received();
        withSession(
                rx,
                out -> {
                    Sent s =
                            startAndSendAll(
                                    out,
                                    JobSpec.of(n, 1.0),
                                    (g, i, buf) -> fill(buf, i, sizeOf(i)));
                    OutgoingJob job = s.job();
                    long sent = s.count();
                    assertEquals(n, sent, "every message of an exact job is sent");
                    assertTrue(job.outcome().get(TIMEOUT_S, TimeUnit.SECONDS).isSuccess());
                    assertEquals(n, rx.done.get(TIMEOUT_S, TimeUnit.SECONDS).delivered());
                });
        ByteBuf expect = Unpooled.directBuffer(9100);
        try {
            synchronized (rx) {
                assertEquals(n, rx.ids.size());
                for (int k = 0; k < n; k++) {
                    assertEquals(k, rx.ids.get(k), "an exact group arrives in order");
                    fill(expect, k, sizeOf(k));
                    assertEquals(crc(expect), rx.crcs.get(k), "bytes of message " + k);
                }
            }
        } finally {
            expect.release();
        }
    }

    /**
     * The receiver holds its 1% long before 20,000 small messages are submitted and ends the job: a
     * batch then finds no job (NA_ERR_NOT_FOUND), which is NOT_NEEDED, and sendAll returns the
     * count that went (at least the target, not all).
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void anApproximateJobEndedEarlyStopsTheBatchesWithoutError() throws Exception {
        int n = 20_000;
        Received rx = new Received();
        withSession(
                rx,
                out -> {
                    Sent s =
                            startAndSendAll(
                                    out, JobSpec.of(n, 0.01), (g, i, buf) -> fill(buf, i, 100));
                    OutgoingJob job = s.job();
                    long sent = s.count();
                    JobReport sr = job.outcome().get(TIMEOUT_S, TimeUnit.SECONDS);
                    JobReport rr = rx.done.get(TIMEOUT_S, TimeUnit.SECONDS);
                    System.out.printf(
                            "MSR 0.01 of %d: sendAll sent %d, receiver delivered %d%n",
                            n, sent, rr.delivered());
                    assertTrue(sr.isSuccess(), sr.toString());
                    assertTrue(rr.isSuccess(), rr.toString());
                    assertTrue(rr.delivered() >= 200, rr.toString());
                    assertTrue(sent >= rr.delivered() && sent <= n, "sent " + sent);
                });
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void lastAcceptedCountsWhatASendTook() throws Exception {
        Received rx = new Received();
        withSession(
                rx,
                out -> {
                    OutgoingJob job = out.startJob(JobSpec.of(10, 1.0));
                    SendBatch batch = new SendBatch(16);
                    ByteBuf b = Unpooled.directBuffer(64).writeLong(7);
                    try {
                        for (int i = 0; i < 10; i++) {
                            batch.add(0, i, b);
                        }
                        assertEquals(SendResult.ACCEPTED, job.send(batch));
                        assertEquals(10, batch.lastAccepted());
                        assertEquals(0, batch.size());
                        assertTrue(job.outcome().get(TIMEOUT_S, TimeUnit.SECONDS).isSuccess());
                        batch.add(0, 0, b);
                        assertEquals(SendResult.NOT_NEEDED, job.send(batch)); // job done
                        assertEquals(0, batch.lastAccepted());
                        assertEquals(0, batch.size());
                        // An entry the engine refuses (group 5 of a one-group job) stops the batch
                        // there: the prefix went, the rest stays for a retry.
                        OutgoingJob job2 = out.startJob(JobSpec.of(4, 1.0));
                        batch.add(0, 0, b).add(0, 1, b).add(5, 2, b).add(0, 3, b);
                        assertThrows(IllegalArgumentException.class, () -> job2.send(batch));
                        assertEquals(2, batch.lastAccepted());
                        assertEquals(2, batch.size());
                        batch.clear();
                        batch.add(0, 2, b).add(0, 3, b);
                        assertEquals(SendResult.ACCEPTED, job2.send(batch));
                        assertEquals(2, batch.lastAccepted());
                        assertTrue(job2.outcome().get(TIMEOUT_S, TimeUnit.SECONDS).isSuccess());
                    } finally {
                        b.release();
                    }
                });
    }
}
