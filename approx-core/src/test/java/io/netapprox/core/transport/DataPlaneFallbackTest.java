package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.LIVENESS_MS;
import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static io.netapprox.core.transport.TransportTestSupport.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code dataPlane=auto}: a peer that is not reachable over UDP (here: its engine drops the
 * datagrams it would send or receive, so the path drops UDP both ways) is found by the bounded UDP
 * probe and runs on TCP, with one WARN naming the reason and a counter; the same peer with {@code
 * atp} fails the connection naming the cause; both ends agree on the plane in the handshake. The
 * lab version with a real UDP-dropping filter between two namespaces is {@code UdpBlockedLabTest}.
 */
class DataPlaneFallbackTest {
    private static final Duration PROBE = Duration.ofMillis(300);
    private static final int SIZE = 2048;
    private static final long[] IDS = {11, 22, 33};
    private static final int[] N = {200, 300, 400};
    private static final double[] MSR = {1.0, 0.8, 0.25};

    static ApproxTransportConfig cfg(DataPlaneMode mode, AtpConfig atp, boolean server) {
        return TransportTestSupport.config(atp, control().build(), mode)
                .udpProbeTimeout(PROBE)
                .serverEnabled(server)
                .build();
    }

    /**
     * An engine whose datagrams do not arrive and which hears nothing: UDP is blocked (the engine's
     * fault injection drops all but one in 10^6 datagrams each way, seeded; 1.0 is not accepted).
     */
    static AtpConfig udpBlocked() {
        return atp().faultInjection(0.999999, 0.999999, 30).build();
    }

    /** Requests the test job and checks every target, listener == report, both reports equal. */
    static TransferReport transferMeetsEveryTarget(ApproxPeer peer, List<OutgoingTransfer> served)
            throws Exception {
        ApproxTransportTest.Recorder rec = new ApproxTransportTest.Recorder(SIZE, IDS[0]);
        IncomingTransfer in = peer.request(TransportTestSupport.request(SIZE, IDS, N, MSR), rec);
        TransferReport r = in.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
        assertNull(rec.error.get(), rec.error.get());
        for (int g = 0; g < IDS.length; g++) {
            GroupReport gr = r.groups().get(g);
            assertTrue(
                    gr.delivered() >= GroupSpec.of(IDS[g], N[g], MSR[g]).target(), gr.toString());
            assertEquals(
                    ApproxTransportTest.toSet(gr.deliveredIds()),
                    new TreeSet<>(rec.delivered.getOrDefault(IDS[g], Set.of())));
        }
        OutgoingTransfer out;
        synchronized (served) {
            out = served.get(served.size() - 1);
        }
        assertEquals(r.report(), out.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS).report());
        return r;
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aPeerNotReachableOverUdpRunsOnTcpWithOneWarnAndACounter() throws Exception {
        List<OutgoingTransfer> served = new ArrayList<>();
        try (LogCapture log = new LogCapture();
                ApproxTransport server =
                        ApproxTransport.start(
                                cfg(DataPlaneMode.AUTO, udpBlocked(), true),
                                ApproxTransportTest.catalog(served));
                ApproxTransport client =
                        ApproxTransport.start(cfg(DataPlaneMode.AUTO, atp().build(), false))) {
            ApproxPeer peer =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            assertEquals(DataPlaneKind.TCP, peer.dataPlane());
            assertEquals(DataPlaneKind.TCP, server.peers().get(0).dataPlane(), "both sides agree");
            transferMeetsEveryTarget(peer, served);
            DataPlaneMetrics m = client.dataPlaneMetrics();
            assertEquals(1, m.udpProbeFallbacks());
            assertEquals(1, m.tcpPeers());
            assertEquals(0, m.atpPeers());
            assertTrue(m.atpAvailable());
            assertEquals(1, server.dataPlaneMetrics().tcpPeers());
            // The probed ATP sessions are gone on both sides: the peer lives on TCP alone.
            TransportTestSupport.eventually(
                    "no engine sessions",
                    LIVENESS_MS,
                    () ->
                            client.endpoint().sessions().isEmpty()
                                    && server.endpoint().sessions().isEmpty());

            // A second peer falls back too: counted, but the WARN was said once.
            ApproxPeer second =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            assertEquals(DataPlaneKind.TCP, second.dataPlane());
            transferMeetsEveryTarget(second, served);
            assertEquals(2, client.dataPlaneMetrics().udpProbeFallbacks());
            List<String> warns = log.warnings("not reachable over UDP");
            System.out.println("fallback WARN: " + warns);
            assertEquals(1, warns.size(), warns.toString());
            assertTrue(
                    warns.get(0).contains("no answer over UDP within 300 ms")
                            && warns.get(0).contains("TCP data plane"),
                    warns.get(0));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void withDataPlaneAtpAPeerNotReachableOverUdpFailsTheConnectionNamingTheCause()
            throws Exception {
        try (ApproxTransport server =
                        ApproxTransport.start(
                                cfg(DataPlaneMode.AUTO, udpBlocked(), true),
                                ApproxTransportTest.catalog(new ArrayList<>()));
                ApproxTransport client =
                        ApproxTransport.start(cfg(DataPlaneMode.ATP, atp().build(), false))) {
            TransportException e =
                    assertInstanceOf(
                            TransportException.class,
                            failure(client.connect(server.controlAddress()), LIVENESS_MS));
            System.out.println("atp, UDP blocked: " + e.getMessage());
            assertEquals(TransportException.Reason.CONNECT_FAILED, e.reason());
            assertTrue(e.noDataPlane(), "retrying cannot cure it: integrations fail, not degrade");
            assertTrue(e.getMessage().contains("not reachable over UDP"), e.getMessage());
            assertTrue(e.getMessage().contains("no answer over UDP within 300 ms"), e.getMessage());
            assertTrue(e.getMessage().contains("no fallback"), e.getMessage());
            TransportTestSupport.eventually(
                    "no session left",
                    LIVENESS_MS,
                    () ->
                            TransportTestSupport.noSessions(client)
                                    && TransportTestSupport.noSessions(server));
            assertEquals(0, client.dataPlaneMetrics().tcpPeers());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aReachablePeerStaysOnAtpWithoutAWarning() throws Exception {
        List<OutgoingTransfer> served = new ArrayList<>();
        try (LogCapture log = new LogCapture();
                ApproxTransport server =
                        ApproxTransport.start(
                                cfg(DataPlaneMode.AUTO, atp().build(), true),
                                ApproxTransportTest.catalog(served));
                ApproxTransport client =
                        ApproxTransport.start(cfg(DataPlaneMode.AUTO, atp().build(), false))) {
            ApproxPeer peer =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            assertEquals(DataPlaneKind.ATP, peer.dataPlane());
            assertEquals(DataPlaneKind.ATP, server.peers().get(0).dataPlane());
            transferMeetsEveryTarget(peer, served);
            assertEquals(0, client.dataPlaneMetrics().udpProbeFallbacks());
            assertEquals(1, client.dataPlaneMetrics().atpPeers());
            assertEquals(0, client.dataPlaneMetrics().tcpMessagesSent());
            assertTrue(log.warnings("TCP data plane").isEmpty(), log.warnings().toString());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void bothEndsAgreeOnThePlaneOrFailNamingWhatEachRuns() throws Exception {
        DataPlaneMode[][] tcpPairs = {
            {DataPlaneMode.TCP, DataPlaneMode.AUTO},
            {DataPlaneMode.AUTO, DataPlaneMode.TCP},
            {DataPlaneMode.TCP, DataPlaneMode.TCP}
        };
        for (DataPlaneMode[] pair : tcpPairs) { // client, server
            List<OutgoingTransfer> served = new ArrayList<>();
            try (ApproxTransport server =
                            ApproxTransport.start(
                                    cfg(pair[1], atp().build(), true),
                                    ApproxTransportTest.catalog(served));
                    ApproxTransport client =
                            ApproxTransport.start(cfg(pair[0], atp().build(), false))) {
                ApproxPeer peer =
                        client.connect(server.controlAddress())
                                .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
                assertEquals(DataPlaneKind.TCP, peer.dataPlane(), pair[0] + " to " + pair[1]);
                assertEquals(DataPlaneKind.TCP, server.peers().get(0).dataPlane());
                transferMeetsEveryTarget(peer, served);
                assertEquals(0, client.dataPlaneMetrics().udpProbeFallbacks(), "no probe");
            }
        }
        DataPlaneMode[][] none = {
            {DataPlaneMode.TCP, DataPlaneMode.ATP},
            {DataPlaneMode.ATP, DataPlaneMode.TCP}
        };
        for (DataPlaneMode[] pair : none) {
            try (ApproxTransport server =
                            ApproxTransport.start(
                                    cfg(pair[1], atp().build(), true),
                                    ApproxTransportTest.catalog(new ArrayList<>()));
                    ApproxTransport client =
                            ApproxTransport.start(cfg(pair[0], atp().build(), false))) {
                TransportException e =
                        assertInstanceOf(
                                TransportException.class,
                                failure(client.connect(server.controlAddress()), LIVENESS_MS));
                System.out.println(pair[0] + " to " + pair[1] + ": " + e.getMessage());
                assertTrue(
                        e.getMessage()
                                .contains(
                                        "no common data plane: the client runs "
                                                + pair[0].label()
                                                + ", this endpoint "
                                                + pair[1].label()),
                        e.getMessage());
            }
        }
    }
}
