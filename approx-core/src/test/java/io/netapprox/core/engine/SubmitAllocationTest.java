package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The submit path allocates nothing per message in steady state (direct buffers, single and
 * batched).
 */
class SubmitAllocationTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void steadyStateSubmitDoesNotAllocate() throws Exception {
        java.lang.management.ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(mx instanceof com.sun.management.ThreadMXBean);
        com.sun.management.ThreadMXBean tmx = (com.sun.management.ThreadMXBean) mx;
        Assumptions.assumeTrue(tmx.isThreadAllocatedMemorySupported());
        tmx.setThreadAllocatedMemoryEnabled(true);
        final int n = 40_000;
        AtpConfig cfg = EngineTestSupport.loopback().build();
        // null listener on the receiver: messages are released as they arrive
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, null)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(256).writeZero(256);
            SendBatch batch = new SendBatch(32);
            int i = 0;
            for (; i < 10_000; i++) { // warm-up (JIT)
                job.send(0, i, b);
            }
            long tid = Thread.currentThread().getId();
            long a0 = tmx.getThreadAllocatedBytes(tid);
            for (; i < 20_000; i++) {
                job.send(0, i, b);
            }
            long a1 = tmx.getThreadAllocatedBytes(tid);
            for (; i < 30_000; i++) { // warm-up of the batched path
                batch.add(0, i, b);
                if (batch.isFull()) {
                    job.send(batch);
                }
            }
            long a2 = tmx.getThreadAllocatedBytes(tid);
            for (; i < n; i++) {
                batch.add(0, i, b);
                if (batch.isFull()) {
                    job.send(batch);
                }
            }
            long a3 = tmx.getThreadAllocatedBytes(tid);
            job.send(batch);
            b.release();
            assertTrue(job.outcome().get(30, TimeUnit.SECONDS).isSuccess());
            double perSingle = (a1 - a0) / 10_000.0;
            double perBatched = (a3 - a2) / 10_000.0;
            System.out.printf(
                    "heap bytes allocated per submitted message: single %.2f, batched %.2f%n",
                    perSingle, perBatched);
            assertTrue(perSingle < 8, "single send allocates " + perSingle + " B/message");
            assertTrue(perBatched < 8, "batched send allocates " + perBatched + " B/message");
            assertEquals(0, p.receiver.unreleasedMessages());
        }
    }
}
