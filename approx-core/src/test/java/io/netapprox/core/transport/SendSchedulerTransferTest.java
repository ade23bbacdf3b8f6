package io.netapprox.core.transport;

import static io.netapprox.core.engine.TestPayloads.fill;
import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobSpec;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link SendScheduler#sendAll} serving a real transfer over lossy loopback ATP, and over the TCP
 * data plane (batched engine sends on one, single sends on the other).
 */
class SendSchedulerTransferTest {

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aScheduledJobMeetsEveryTargetUnderLoss(DataPlaneMode plane) throws Exception {
        int size = 1024;
        long[] ids = {11, 22, 33, 44};
        int[] n = {300, 2000, 500, 50};
        double[] msr = {1.0, 0.05, 0.4, 0.9};
        CompletableFuture<Long> sentCount = new CompletableFuture<>();
        DataRequestHandler handler =
                request -> {
                    JobSpec spec = TransportTestSupport.spec(request.payload());
                    OutgoingJob job = request.startJob(spec);
                    int[] base = new int[spec.groups().size()];
                    for (int g = 1; g < base.length; g++) {
                        base[g] = base[g - 1] + spec.groups().get(g - 1).size();
                    }
                    sentCount.complete(
                            new SendScheduler(spec)
                                    .sendAll(
                                            job,
                                            (g, i, out) -> fill(out, base[g] + i, size),
                                            20,
                                            TimeUnit.SECONDS));
                };
        ApproxTransportConfig serverCfg =
                config(atp().faultInjection(0.3, 0.0, 7).build(), control().build(), plane).build();
        ApproxTransportConfig clientCfg =
                config(atp().build(), control().build(), plane).serverEnabled(false).build();
        try (ApproxTransport server = ApproxTransport.start(serverCfg, handler);
                ApproxTransport client = ApproxTransport.start(clientCfg)) {
            ApproxPeer peer = client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS);
            IncomingTransfer in =
                    peer.request(
                            TransportTestSupport.request(size, ids, n, msr), (t, m) -> m.release());
            TransferReport rr = in.report().get(40, TimeUnit.SECONDS);
            assertTrue(rr.isSuccess(), rr.toString());
            long sent = sentCount.get(10, TimeUnit.SECONDS);
            int targets = 0;
            for (int g = 0; g < ids.length; g++) {
                GroupReport got = rr.localReport().groups().get(g);
                int target = GroupSpec.of(ids[g], n[g], msr[g]).target();
                targets += target;
                assertTrue(got.delivered() >= target, got + " reached " + target);
            }
            assertTrue(sent >= targets, "sent " + sent + " >= the targets' sum " + targets);
            assertEquals(rr.delivered(), rr.localReport().delivered());
        }
    }
}
