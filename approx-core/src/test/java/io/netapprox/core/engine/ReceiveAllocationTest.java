package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.IllegalReferenceCountException;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The receive path allocates nothing per delivered message in steady state: the event thread's
 * allocated bytes (ThreadMXBean.getThreadAllocatedBytes, read on the event thread itself by the
 * listener) over 100k small messages after a warm-up of 100k, with a listener that reads and
 * releases each message.
 */
class ReceiveAllocationTest {
    private static final int WARMUP = 100_000;
    private static final int MEASURED = 100_000;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void steadyStateReceiveDoesNotAllocate() throws Exception {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean);
        com.sun.management.ThreadMXBean tmx = (com.sun.management.ThreadMXBean) mx;
        Assumptions.assumeTrue(tmx.isThreadAllocatedMemorySupported());
        tmx.setThreadAllocatedMemoryEnabled(true);
        final int n = WARMUP + MEASURED;
        final long[] allocated = new long[2]; // event thread only, read after the latch
        final AtomicLong checksum = new AtomicLong();
        final CountDownLatch all = new CountDownLatch(1);
        IncomingJobListener l =
                new IncomingJobListener() {
                    private int count;
                    private long sum;

                    @Override
                    public void onMessage(AtpMessage m) {
                        try {
                            ByteBuf c = m.content();
                            sum += c.getLong(c.readerIndex()) + m.messageId() + c.readableBytes();
                        } finally {
                            m.release();
                        }
                        count++;
                        if (count == WARMUP) {
                            allocated[0] = tmx.getCurrentThreadAllocatedBytes();
                        } else if (count == n) {
                            allocated[1] = tmx.getCurrentThreadAllocatedBytes();
                            checksum.set(sum);
                            all.countDown();
                        }
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(64).writeZero(64);
            for (int i = 0; i < n; i++) {
                b.setLong(0, i);
                job.send(0, i, b); // copied by the engine on submit
            }
            b.release();
            assertTrue(all.await(90, TimeUnit.SECONDS), "not all messages delivered");
            assertTrue(job.outcome().get(30, TimeUnit.SECONDS).isSuccess());
            long exact = 0;
            for (long i = 0; i < n; i++) {
                exact += i + i + 64; // payload long, message id, readable bytes
            }
            assertEquals(exact, checksum.get(), "payloads read through the recycled buffers");
            double perMessage = (allocated[1] - allocated[0]) / (double) MEASURED;
            System.out.printf(
                    "event-thread heap bytes allocated per delivered message: %.2f%n", perMessage);
            assertTrue(perMessage < 16, "receive path allocates " + perMessage + " B/message");
            assertEquals(0, p.receiver.unreleasedMessages());
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void recycledMessagesFailAfterReleaseAndCarryTheirOwnMetadata() throws Exception {
        final int n = 2_000;
        final CountDownLatch all = new CountDownLatch(n);
        final AtomicLong errors = new AtomicLong();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        ByteBuf c = m.content();
                        if (c.refCnt() != 1
                                || c.readerIndex() != 0
                                || c.readableBytes() != 16 + m.messageId() % 7
                                || c.getInt(0) != m.messageId()
                                || c.getLong(4) != ~(long) m.messageId()
                                || !c.isReadOnly()) {
                            errors.incrementAndGet();
                        }
                        c.skipBytes(3); // leaves state behind that a recycled buffer must not carry
                        // over
                        c.markReaderIndex();
                        m.release();
                        try {
                            c.getByte(0);
                            errors.incrementAndGet();
                        } catch (IllegalReferenceCountException expected) {
                            // as Netty
                        }
                        try {
                            m.release();
                            errors.incrementAndGet();
                        } catch (IllegalReferenceCountException expected) {
                            // over-release is detected, not passed on to the native side
                        }
                        all.countDown();
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(32);
            for (int i = 0; i < n; i++) {
                b.clear().writeInt(i).writeLong(~(long) i).writeZero(4 + i % 7);
                job.send(0, i, b);
            }
            b.release();
            assertTrue(all.await(20, TimeUnit.SECONDS));
            assertTrue(job.outcome().get(10, TimeUnit.SECONDS).isSuccess());
            assertEquals(0, errors.get());
            assertEquals(0, p.receiver.unreleasedMessages());
        }
    }
}
