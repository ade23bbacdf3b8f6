package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.LIVENESS_MS;
import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.engine.AtpNative;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A platform where the ATP engine cannot load (here: {@code -Dio.netapprox.native.disable=true},
 * which makes loading fail as on a platform without a build; this class runs in its own JVM,
 * surefire execution {@code no-native}): {@code dataPlane=auto} runs every peer on TCP with one
 * WARN naming the reason and a counter, and {@code atp} refuses to start, naming the cause.
 */
class TransportWithoutNativeTest {

    @BeforeAll
    static void theEngineIsUnavailable() {
        // In another JVM (e.g. -Dtest=... runs it in the default execution too) it has nothing to
        // test: the library loads once per class loader.
        Assumptions.assumeTrue(
                Boolean.getBoolean("io.netapprox.native.disable"),
                "runs with -Dio.netapprox.native.disable=true (surefire execution no-native)");
        assertFalse(AtpNative.isAvailable());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void autoRunsEveryPeerOnTcpWithOneWarnAndACounter() throws Exception {
        List<OutgoingTransfer> served = new ArrayList<>();
        ApproxTransportConfig serverCfg =
                TransportTestSupport.config(atp().build(), control().build()).build();
        ApproxTransportConfig clientCfg =
                TransportTestSupport.config(atp().build(), control().build())
                        .serverEnabled(false)
                        .build();
        assertEquals(DataPlaneMode.AUTO, serverCfg.dataPlane(), "the default");
        try (LogCapture log = new LogCapture()) {
            try (ApproxTransport server =
                            ApproxTransport.start(serverCfg, ApproxTransportTest.catalog(served));
                    ApproxTransport client = ApproxTransport.start(clientCfg)) {
                List<String> warns = log.warnings("ATP engine cannot run on this platform");
                System.out.println("native unavailable: " + warns);
                assertEquals(2, warns.size(), "one WARN per transport: " + warns);
                for (String w : warns) {
                    assertTrue(w.contains("disabled by -Dio.netapprox.native.disable=true"), w);
                    assertTrue(w.contains("TCP data plane"), w);
                }
                for (ApproxTransport t : List.of(server, client)) {
                    DataPlaneMetrics m = t.dataPlaneMetrics();
                    assertFalse(m.atpAvailable());
                    assertEquals(1, m.nativeFallbacks());
                    assertTrue(m.atpUnavailableReason().contains("io.netapprox.native.disable"));
                    assertNull(t.endpoint());
                    assertEquals(0, t.dataPort());
                }
                for (int i = 0; i < 2; i++) { // more peers, no more WARN
                    ApproxPeer peer =
                            client.connect(server.controlAddress())
                                    .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
                    assertEquals(DataPlaneKind.TCP, peer.dataPlane());
                    assertNull(peer.dataSession());
                    DataPlaneFallbackTest.transferMeetsEveryTarget(peer, served);
                    peer.close();
                }
                assertEquals(2, client.dataPlaneMetrics().tcpPeers());
                assertEquals(0, client.dataPlaneMetrics().udpProbeFallbacks(), "no probe: no ATP");
                assertEquals(2, log.warnings("ATP engine cannot run").size());
            }
        }
    }

    @Test
    void atpRefusesToStartNamingTheCause() {
        TransportException e =
                assertThrows(
                        TransportException.class,
                        () ->
                                ApproxTransport.start(
                                        TransportTestSupport.config(
                                                        atp().build(),
                                                        control().build(),
                                                        DataPlaneMode.ATP)
                                                .build()));
        System.out.println("atp without the engine: " + e.getMessage());
        assertEquals(TransportException.Reason.DATA_PLANE_FAILED, e.reason());
        assertTrue(e.getMessage().contains("dataPlane=atp"), e.getMessage());
        assertTrue(
                e.getMessage().contains("disabled by -Dio.netapprox.native.disable=true"),
                e.getMessage());
        assertInstanceOf(UnsatisfiedLinkError.class, e.getCause());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void tcpNeedsNoEngine() throws Exception {
        List<OutgoingTransfer> served = new ArrayList<>();
        try (LogCapture log = new LogCapture();
                ApproxTransport server =
                        ApproxTransport.start(
                                TransportTestSupport.config(
                                                atp().build(), control().build(), DataPlaneMode.TCP)
                                        .build(),
                                ApproxTransportTest.catalog(served));
                ApproxTransport client =
                        ApproxTransport.start(
                                TransportTestSupport.config(
                                                atp().build(), control().build(), DataPlaneMode.TCP)
                                        .build())) {
            ApproxPeer peer =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            DataPlaneFallbackTest.transferMeetsEveryTarget(peer, served);
            assertEquals(0, client.dataPlaneMetrics().nativeFallbacks(), "tcp by choice");
            assertTrue(log.warnings("ATP engine").isEmpty());
        }
    }
}
