package io.netapprox.core.transport;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One side of {@code UdpBlockedLabTest}, run as its own JVM inside a network namespace.
 *
 * <pre>
 * server BIND MODE                    serves the test catalog; prints "CONTROL port", runs until stdin closes
 * client BIND HOST:PORT MODE PROBE_MS connects, pulls one 3-group job; prints PLANE, TARGETS_MET,
 *                                     UDP_PROBE_FALLBACKS; exit 0, or 3 with CONNECT_FAILED message
 * </pre>
 */
public final class LabPeer {
    static final int SIZE = 1024;
    static final long[] IDS = {1, 2, 3};
    static final int[] N = {300, 400, 500};
    static final double[] MSR = {1.0, 0.7, 0.3};

    private LabPeer() {}

    static ApproxTransportConfig.Builder config(String bind, DataPlaneMode mode, Duration probe)
            throws Exception {
        return ApproxTransportConfig.builder()
                .atp(ApproxTransportConfig.defaultAtp().bindAddress(bind).build())
                .control(
                        ControlConfig.builder()
                                .bindAddress(InetAddress.getByName(bind))
                                .port(0)
                                .build())
                .dataPlane(mode)
                .udpProbeTimeout(probe);
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            List<OutgoingTransfer> served = new ArrayList<>();
            try (ApproxTransport t =
                    ApproxTransport.start(
                            config(args[1], DataPlaneMode.parse(args[2]), Duration.ofSeconds(2))
                                    .build(),
                            ApproxTransportTest.catalog(served))) {
                System.out.println("CONTROL " + t.controlAddress().getPort());
                System.out.flush();
                while (System.in.read() >= 0) {
                    // until the test closes our stdin
                }
            }
            return;
        }
        String[] hp = args[2].split(":");
        try (ApproxTransport t =
                ApproxTransport.start(
                        config(
                                        args[1],
                                        DataPlaneMode.parse(args[3]),
                                        Duration.ofMillis(Long.parseLong(args[4])))
                                .serverEnabled(false)
                                .build())) {
            ApproxPeer peer;
            try {
                peer =
                        t.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])))
                                .get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                System.out.println("CONNECT_FAILED " + e.getCause().getMessage());
                System.out.flush();
                System.exit(3);
                return;
            }
            System.out.println("PLANE " + peer.dataPlane());
            TransferReport r =
                    peer.request(
                                    TransportTestSupport.request(SIZE, IDS, N, MSR),
                                    (x, m) -> m.release())
                            .report()
                            .get(60, TimeUnit.SECONDS);
            boolean met = true;
            for (int g = 0; g < IDS.length; g++) {
                GroupReport gr = r.groups().get(g);
                met &= gr.delivered() >= GroupSpec.of(IDS[g], N[g], MSR[g]).target();
            }
            System.out.println("REPORT " + r);
            System.out.println("TARGETS_MET " + met);
            System.out.println("UDP_PROBE_FALLBACKS " + t.dataPlaneMetrics().udpProbeFallbacks());
            System.out.flush();
        }
    }
}
