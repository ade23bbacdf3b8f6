package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A peer is handed out ({@link ApproxPeer#isActive}, what an exchange's peer lookup takes) only
 * once both sides have chosen its data plane. The initiator chooses before it sends
 * DATA_PLANE_SELECT; before the fix it was active from that moment, so another thread could send a
 * request the server got before the select: refused, "has no data plane chosen yet" (a Flink CI run
 * answered an epoch without its data so). An observer thread spins on the client's peers while
 * {@link #CONNECTS} connections are set up and records any active client peer whose server side has
 * no plane yet.
 */
class PeerReadinessTest {
    static final int CONNECTS = 40;

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"AUTO", "ATP", "TCP"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aPeerIsActiveOnlyOnceTheServerHasChosenItsPlane(DataPlaneMode plane) throws Exception {
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).build(),
                                request -> {});
                ApproxTransport client =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).build())) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger early = new AtomicInteger();
            AtomicInteger seenActive = new AtomicInteger();
            AtomicReference<String> first = new AtomicReference<>();
            Thread observer =
                    new Thread(
                            () -> {
                                while (!stop.get()) {
                                    for (ApproxPeer c : client.peers()) {
                                        if (!c.isActive()) {
                                            continue;
                                        }
                                        seenActive.incrementAndGet();
                                        for (ApproxPeer s : server.peers()) {
                                            if (s.sessionId() == c.sessionId()
                                                    && s.dataPlane() == null) {
                                                early.incrementAndGet();
                                                first.compareAndSet(null, c.describe());
                                            }
                                        }
                                    }
                                    Thread.onSpinWait();
                                }
                            },
                            "peer-readiness-observer");
            observer.setDaemon(true);
            observer.start();
            try {
                for (int i = 0; i < CONNECTS; i++) {
                    ApproxPeer p =
                            client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS);
                    assertTrue(p.isActive(), "the peer handed out by connect is active");
                    p.close();
                }
            } finally {
                stop.set(true);
                observer.join(5_000);
            }
            assertTrue(seenActive.get() > 0, "the observer never saw an active peer");
            assertEquals(
                    0,
                    early.get(),
                    "client peers active before the server chose their plane; first: "
                            + first.get());
        }
    }
}
