package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The exchange's connections to other exchanges (TCP data plane: no native library needed). */
class PeerCacheTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aConnectionIsSharedWhileActiveAndReplacedOnceItEnded() throws Exception {
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), DataPlaneMode.TCP).build(),
                                request -> {
                                    throw new IllegalStateException("not used");
                                });
                ApproxTransport client =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), DataPlaneMode.TCP)
                                        .serverEnabled(false)
                                        .build())) {
            PeerCache<InetSocketAddress> cache = new PeerCache<>();
            AtomicInteger connects = new AtomicInteger();
            InetSocketAddress addr = server.controlAddress();
            CompletableFuture<ApproxPeer> one =
                    cache.get(
                            addr,
                            a -> {
                                connects.incrementAndGet();
                                return client.connect(a);
                            });
            CompletableFuture<ApproxPeer> pending =
                    cache.get(addr, a -> CompletableFuture.failedFuture(new AssertionError()));
            assertSame(one, pending, "a connection being set up is shared");
            ApproxPeer p = one.get(30, TimeUnit.SECONDS);
            assertSame(
                    one,
                    cache.get(addr, a -> CompletableFuture.failedFuture(new AssertionError())));
            p.close();
            TransportTestSupport.eventually("ended", 10_000, () -> !p.isActive());
            ApproxPeer q =
                    cache.get(
                                    addr,
                                    a -> {
                                        connects.incrementAndGet();
                                        return client.connect(a);
                                    })
                            .get(30, TimeUnit.SECONDS);
            assertNotSame(p, q, "an ended connection is replaced");
            assertTrue(q.isActive());
            assertEquals(2, connects.get());
            assertEquals(1, cache.size());
            cache.close();
            assertEquals(0, cache.size());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aFailedConnectionIsEvictedAndTheNextCallConnectsAgain() throws Exception {
        int unused;
        try (ServerSocket s = new ServerSocket(0)) {
            unused = s.getLocalPort(); // closed: nothing listens there
        }
        InetSocketAddress nowhere = new InetSocketAddress(TransportTestSupport.LOOPBACK, unused);
        try (ApproxTransport client =
                ApproxTransport.start(
                        config(atp().build(), control().build(), DataPlaneMode.TCP)
                                .serverEnabled(false)
                                .build())) {
            PeerCache<InetSocketAddress> cache = new PeerCache<>();
            AtomicInteger connects = new AtomicInteger();
            for (int i = 1; i <= 2; i++) {
                CompletableFuture<ApproxPeer> f =
                        cache.get(
                                nowhere,
                                a -> {
                                    connects.incrementAndGet();
                                    return client.connect(a);
                                });
                Throwable e = TransportTestSupport.failure(f, 10_000);
                assertTrue(e instanceof TransportException, String.valueOf(e));
                TransportTestSupport.eventually("evicted", 5000, () -> cache.size() == 0);
                assertEquals(i, connects.get(), "a failure is not handed out again");
            }
        }
    }
}
