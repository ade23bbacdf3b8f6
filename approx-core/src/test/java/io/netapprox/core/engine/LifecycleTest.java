package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class LifecycleTest {

    private static void cycle(ByteBuf payload) throws Exception {
        CompletableFuture<JobReport> rr = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        rr.complete(r);
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            try (OutgoingJob job = p.out.startJob(JobSpec.of(4, 1.0))) {
                for (int i = 0; i < 4; i++) {
                    job.send(0, i, payload.duplicate());
                }
                job.outcome().get(10, TimeUnit.SECONDS);
                rr.get(10, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * An endpoint's event and release buffers (~29 KiB at the default batch) are freed by close,
     * not at some later GC: CI once saw malloc grow 5 MB and 2.7 MB over two halves of 500 cycles
     * from endpoints waiting for a GC that a roomy heap need never run.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void closingAnEndpointFreesItsDirectBuffersAtOnce() {
        BufferPoolMXBean direct =
                ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                        .filter(b -> b.getName().equals("direct"))
                        .findFirst()
                        .orElseThrow();
        AtpConfig cfg = EngineTestSupport.loopback().build();
        long perEndpoint =
                (long) cfg.eventBatchSize() * (NativeEngine.EVENT_RECORD_BYTES + Long.BYTES);
        AtpEndpoint.open(cfg).close(); // warm-up: classes, the JDK's own buffers
        int n = 20;
        long before = direct.getMemoryUsed();
        List<AtpEndpoint> endpoints = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            endpoints.add(AtpEndpoint.open(cfg));
        }
        long open = direct.getMemoryUsed();
        endpoints.forEach(AtpEndpoint::close);
        long after = direct.getMemoryUsed();
        String msg =
                String.format(
                        "direct memory %d B before, %d B with %d endpoints open, %d B after close",
                        before, open, n, after);
        assertTrue(open - before >= n * perEndpoint, msg);
        assertTrue(after - before < perEndpoint, msg);
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void thousandOpenCloseCyclesLeakNoFdsNorNativeMemory() throws Exception {
        ByteBuf payload = Unpooled.directBuffer(4096).writeZero(4096);
        try {
            for (int i = 0; i < 100; i++) { // warm-up: JIT, allocator arenas, thread stacks
                cycle(payload);
            }
            System.gc();
            long fds0 = EngineTestSupport.openFds();
            long rss0 = EngineTestSupport.rssKib();
            long threads0 = EngineTestSupport.threads();
            long malloc0 = NativeEngine.mallocInUse();
            long t0 = System.nanoTime();
            for (int i = 0; i < 500; i++) {
                cycle(payload);
            }
            System.gc(); // direct buffers of the JVM's own (JDK, Netty) are freed by GC only
            Thread.sleep(100);
            long mallocHalf = NativeEngine.mallocInUse();
            long rssHalf = EngineTestSupport.rssKib();
            for (int i = 0; i < 500; i++) {
                cycle(payload);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.gc();
            Thread.sleep(100);
            long fds1 = EngineTestSupport.openFds();
            long rss1 = EngineTestSupport.rssKib();
            long threads1 = EngineTestSupport.threads();
            long malloc1 = NativeEngine.mallocInUse();
            System.out.printf(
                    "1000 cycles (2 endpoints + session + 4-message job each) in %d ms: fds %d -> %d, "
                            + "RSS %d -> %d KiB (%+d KiB), malloc in use %d -> %d KiB (%+d KiB), threads %d -> %d%n",
                    ms,
                    fds0,
                    fds1,
                    rss0,
                    rss1,
                    rss1 - rss0,
                    malloc0 / 1024,
                    malloc1 / 1024,
                    (malloc1 - malloc0) / 1024,
                    threads0,
                    threads1);
            if (malloc0 >= 0) {
                // The native heap also holds the JVM's own mallocs (JIT code, GC tables), which
                // grow in one-off steps whose timing depends on machine load. A leak of one
                // engine, session, job or report per cycle is far above 4 KiB per cycle and
                // grows in BOTH halves of the run; a one-off step shows in one half only.
                long first = mallocHalf - malloc0;
                long second = malloc1 - mallocHalf;
                assertTrue(
                        Math.min(first, second) < 4L * 1024 * 500,
                        "malloc in use grew by "
                                + first
                                + " B and then "
                                + second
                                + " B per 500 cycles");
            }
            // A leak grows by at least one per cycle (1000); two spare allow for descriptors the
            // JVM opens lazily.
            assertTrue(fds1 <= fds0 + 2, "file descriptors " + fds0 + " -> " + fds1);
            assertTrue(threads1 <= threads0 + 1, "threads " + threads0 + " -> " + threads1);
            // Each cycle creates two engines with 64 MiB buffer limits; a leak of even one engine
            // or one socket buffer per cycle would be >= 500 x tens of KiB in each half. RSS also
            // holds the Java heap, which grows in one-off steps when the collector sizes it up
            // (more often on a loaded machine): as for malloc, a leak grows in BOTH halves.
            long rssFirst = rssHalf - rss0;
            long rssSecond = rss1 - rssHalf;
            assertTrue(
                    Math.min(rssFirst, rssSecond) < 24 * 1024,
                    "RSS grew by "
                            + rssFirst
                            + " KiB and then "
                            + rssSecond
                            + " KiB per 500 cycles");
        } finally {
            payload.release();
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void useAfterCloseThrowsAndDoubleCloseIsHarmless() throws Exception {
        AtpConfig cfg = EngineTestSupport.loopback().build();
        AtpEndpoint a = AtpEndpoint.open(cfg);
        AtpEndpoint b = AtpEndpoint.open(cfg);
        AtpSession s =
                a.openSession(
                        1, new byte[32], new InetSocketAddress("127.0.0.1", b.localPort()), true);
        OutgoingJob job = s.startJob(JobSpec.of(10, 1.0));
        ByteBuf buf = Unpooled.directBuffer(16).writeLong(7);

        // session close: jobs fail with CLOSED, the session refuses further use, double close is
        // harmless
        s.close();
        assertDoesNotThrow(s::close);
        ExecutionException e =
                assertThrows(
                        ExecutionException.class, () -> job.outcome().get(5, TimeUnit.SECONDS));
        assertEquals(AtpStatus.CLOSED, ((AtpJobFailedException) e.getCause()).status());
        IllegalStateException ise =
                assertThrows(IllegalStateException.class, () -> s.startJob(JobSpec.of(1, 1.0)));
        assertTrue(ise.getMessage().contains("closed"), ise.getMessage());
        ise = assertThrows(IllegalStateException.class, () -> job.send(0, 0, buf));
        assertTrue(ise.getMessage().contains("closed"), ise.getMessage());
        assertDoesNotThrow(job::cancel);
        assertDoesNotThrow(job::close);

        // endpoint close
        AtpSession s2 =
                a.openSession(
                        2, new byte[32], new InetSocketAddress("127.0.0.1", b.localPort()), true);
        OutgoingJob job2 = s2.startJob(JobSpec.of(10, 1.0));
        a.close();
        assertDoesNotThrow(a::close);
        assertFalse(a.isOpen());
        assertFalse(s2.isOpen());
        assertThrows(ExecutionException.class, () -> job2.outcome().get(5, TimeUnit.SECONDS));
        ise = assertThrows(IllegalStateException.class, a::localPort);
        assertTrue(ise.getMessage().contains("closed"), ise.getMessage());
        ise = assertThrows(IllegalStateException.class, a::stats);
        assertTrue(ise.getMessage().contains("closed"), ise.getMessage());
        assertThrows(
                IllegalStateException.class,
                () -> a.openSession(3, new byte[32], new InetSocketAddress("127.0.0.1", 1), true));
        assertThrows(IllegalStateException.class, () -> s2.startJob(JobSpec.of(1, 1.0)));
        assertThrows(IllegalStateException.class, () -> job2.send(0, 0, buf));
        assertThrows(
                IllegalStateException.class,
                () -> job2.trySend(0, 0, ByteBuffer.allocateDirect(8)));
        assertThrows(IllegalStateException.class, () -> job2.updateMsr(Map.of(0, 0.5)));
        assertDoesNotThrow(job2::cancel);
        assertDoesNotThrow(s2::close);

        // a stale native handle is rejected by the C API, not dereferenced
        assertEquals(AtpStatus.CLOSED_HANDLE.code(), NativeEngine.localPort(12345));
        assertEquals(
                AtpStatus.CLOSED_HANDLE.code(),
                NativeEngine.submitAddress(12345, 1, 1, 0, 0, 8, 1, 0));
        assertEquals(AtpStatus.CLOSED_HANDLE.code(), NativeEngine.reportFree(64));
        b.close();
        buf.release();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void closeDefersNativeFreeUntilHeldMessagesAreReleased() throws Exception {
        CompletableFuture<AtpMessage> held = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        if (!held.complete(m)) {
                            m.release();
                        }
                    }
                };
        AtpConfig cfg =
                EngineTestSupport.loopback().closeTimeout(java.time.Duration.ofMillis(50)).build();
        EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l);
        long fds0;
        try {
            OutgoingJob job = p.out.startJob(JobSpec.of(2, 1.0));
            ByteBuf b = Unpooled.directBuffer(8).writeLong(42);
            job.send(0, 0, b);
            job.send(0, 1, b);
            b.release();
            AtpMessage m = held.get(10, TimeUnit.SECONDS);
            job.outcome().get(10, TimeUnit.SECONDS);
            fds0 = EngineTestSupport.openFds();
            p.receiver.close(); // a message is still held: the engine memory must stay valid
            assertFalse(p.receiver.isOpen());
            assertEquals(
                    42, m.content().getLong(0), "held content still readable after endpoint close");
            assertTrue(
                    EngineTestSupport.openFds() == fds0,
                    "engine (and its fds) still alive while a message is held");
            m.release(); // last release frees the native engine
            assertTrue(
                    EngineTestSupport.openFds() < fds0, "native engine closed by the last release");
        } finally {
            p.close();
        }
    }

    @Test
    void invalidArgumentsAreRejectedWithClearMessages() {
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (AtpEndpoint a = AtpEndpoint.open(cfg)) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    a.openSession(
                                            1,
                                            new byte[31],
                                            new InetSocketAddress("127.0.0.1", 1),
                                            true));
            assertTrue(e.getMessage().contains("32 bytes"));
            AtpSession s =
                    a.openSession(1, new byte[32], new InetSocketAddress("127.0.0.1", 9), true);
            assertThrows(
                    IllegalStateException.class,
                    () ->
                            a.openSession(
                                    1, new byte[32], new InetSocketAddress("127.0.0.1", 9), true));
            OutgoingJob j =
                    s.startJob(JobSpec.builder().addGroup(1, 10, 0.5).addGroup(2, 5, 1.0).build());
            ByteBuf b = Unpooled.directBuffer(8).writeLong(1);
            assertThrows(IllegalArgumentException.class, () -> j.send(2, 0, b));
            assertThrows(IllegalArgumentException.class, () -> j.send(1, 5, b));
            assertThrows(IllegalArgumentException.class, () -> j.send(0, 0, Unpooled.EMPTY_BUFFER));
            assertThrows(IllegalArgumentException.class, () -> j.updateMsr(Map.of(0, 1.5)));
            assertThrows(
                    IllegalStateException.class,
                    () -> s.startJob(JobSpec.builder().jobId(j.id()).addGroup(1, 1, 1).build()));
            b.release();
        }
        assertThrows(IllegalArgumentException.class, () -> GroupSpec.of(1, 0, 0.5));
        assertThrows(IllegalArgumentException.class, () -> GroupSpec.of(1, 10, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> JobSpec.builder().build());
    }
}
