package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.OutgoingJob;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** (e): connect / transfer / close cycles leave no file descriptors, threads or sessions behind. */
class ApproxTransportLifecycleTest {

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void hundredConnectCloseCyclesLeaveNoFdOrThreadGrowth(DataPlaneMode plane) throws Exception {
        long fdsAtStart = TransportTestSupport.openFds();
        long threadsAtStart = TransportTestSupport.threads();
        DataRequestHandler handler =
                request -> {
                    OutgoingJob job =
                            request.startJob(TransportTestSupport.spec(request.payload()));
                    TransportTestSupport.sendAll(job, 1024, -1, null);
                };
        byte[] small =
                TransportTestSupport.request(
                        1024, new long[] {1, 2}, new int[] {4, 4}, new double[] {1.0, 0.5});
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).build(), handler);
                ApproxTransport client =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane)
                                        .serverEnabled(false)
                                        .build())) {
            long fds0 = 0;
            long threads0 = 0;
            long t0 = 0;
            int warmup = 10;
            int cycles = 100;
            for (int i = 0; i < warmup + cycles; i++) {
                if (i == warmup) {
                    fds0 = TransportTestSupport.openFds();
                    threads0 = TransportTestSupport.threads();
                    t0 = System.nanoTime();
                }
                ApproxPeer peer = client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS);
                TransferReport r =
                        peer.request(small, (t, m) -> m.release())
                                .report()
                                .get(10, TimeUnit.SECONDS);
                assertTrue(r.delivered() >= 6, r.toString());
                peer.close();
                TransportTestSupport.eventually(
                        "server dropped the peer",
                        5000,
                        () -> TransportTestSupport.noSessions(server));
            }
            double msPerCycle = (System.nanoTime() - t0) / 1e6 / cycles;
            long fds1 = TransportTestSupport.openFds();
            long threads1 = TransportTestSupport.threads();
            System.out.printf(
                    "(e) %s: %d connect/request/close cycles: %.1f ms/cycle, fds %d -> %d, threads %d"
                            + " -> %d (process start of test: fds %d, threads %d)%n",
                    plane,
                    cycles,
                    msPerCycle,
                    fds0,
                    fds1,
                    threads0,
                    threads1,
                    fdsAtStart,
                    threadsAtStart);
            // A leak would grow by one per cycle (100); allow two for descriptors the JVM or Netty
            // open lazily
            // (e.g. under load from other processes) and give asynchronous closes time to finish.
            final long fdBase = fds0;
            final long threadBase = threads0;
            TransportTestSupport.eventually(
                    "file descriptors " + fds0 + " -> " + fds1 + " (at most +2)",
                    5000,
                    () -> TransportTestSupport.openFds() <= fdBase + 2);
            TransportTestSupport.eventually(
                    "threads " + threads0 + " -> " + threads1,
                    5000,
                    () -> TransportTestSupport.threads() <= threadBase);
            TransportTestSupport.eventually(
                    "no sessions left",
                    5000,
                    () ->
                            TransportTestSupport.noSessions(client)
                                    && TransportTestSupport.noSessions(server));
            assertEquals(0, TransportTestSupport.unreleased(client));
            assertEquals(warmup + cycles, server.controlServer().metrics().sessionsOpened());
            assertEquals(warmup + cycles, server.controlServer().metrics().sessionsClosed());
        }
        TransportTestSupport.eventually(
                "no transport threads",
                5000,
                () -> TransportTestSupport.transportThreads().isEmpty());
        TransportTestSupport.eventually(
                "fds back to " + fdsAtStart,
                5000,
                () -> TransportTestSupport.openFds() <= fdsAtStart);
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void transportsOpenAndCloseCleanlyAndCloseIsIdempotent(DataPlaneMode plane) throws Exception {
        for (int i = 0; i < 5; i++) {
            ApproxTransport t =
                    ApproxTransport.start(config(atp().build(), control().build(), plane).build());
            boolean atp = plane == DataPlaneMode.ATP;
            assertTrue(t.isOpen() && t.controlAddress().getPort() > 0);
            assertEquals(atp, t.dataPort() > 0, "a UDP port only with the engine");
            assertEquals(atp, t.endpoint() != null);
            t.close();
            t.close();
            assertTrue(!t.isOpen() && (!atp || !t.endpoint().isOpen()));
            TransportException e =
                    (TransportException)
                            TransportTestSupport.failure(
                                    t.connect(
                                            new java.net.InetSocketAddress(
                                                    TransportTestSupport.LOOPBACK, 1)),
                                    1000);
            assertEquals(TransportException.Reason.CLOSED, e.reason());
        }
        TransportTestSupport.eventually(
                "no transport threads",
                5000,
                () -> TransportTestSupport.transportThreads().isEmpty());
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void peerLimitRefusesExtraSessionsOnBothSides(DataPlaneMode plane) throws Exception {
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).maxPeers(1).build(),
                                request -> {});
                ApproxTransport client =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).build())) {
            ApproxPeer first = client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS);
            TransportException e =
                    (TransportException)
                            TransportTestSupport.failure(
                                    client.connect(server.controlAddress()), 10_000);
            System.out.println("(limit) " + e.getMessage());
            assertEquals(TransportException.Reason.CONNECT_FAILED, e.reason());
            assertTrue(e.getMessage().contains("SESSION_FAILED"), e.getMessage());
            TransportTestSupport.eventually(
                    "only the first session",
                    5000,
                    () ->
                            client.peers().size() == 1
                                    && TransportTestSupport.sessions(client) == 1
                                    && TransportTestSupport.sessions(server) == 1);
            first.close();
            TransportTestSupport.eventually(
                    "server freed the slot", 5000, () -> TransportTestSupport.noSessions(server));
            client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS).close();
        }
    }
}
