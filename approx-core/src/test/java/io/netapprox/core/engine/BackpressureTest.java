package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A listener that does not release messages throttles the sender instead of growing memory. */
class BackpressureTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void unreleasedMessagesThrottleTheSenderAndMemoryStaysBounded() throws Exception {
        final int size = 64 * 1024;
        final int n = 256; // 16 MiB in total
        final long recvBuffer = 1L << 20; // 1 MiB receive window per session
        ConcurrentLinkedQueue<AtpMessage> held = new ConcurrentLinkedQueue<>();
        AtomicLong heldBytes = new AtomicLong();
        AtomicLong maxHeldBytes = new AtomicLong();
        AtomicInteger received = new AtomicInteger();
        CompletableFuture<JobReport> rr = new CompletableFuture<>();
        IncomingJobListener slowConsumer =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        received.incrementAndGet();
                        held.add(m); // keep it: do not release
                        long h = heldBytes.addAndGet(m.content().readableBytes());
                        maxHeldBytes.accumulateAndGet(h, Math::max);
                    }

                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        rr.complete(r);
                    }
                };
        AtpConfig senderCfg = EngineTestSupport.loopback().sendBufferBytes(1 << 20).build();
        AtpConfig receiverCfg = EngineTestSupport.loopback().recvBufferBytes(recvBuffer).build();
        try (EngineTestSupport.Pair p =
                new EngineTestSupport.Pair(senderCfg, receiverCfg, slowConsumer)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            ByteBuf b = Unpooled.directBuffer(size).writeZero(size);
            int sent = 0;
            int timeouts = 0;
            int quietTimeouts = 0;
            int heldAtLastTimeout = -1;
            // Phase 1: the consumer holds everything. The sender must stall (send() times out) once
            // the receiver's window and the sender's buffer are full. One timeout alone does not
            // show a stall: a loaded machine can keep the engine's thread off the CPU for 300 ms
            // with data still in flight (CI-like runs saw more messages arrive "after the stall").
            // A stall is two consecutive timeouts across which nothing more arrived; whatever
            // the scheduling, the receiver can never hold more than its window (asserted below).
            while (sent < n && quietTimeouts < 2) {
                try {
                    job.send(0, sent, b, 300, TimeUnit.MILLISECONDS);
                    sent++;
                    quietTimeouts = 0;
                } catch (AtpException e) {
                    assertEquals(AtpStatus.WOULD_BLOCK, e.status());
                    timeouts++;
                    int h = held.size();
                    quietTimeouts = h == heldAtLastTimeout ? quietTimeouts + 1 : 1;
                    heldAtLastTimeout = h;
                }
            }
            int heldAtStall = held.size();
            System.out.printf(
                    "stalled after %d of %d messages accepted (%d send timeouts); receiver holds %d"
                            + " messages (%d KiB, max %d KiB) with a %d KiB window; unreleased=%d%n",
                    sent,
                    n,
                    timeouts,
                    heldAtStall,
                    heldBytes.get() / 1024,
                    maxHeldBytes.get() / 1024,
                    recvBuffer / 1024,
                    p.receiver.unreleasedMessages());
            assertTrue(timeouts >= 2, "the sender stalled");
            assertTrue(sent < n, "not everything was accepted");
            assertTrue(
                    maxHeldBytes.get() <= recvBuffer,
                    "held " + maxHeldBytes.get() + " > window " + recvBuffer);
            assertEquals(held.size(), p.receiver.unreleasedMessages());
            // Phase 2: the consumer drains; the sender resumes and the job completes.
            Thread drainer =
                    new Thread(
                            () -> {
                                while (!rr.isDone()) {
                                    AtpMessage m = held.poll();
                                    if (m == null) {
                                        Thread.onSpinWait();
                                        continue;
                                    }
                                    heldBytes.addAndGet(-m.content().readableBytes());
                                    m.release();
                                }
                            },
                            "drainer");
            drainer.start();
            for (; sent < n; sent++) {
                job.send(0, sent, b, 20, TimeUnit.SECONDS);
            }
            b.release();
            JobReport sr = job.outcome().get(30, TimeUnit.SECONDS);
            assertTrue(sr.isSuccess());
            assertEquals(n, rr.get(10, TimeUnit.SECONDS).delivered());
            drainer.join(5000);
            AtpMessage m;
            while ((m = held.poll()) != null) {
                m.release();
            }
            assertEquals(n, received.get());
            assertTrue(maxHeldBytes.get() <= recvBuffer, "held at most the receive window");
            assertEquals(0, p.receiver.unreleasedMessages());
        }
    }
}
