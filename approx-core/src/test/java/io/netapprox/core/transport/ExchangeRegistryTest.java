package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ExchangeRegistry.Lease;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The reference-counted per-process exchanges every integration shares. */
class ExchangeRegistryTest {

    /** An exchange that counts its opens and closes, per key, and fails when used closed. */
    private static final class Fake implements AutoCloseable {
        static final Map<String, AtomicInteger> OPEN_PER_KEY = new ConcurrentHashMap<>();
        final String key;
        volatile boolean closed;
        volatile String closedBy;

        Fake(String key) {
            this.key = key;
            int open =
                    OPEN_PER_KEY.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            if (open != 1) {
                throw new AssertionError(open + " exchanges of " + key + " open at once");
            }
        }

        void use() {
            if (closed) {
                throw new AssertionError("used after close: " + key);
            }
        }

        @Override
        public void close() {
            if (closed) {
                throw new AssertionError("closed twice: " + key);
            }
            closedBy = Thread.currentThread().getName();
            closed = true;
            OPEN_PER_KEY.get(key).decrementAndGet();
        }
    }

    @Test
    void leasesOfAKeyShareOneExchangeAndTheLastReleaseClosesIt() {
        ExchangeRegistry<String, Fake> r = new ExchangeRegistry<>("test exchange");
        Lease<Fake> a = r.acquire("k1", Fake::new);
        Lease<Fake> a2 = r.acquire("k1", k -> new Fake("never opened: shared"));
        Lease<Fake> b = r.acquire("k2", Fake::new);
        assertSame(a.get(), a2.get());
        assertNotSame(a.get(), b.get());
        assertEquals(2, r.size());
        assertEquals(3, r.users());
        assertEquals(2, r.opened());
        Fake x = a.get();
        a.close();
        assertFalse(x.closed, "a2 still holds it");
        a2.close();
        assertTrue(x.closed, "closed with the last lease");
        assertEquals(1, r.size());
        b.close();
        assertEquals(0, r.size());
        assertEquals(0, r.users());
        Lease<Fake> again = r.acquire("k1", Fake::new);
        assertNotSame(x, again.get(), "reopened after the last release");
        assertEquals(3, r.opened());
        again.close();
    }

    @Test
    void closingALeaseTwiceIsSafe() {
        ExchangeRegistry<String, Fake> r = new ExchangeRegistry<>("test exchange");
        Lease<Fake> a = r.acquire("k", Fake::new);
        Lease<Fake> b = r.acquire("k", Fake::new);
        a.close();
        a.close(); // must not release b's hold
        a.closeInBackground();
        assertFalse(b.get().closed);
        assertEquals(1, r.users());
        assertThrows(IllegalStateException.class, a::get, "a released lease hands out nothing");
        Fake x = b.get();
        b.close();
        b.close(); // Fake throws if closed twice
        assertTrue(x.closed);
    }

    @Test
    void aFailedOpenIsNotCachedAndTheNextAcquireOpensAgain() {
        ExchangeRegistry<String, Fake> r = new ExchangeRegistry<>("test exchange");
        AtomicInteger attempts = new AtomicInteger();
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class,
                        () ->
                                r.acquire(
                                        "k",
                                        k -> {
                                            attempts.incrementAndGet();
                                            throw new IllegalStateException("port in use");
                                        }));
        assertEquals("port in use", e.getMessage());
        assertEquals(0, r.size());
        assertEquals(0, r.users());
        assertEquals(0, r.opened());
        try (Lease<Fake> l =
                r.acquire(
                        "k",
                        k -> {
                            attempts.incrementAndGet();
                            return new Fake(k);
                        })) {
            l.get().use();
            assertEquals(2, attempts.get(), "opened again, not the failure handed out");
            assertEquals(1, r.opened());
        }
    }

    @Test
    void retainKeepsTheExchangeOpenAndFailsOnceItClosed() {
        ExchangeRegistry<String, Fake> r = new ExchangeRegistry<>("test exchange");
        Lease<Fake> op = r.acquire("k", Fake::new);
        Fake x = op.get();
        Lease<Fake> work = r.retain("k", x);
        op.close();
        assertFalse(x.closed, "its own work keeps it open");
        work.close();
        assertTrue(x.closed);
        assertThrows(IllegalStateException.class, () -> r.retain("k", x));
        try (Lease<Fake> other = r.acquire("k", Fake::new)) {
            assertThrows(
                    IllegalStateException.class,
                    () -> r.retain("k", x),
                    "a closed exchange is not retained through its successor");
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void closeInBackgroundClosesTheLastHoldOnAnotherThread() throws Exception {
        ExchangeRegistry<String, Fake> r = new ExchangeRegistry<>("test exchange");
        Lease<Fake> l = r.acquire("k", Fake::new);
        Fake x = l.get();
        l.closeInBackground();
        TransportTestSupport.eventually("closed", 10_000, () -> x.closed);
        assertEquals("netapprox-exchange-close", x.closedBy);
        // a successor of the same key opens only once that close finished (Fake checks)
        r.acquire("k", Fake::new).close();
    }

    /**
     * Many threads acquire, use and release three keys at once: every lease sees an open exchange,
     * at most one exchange per key is open at any time (a successor waits for its predecessor's
     * close; Fake fails otherwise), every opened exchange is closed exactly once, and nothing is
     * left at the end.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void concurrentAcquireAndReleaseFromManyThreads() throws Exception {
        ExchangeRegistry<String, Fake> r = new ExchangeRegistry<>("test exchange");
        List<Fake> all = java.util.Collections.synchronizedList(new ArrayList<>());
        int threads = 16;
        int cycles = 2000;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> done = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                int seed = t;
                done.add(
                        pool.submit(
                                () -> {
                                    start.await();
                                    for (int i = 0; i < cycles; i++) {
                                        String key = "k" + ((seed + i) % 3);
                                        Lease<Fake> l =
                                                r.acquire(
                                                        key,
                                                        k -> {
                                                            Fake f = new Fake(k);
                                                            all.add(f);
                                                            return f;
                                                        });
                                        l.get().use();
                                        if (i % 7 == 0) {
                                            Thread.yield();
                                        }
                                        l.get().use();
                                        if (i % 5 == 0) {
                                            l.closeInBackground();
                                        } else {
                                            l.close();
                                        }
                                    }
                                    return null;
                                }));
            }
            start.countDown();
            for (Future<?> f : done) {
                f.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        TransportTestSupport.eventually(
                "every exchange closed", 10_000, () -> all.stream().allMatch(f -> f.closed));
        assertEquals(0, r.size());
        assertEquals(0, r.users());
        assertEquals(all.size(), r.opened());
        assertTrue(all.size() >= 3, "each key opened at least once");
        System.out.printf(
                "ExchangeRegistry: %d threads x %d acquire/release cycles over 3 keys: %d opens%n",
                threads, cycles, all.size());
    }

    /**
     * Real transports: 100 cycles of four users of one configuration (all acquire, then all
     * release) open one transport per cycle and leave no file descriptor (UDP socket, control
     * sockets), engine or transport thread behind.
     */
    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void noEndpointLeaksOverManyCycles(DataPlaneMode plane) throws Exception {
        ExchangeRegistry<String, ApproxTransport> r = new ExchangeRegistry<>("test transport");
        ApproxTransportConfig cfg = config(atp().build(), control().build(), plane).build();
        int users = 4;
        int warmup = 5;
        int cycles = 100;
        ExecutorService pool = Executors.newFixedThreadPool(users);
        CyclicBarrier allHold = new CyclicBarrier(users);
        long fds0 = 0;
        try {
            for (int c = 0; c < warmup + cycles; c++) {
                if (c == warmup) {
                    fds0 = TransportTestSupport.openFds();
                }
                List<Future<ApproxTransport>> held = new ArrayList<>();
                for (int u = 0; u < users; u++) {
                    held.add(
                            pool.submit(
                                    () -> {
                                        try (Lease<ApproxTransport> l =
                                                r.acquire("cfg", k -> ApproxTransport.start(cfg))) {
                                            assertTrue(l.get().isOpen());
                                            allHold.await(10, TimeUnit.SECONDS);
                                            return l.get();
                                        }
                                    }));
                }
                ApproxTransport first = held.get(0).get(30, TimeUnit.SECONDS);
                for (Future<ApproxTransport> f : held) {
                    assertSame(first, f.get(30, TimeUnit.SECONDS), "one transport per cycle");
                }
                TransportTestSupport.eventually("closed", 10_000, () -> !first.isOpen());
                assertTrue(plane != DataPlaneMode.ATP || !first.endpoint().isOpen());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(warmup + cycles, r.opened());
        assertEquals(0, r.size());
        long base = fds0;
        TransportTestSupport.eventually(
                "file descriptors back to " + base + " (at most +2)",
                5000,
                () -> TransportTestSupport.openFds() <= base + 2);
        TransportTestSupport.eventually(
                "no transport threads",
                5000,
                () -> TransportTestSupport.transportThreads().isEmpty());
    }
}
