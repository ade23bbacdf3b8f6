package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.LIVENESS_MS;
import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static io.netapprox.core.transport.TransportTestSupport.failure;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Pushed jobs ({@link ApproxPeer#push}, JOB_ANNOUNCE with the PUSHED flag): two transports over
 * 127.0.0.1, real control plane and each data plane (the engine, or TCP). The pushing side is the
 * one that connected; the receiving side has a {@link PushHandler} and serves nothing.
 */
class ApproxTransportPushTest {
    private static final int SIZE = 4096;
    private static final long[] IDS = {11, 22};
    private static final int[] N = {300, 200};
    private static final double[] MSR = {1.0, 0.6};

    /** The receiving side: records every push it was offered and takes them with a Recorder. */
    static final class Receiver implements PushHandler {
        final List<IncomingTransfer> pushes = new ArrayList<>();
        final ApproxTransportTest.Recorder recorder = new ApproxTransportTest.Recorder(SIZE, 11);
        final List<byte[]> refusedByTransport = new ArrayList<>();
        final List<String> refusalReasons = new ArrayList<>();
        volatile boolean refuse;

        @Override
        public synchronized TransferListener onPush(IncomingTransfer t) {
            pushes.add(t);
            return refuse ? null : recorder;
        }

        @Override
        public synchronized void onRefused(byte[] descriptor, String reason) {
            refusedByTransport.add(descriptor);
            refusalReasons.add(reason);
        }

        synchronized List<byte[]> refusedByTransport() {
            return new ArrayList<>(refusedByTransport);
        }

        synchronized IncomingTransfer last() {
            return pushes.get(pushes.size() - 1);
        }
    }

    /** The test catalog (payload = job spec) served on the pushing side, optionally held. */
    static DataRequestHandler catalog(
            AtomicInteger requests, CountDownLatch hold, CountDownLatch held) {
        return r -> {
            if (!r.pushed()) {
                requests.incrementAndGet();
            }
            OutgoingJob job = r.startJob(TransportTestSupport.spec(r.payload()));
            if (hold != null) {
                held.countDown();
                hold.await();
            }
            TransportTestSupport.sendAll(
                    job, TransportTestSupport.messageBytes(r.payload()), -1, null);
        };
    }

    static byte[] payload(int[] n) {
        return TransportTestSupport.request(SIZE, IDS, n, MSR);
    }

    /** Waits until no pushed job holds {@code receiver}'s push budget. */
    static void awaitBudgetReleased(ApproxTransport receiver) throws InterruptedException {
        TransportTestSupport.eventually(
                "push budget released",
                LIVENESS_MS,
                () -> receiver.pushMetrics().pushedJobsOpen() == 0);
        assertEquals(0, receiver.pushMetrics().pushedMessagesOpen());
    }

    static ApproxTransportConfig.Builder receiverConfig(DataPlaneMode plane) {
        return config(atp().build(), control().build(), plane);
    }

    static ApproxTransportConfig pusherConfig(DataPlaneMode plane) {
        return config(atp().build(), control().build(), plane).serverEnabled(false).build();
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aPushedJobIsDeliveredToItsTargetsWithoutARequest(DataPlaneMode plane) throws Exception {
        Receiver rx = new Receiver();
        AtomicInteger requests = new AtomicInteger();
        try (ApproxTransport receiver =
                        ApproxTransport.start(receiverConfig(plane).build(), null, rx);
                ApproxTransport pusher =
                        ApproxTransport.start(pusherConfig(plane), catalog(requests, null, null))) {
            ApproxPeer peer =
                    pusher.connect(receiver.controlAddress())
                            .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            byte[] what = payload(N);
            OutgoingTransfer out = peer.push(what);
            assertTrue(out.pushed());
            out.jobStarted().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            TransferReport sent = out.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);

            IncomingTransfer in = rx.last();
            TransferReport got = in.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            assertTrue(in.pushed());
            assertEquals(out.jobId(), in.jobId());
            assertArrayEquals(what, in.descriptor(), "the descriptor says what the data is");
            assertNull(rx.recorder.error.get(), rx.recorder.error.get());
            for (int g = 0; g < IDS.length; g++) {
                GroupReport gr = got.groups().get(g);
                assertTrue(gr.delivered() >= GroupSpec.of(IDS[g], N[g], MSR[g]).target());
                assertEquals(
                        gr.delivered(),
                        rx.recorder.delivered.getOrDefault(IDS[g], java.util.Set.of()).size());
            }
            assertEquals(got.report(), sent.report(), "both sides hold the same JOB_REPORT");
            assertEquals(0, requests.get(), "no DATA_REQUEST was served");
            PushMetrics pm = receiver.pushMetrics();
            assertEquals(1, pm.pushesAccepted());
            assertEquals(0, pm.pushesRefused());
            awaitBudgetReleased(receiver);
            assertEquals(1, pusher.pushMetrics().pushesSent());
            assertEquals(0, pusher.pushMetrics().pushesRefusedByPeer());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aPushOverTheBudgetIsRefusedWithAClearErrorAndTheBudgetFreesWhenTheJobEnds(
            DataPlaneMode plane) throws Exception {
        Receiver rx = new Receiver();
        CountDownLatch hold = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(1);
        try (ApproxTransport receiver =
                        ApproxTransport.start(
                                receiverConfig(plane)
                                        .maxPushedJobs(1)
                                        .maxPushedMessages(600)
                                        .build(),
                                null,
                                rx);
                ApproxTransport pusher =
                        ApproxTransport.start(
                                pusherConfig(plane), catalog(new AtomicInteger(), hold, held))) {
            ApproxPeer peer =
                    pusher.connect(receiver.controlAddress())
                            .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            OutgoingTransfer first = pushHeld(peer, held);

            // One pushed job is open: a second one is over maxPushedJobs.
            OutgoingTransfer second = peer.push(payload(new int[] {10, 10}));
            TransportException e =
                    assertInstanceOf(TransportException.class, failure(second.jobStarted(), 0));
            assertEquals(TransportException.Reason.REJECTED, e.reason());
            assertTrue(e.getMessage().contains("maxPushedJobs 1"), e.getMessage());
            assertEquals(
                    TransportException.Reason.REJECTED,
                    ((TransportException) failure(second.report(), 0)).reason());
            assertEquals(1, receiver.pushMetrics().pushesRefused());
            assertEquals(1, receiver.pushMetrics().pushesOverBudget());
            assertEquals(1, pusher.pushMetrics().pushesRefusedByPeer());
            // the handler hears of the refusal (its receiver need not wait for this push)
            assertEquals(1, rx.refusedByTransport().size());
            assertArrayEquals(payload(new int[] {10, 10}), rx.refusedByTransport().get(0));
            synchronized (rx) {
                assertTrue(
                        rx.refusalReasons.get(0).contains("maxPushedJobs 1"),
                        rx.refusalReasons.toString());
            }

            hold.countDown();
            first.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            awaitBudgetReleased(receiver);

            // Alone, a job larger than maxPushedMessages is still refused...
            OutgoingTransfer big = peer.push(payload(new int[] {500, 101}));
            TransportException b =
                    assertInstanceOf(TransportException.class, failure(big.jobStarted(), 0));
            assertTrue(b.getMessage().contains("maxPushedMessages 600"), b.getMessage());
            assertEquals(2, rx.refusedByTransport().size());
            // ...and one within the budget is accepted: the session survived the refusals.
            OutgoingTransfer third = peer.push(payload(N));
            third.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            assertEquals(2, receiver.pushMetrics().pushesAccepted());
            assertEquals(2, receiver.pushMetrics().pushesOverBudget());
            assertTrue(peer.isActive());
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void aReceiverWithoutPushHandlerOrThatSaysNoRefusesAndAPullStillWorks(DataPlaneMode plane)
            throws Exception {
        Receiver rx = new Receiver();
        rx.refuse = true;
        AtomicInteger requests = new AtomicInteger();
        List<OutgoingTransfer> served = new ArrayList<>();
        try (ApproxTransport noHandler =
                        ApproxTransport.start(
                                receiverConfig(plane).build(),
                                ApproxTransportTest.catalog(served));
                ApproxTransport saysNo =
                        ApproxTransport.start(receiverConfig(plane).build(), null, rx);
                ApproxTransport pusher =
                        ApproxTransport.start(pusherConfig(plane), catalog(requests, null, null))) {
            ApproxPeer p1 =
                    pusher.connect(noHandler.controlAddress())
                            .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            Throwable e1 = failure(p1.push(payload(N)).jobStarted(), 0);
            assertTrue(e1.getMessage().contains("accepts no pushed jobs"), e1.getMessage());
            ApproxPeer p2 =
                    pusher.connect(saysNo.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            Throwable e2 = failure(p2.push(payload(N)).jobStarted(), 0);
            assertTrue(e2.getMessage().contains("does not want this job"), e2.getMessage());
            assertEquals(1, saysNo.pushMetrics().pushesRefused());
            assertEquals(0, saysNo.pushMetrics().pushesOverBudget());
            assertEquals(2, pusher.pushMetrics().pushesRefusedByPeer());
            awaitBudgetReleased(saysNo);

            // The fallback: the same data pulled over the same session.
            ApproxTransportTest.Recorder rec = new ApproxTransportTest.Recorder(SIZE, 11);
            TransferReport pulled =
                    p1.request(payload(N), rec).report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            assertTrue(pulled.isSuccess());
            assertEquals(N[0], pulled.groups().get(0).delivered(), "MSR 1: every message");
            assertEquals(1, served.size(), "the pull was served");
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void thePushersDeathMidJobFailsThePushedTransferAndFreesTheBudget(DataPlaneMode plane)
            throws Exception {
        Receiver rx = new Receiver();
        CountDownLatch hold = new CountDownLatch(1);
        CountDownLatch held = new CountDownLatch(1);
        try (ApproxTransport receiver =
                ApproxTransport.start(receiverConfig(plane).build(), null, rx)) {
            ApproxTransport pusher =
                    ApproxTransport.start(
                            pusherConfig(plane), catalog(new AtomicInteger(), hold, held));
            IncomingTransfer in;
            try {
                ApproxPeer peer =
                        pusher.connect(receiver.controlAddress())
                                .get(LIVENESS_MS, TimeUnit.MILLISECONDS);
                OutgoingTransfer out = pushHeld(peer, held);
                in = rx.last();
                assertEquals(1, receiver.pushMetrics().pushedJobsOpen());
            } finally {
                // The pushing process goes away mid-job (its serving thread, held before sending,
                // is interrupted by the close).
                pusher.close();
                hold.countDown();
            }
            // The receiver learns it from whichever arrives first: the control connection's end,
            // the data-plane session's failure, or the pusher's sealed CLOSE on the data session
            // (the job then ends with status CLOSED) - the same race as a requester's death
            // (ApproxTransportFailureTest).
            TransportException e =
                    assertInstanceOf(TransportException.class, failure(in.report(), 0));
            assertTrue(
                    e.reason() == TransportException.Reason.CONTROL_CLOSED
                            || e.reason() == TransportException.Reason.DATA_PLANE_FAILED
                            || (e.reason() == TransportException.Reason.JOB_FAILED
                                    && e.status() == AtpStatus.CLOSED),
                    e.toString());
            awaitBudgetReleased(receiver);
            assertEquals(0, TransportTestSupport.unreleased(receiver));
            CompletableFuture<Void> closed =
                    receiver.peers().isEmpty()
                            ? CompletableFuture.completedFuture(null)
                            : receiver.peers().get(0).closeFuture();
            closed.get(LIVENESS_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** Pushes N messages and waits until the job started and its serving thread is held. */
    private static OutgoingTransfer pushHeld(ApproxPeer peer, CountDownLatch held)
            throws Exception {
        OutgoingTransfer out = peer.push(payload(N));
        out.jobStarted().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
        assertTrue(held.await(LIVENESS_MS, TimeUnit.MILLISECONDS));
        return out;
    }
}
