package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The submit ownership protocol (docs/java-api.md "Buffer ownership"): a direct buffer is read by
 * the engine during the call - copied once into an engine buffer, with no Java copy in between -
 * and never after it returns, so the caller may overwrite, reuse or free it at once; the buffer's
 * position and limit are left as they were.
 */
class DirectBufferOwnershipTest {
    private static final int[] SIZES = {100, 1, 700, 3000, 65536, 200};
    private static final int N = 240;

    private static int size(int i) {
        return SIZES[i % SIZES.length];
    }

    private static byte pattern(int msg, int k) {
        return (byte) (msg * 31 + k * 7 + 1);
    }

    private static long crc(ByteBuffer b) {
        CRC32C c = new CRC32C();
        c.update(b.duplicate());
        return c.getValue();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void directBuffersMayBeOverwrittenOrFreedAsSoonAsSendReturns() throws Exception {
        long[] sent = new long[N];
        long[] got = new long[N];
        CompletableFuture<JobReport> done = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        try {
                            got[m.messageId()] = TestPayloads.crc(m.content());
                        } finally {
                            m.release();
                        }
                    }

                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        done.complete(r);
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(N, 1.0));
            // one reused java.nio direct buffer; each message is a window [pos, limit) inside it
            ByteBuffer shared = ByteBuffer.allocateDirect(70_000);
            for (int i = 0; i < N; i++) {
                int len = size(i);
                if (i % 3 == 2) {
                    // a Netty direct buffer freed right after the send (its memory goes back to
                    // the OS allocator: an engine reading it later would read freed memory)
                    ByteBuf nb = Unpooled.directBuffer(len);
                    for (int k = 0; k < len; k++) {
                        nb.writeByte(pattern(i, k));
                    }
                    sent[i] = TestPayloads.crc(nb);
                    assertEquals(SendResult.ACCEPTED, job.send(0, i, nb));
                    nb.setZero(0, nb.capacity());
                    assertTrue(nb.release());
                    continue;
                }
                int pos = 17 + i % 5;
                shared.clear();
                for (int k = 0; k < len; k++) {
                    shared.put(pos + k, pattern(i, k));
                }
                shared.position(pos).limit(pos + len);
                ByteBuffer msg = i % 3 == 1 ? shared.asReadOnlyBuffer() : shared;
                sent[i] = crc(msg);
                assertEquals(SendResult.ACCEPTED, job.send(0, i, msg));
                assertEquals(pos, msg.position(), "send leaves the position alone");
                assertEquals(pos + len, msg.limit(), "send leaves the limit alone");
                // overwrite at once: the engine holds its own copy
                shared.clear();
                for (int k = 0; k < shared.capacity(); k++) {
                    shared.put(k, (byte) 0xEE);
                }
            }
            assertTrue(job.outcome().get(30, TimeUnit.SECONDS).isSuccess());
            assertEquals(N, done.get(10, TimeUnit.SECONDS).delivered());
            assertArrayEquals(sent, got);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void directByteBufferSendCopiesNothingOnTheJavaSide() throws Exception {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean);
        com.sun.management.ThreadMXBean tmx = (com.sun.management.ThreadMXBean) mx;
        Assumptions.assumeTrue(tmx.isThreadAllocatedMemorySupported());
        tmx.setThreadAllocatedMemoryEnabled(true);
        final int n = 30_000;
        final int len = 4096;
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, null)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            ByteBuffer b = ByteBuffer.allocateDirect(len);
            int i = 0;
            for (; i < 10_000; i++) { // warm-up (JIT)
                job.send(0, i, b);
            }
            long tid = Thread.currentThread().getId();
            long before = tmx.getThreadAllocatedBytes(tid);
            for (; i < n; i++) {
                job.send(0, i, b);
            }
            long perMessage = (tmx.getThreadAllocatedBytes(tid) - before) / (n - 10_000);
            // a Java-side copy of a 4 KiB message would allocate at least 4 KiB per send
            assertTrue(perMessage < 64, "bytes allocated per direct send: " + perMessage);
            assertTrue(job.outcome().get(30, TimeUnit.SECONDS).isSuccess());
        }
    }
}
