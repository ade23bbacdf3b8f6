package io.netapprox.core.transport;

import static io.netapprox.core.engine.TestPayloads.fill;
import static io.netapprox.core.transport.TransportTestSupport.LIVENESS_MS;
import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobSpec;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The TCP data plane's send policies, named after the paper's baselines: SampleSend sends each
 * group's target and nothing else; EarlySend sends in {@link SendScheduler} order until the
 * receiver's completion stops it. Either way nothing is lost, and the report is exactly what the
 * listener got.
 */
class TcpSendPolicyTest {
    private static final int SIZE = 64;

    /**
     * Serves the test catalog with {@link SendScheduler#sendAll}; completes with the count sent.
     */
    static DataRequestHandler scheduled(CompletableFuture<Long> sent) {
        return request -> {
            JobSpec spec = TransportTestSupport.spec(request.payload());
            OutgoingJob job = request.startJob(spec);
            int[] base = new int[spec.groups().size()];
            for (int g = 1; g < base.length; g++) {
                base[g] = base[g - 1] + spec.groups().get(g - 1).size();
            }
            sent.complete(
                    new SendScheduler(spec)
                            .sendAll(
                                    job,
                                    (g, i, out) -> fill(out, base[g] + i, SIZE),
                                    LIVENESS_MS,
                                    TimeUnit.MILLISECONDS));
        };
    }

    private static ApproxTransportConfig tcp(TcpSendPolicy policy, boolean server) {
        return config(atp().build(), control().build(), DataPlaneMode.TCP)
                .tcpSendPolicy(policy)
                .serverEnabled(server)
                .build();
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void sampleSendSendsExactlyEachGroupsTargetAndFinishes() throws Exception {
        long[] ids = {1, 2, 3, 4};
        int[] n = {1000, 500, 300, 40};
        double[] msr = {0.1, 0.5, 1.0, 0.0};
        CompletableFuture<Long> sent = new CompletableFuture<>();
        try (ApproxTransport server =
                        ApproxTransport.start(
                                tcp(TcpSendPolicy.SAMPLE_SEND, true), scheduled(sent));
                ApproxTransport client =
                        ApproxTransport.start(tcp(TcpSendPolicy.SAMPLE_SEND, false))) {
            ApproxPeer peer =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            ApproxTransportTest.Recorder rec = new ApproxTransportTest.Recorder(SIZE, 3);
            TransferReport r =
                    peer.request(TransportTestSupport.request(SIZE, ids, n, msr), rec)
                            .report()
                            .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            long targets = 0;
            for (int g = 0; g < ids.length; g++) {
                int target = GroupSpec.of(ids[g], n[g], msr[g]).target();
                targets += target;
                GroupReport gr = r.groups().get(g);
                assertEquals(target, gr.delivered(), "group " + ids[g] + ": exactly its target");
                assertEquals(n[g] - target, gr.lost());
                assertEquals(
                        ApproxTransportTest.toSet(gr.deliveredIds()),
                        new TreeSet<>(rec.delivered.getOrDefault(ids[g], Set.of())));
            }
            assertEquals(650, targets);
            assertNull(rec.error.get(), rec.error.get());
            assertEquals(targets, sent.get(LIVENESS_MS, TimeUnit.MILLISECONDS), "sendAll's count");
            assertEquals(targets, server.dataPlaneMetrics().tcpMessagesSent(), "on the wire");
            assertEquals(targets, client.dataPlaneMetrics().tcpMessagesReceived());
            assertEquals(0, client.dataPlaneMetrics().tcpMessagesDiscarded());
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void earlySendStopsAtTheReceiversCompletionAndLosesNothing() throws Exception {
        long[] ids = {7, 8};
        int[] n = {200_000, 200_000};
        double[] msr = {0.01, 0.02};
        CompletableFuture<Long> sent = new CompletableFuture<>();
        try (ApproxTransport server =
                        ApproxTransport.start(
                                tcp(TcpSendPolicy.EARLY_SEND, true), scheduled(sent));
                ApproxTransport client =
                        ApproxTransport.start(tcp(TcpSendPolicy.EARLY_SEND, false))) {
            ApproxPeer peer =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            ApproxTransportTest.Recorder rec = new ApproxTransportTest.Recorder(SIZE, -1);
            TransferReport r =
                    peer.request(TransportTestSupport.request(SIZE, ids, n, msr), rec)
                            .report()
                            .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            long s = sent.get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            long targets = 0;
            for (int g = 0; g < ids.length; g++) {
                int target = GroupSpec.of(ids[g], n[g], msr[g]).target();
                targets += target;
                GroupReport gr = r.groups().get(g);
                assertTrue(gr.delivered() >= target, gr + " reached " + target);
                assertEquals(
                        ApproxTransportTest.toSet(gr.deliveredIds()),
                        new TreeSet<>(rec.delivered.getOrDefault(ids[g], Set.of())),
                        "the report is what the listener got");
            }
            assertNull(rec.error.get(), rec.error.get());
            System.out.printf(
                    "earlySend: targets %d, delivered %d, sent %d of %d (stopped by DONE)%n",
                    targets, r.delivered(), s, 400_000);
            assertTrue(s >= targets, "sent " + s + " >= the targets " + targets);
            // The receiver's DONE ended sendAll long before the job's 400k messages: at most the
            // connection's buffers (stage, Netty's watermark, the sockets) went past completion.
            assertTrue(s < 200_000, "sent " + s + " of 400000: the completion stopped the sender");
            // Nothing is lost on TCP: every message sent was delivered before completion or
            // arrived after it and was discarded (never reaching the listener or the report).
            TransportTestSupport.eventually(
                    "every sent message accounted for",
                    LIVENESS_MS,
                    () ->
                            client.dataPlaneMetrics().tcpMessagesReceived()
                                            + client.dataPlaneMetrics().tcpMessagesDiscarded()
                                    == s);
            assertEquals(r.delivered(), client.dataPlaneMetrics().tcpMessagesReceived());
            assertEquals(s, server.dataPlaneMetrics().tcpMessagesSent());
        }
    }
}
