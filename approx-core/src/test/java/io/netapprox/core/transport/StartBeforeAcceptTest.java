package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static io.netapprox.core.transport.TransportTestSupport.eventually;
import static io.netapprox.core.transport.TransportTestSupport.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.engine.OutgoingJob;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link ApproxTransportConfig#startBeforeAccept()}: the serving side starts a requested job as
 * soon as it has announced it. The requester keeps its say - a transfer it gave up refuses the
 * announcement, and the server then cancels the running job and counts it - and its listener always
 * sees the announced groups (data arriving before the announcement is held).
 */
class StartBeforeAcceptTest {

    /**
     * The requester gives the transfer up while its request waits in the server's handler; the
     * handler then starts the job. With startBeforeAccept the job starts without waiting (startJob
     * returns a running job although the requester will refuse it), the refusal cancels it, the
     * server's transfer fails REJECTED and is counted, the requester drops the job's data and
     * counts it, and the session serves the next request. Without it (the old behaviour) startJob
     * waits for the refusal and throws.
     */
    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void aTransferGivenUpBeforeItsAnnouncementIsRefusedCancelledAndCounted(DataPlaneMode plane)
            throws Exception {
        for (boolean before : new boolean[] {true, false}) {
            CountDownLatch givenUp = new CountDownLatch(1);
            AtomicReference<OutgoingTransfer> first = new AtomicReference<>();
            AtomicReference<Object> startResult = new AtomicReference<>();
            DataRequestHandler handler =
                    request -> {
                        if (first.compareAndSet(null, request)) {
                            givenUp.await(20, TimeUnit.SECONDS);
                            OutgoingJob job;
                            try {
                                job =
                                        request.startJob(
                                                TransportTestSupport.spec(request.payload()));
                            } catch (RuntimeException e) {
                                startResult.set(e);
                                throw e;
                            }
                            startResult.set(job);
                            TransportTestSupport.sendAll(
                                    job,
                                    TransportTestSupport.messageBytes(request.payload()),
                                    -1,
                                    null);
                            return;
                        }
                        OutgoingJob job =
                                request.startJob(TransportTestSupport.spec(request.payload()));
                        TransportTestSupport.sendAll(
                                job,
                                TransportTestSupport.messageBytes(request.payload()),
                                -1,
                                null);
                    };
            try (ApproxTransport server =
                            ApproxTransport.start(
                                    config(atp().build(), control().build(), plane)
                                            .startBeforeAccept(before)
                                            .build(),
                                    handler);
                    ApproxTransport client =
                            ApproxTransport.start(
                                    config(atp().build(), control().build(), plane).build())) {
                ApproxPeer peer = client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS);
                byte[] req =
                        TransportTestSupport.request(
                                1024, new long[] {9}, new int[] {200}, new double[] {1.0});
                AtomicInteger seen = new AtomicInteger();
                IncomingTransfer t =
                        peer.request(
                                req,
                                (tr, m) -> {
                                    seen.incrementAndGet();
                                    m.release();
                                });
                eventually("the server took the request", 10_000, () -> first.get() != null);
                t.report().cancel(false); // the requester gives up
                givenUp.countDown();
                OutgoingTransfer served = first.get();
                TransportException e =
                        assertInstanceOf(
                                TransportException.class, failure(served.report(), 10_000));
                assertEquals(TransportException.Reason.REJECTED, e.reason(), e.getMessage());
                eventually("startJob returned or threw", 10_000, () -> startResult.get() != null);
                if (before) {
                    assertInstanceOf(
                            OutgoingJob.class,
                            startResult.get(),
                            "the job started without waiting for the requester's decision");
                    assertTrue(e.getMessage().contains("refused"), e.getMessage());
                    assertEquals(1, server.requestedJobsRefused());
                    OutgoingJob job = (OutgoingJob) startResult.get();
                    eventually("the refused job ended", 10_000, job::isDone);
                } else {
                    ControlException ce =
                            assertInstanceOf(ControlException.class, startResult.get());
                    assertEquals(ErrorCode.REQUEST_REJECTED, ce.code());
                    assertEquals(0, server.requestedJobsRefused());
                    assertEquals(
                            0,
                            client.messagesOfUnknownJobs(),
                            "nothing is sent before the acceptance");
                }
                assertEquals(0, seen.get(), "a given-up transfer's listener sees nothing");
                // the session still serves
                IncomingTransfer next = peer.request(req, (tr, m) -> m.release());
                TransferReport r = next.report().get(20, TimeUnit.SECONDS);
                assertEquals(200, r.delivered());
                assertTrue(peer.isActive());
            }
        }
    }

    /**
     * Many concurrent transfers with startBeforeAccept (the default): every message reaches a
     * listener that already knows the announced groups, every transfer completes with its target,
     * both sides agree, and no job is refused or message dropped.
     */
    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void everyMessageOfManyConcurrentTransfersArrivesAfterItsGroupsAreKnown(DataPlaneMode plane)
            throws Exception {
        List<OutgoingTransfer> served = new ArrayList<>();
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane)
                                        .serveThreads(4)
                                        .build(),
                                ApproxTransportTest.catalog(served));
                ApproxTransport client =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).build())) {
            assertTrue(server.config().startBeforeAccept(), "on by default");
            ApproxPeer peer = client.connect(server.controlAddress()).get(10, TimeUnit.SECONDS);
            AtomicBoolean groupsUnknown = new AtomicBoolean();
            AtomicInteger messages = new AtomicInteger();
            for (int round = 0; round < 10; round++) {
                List<IncomingTransfer> ts = new ArrayList<>();
                for (int i = 0; i < 16; i++) {
                    byte[] req =
                            TransportTestSupport.request(
                                    512,
                                    new long[] {1, 2},
                                    new int[] {3 + i, 20},
                                    new double[] {1.0, 0.5});
                    ts.add(
                            peer.request(
                                    req,
                                    (tr, m) -> {
                                        if (tr.groups() == null) {
                                            groupsUnknown.set(true);
                                        }
                                        messages.incrementAndGet();
                                        m.release();
                                    }));
                }
                for (IncomingTransfer t : ts) {
                    TransferReport r = t.report().get(30, TimeUnit.SECONDS);
                    assertTrue(r.isSuccess());
                    assertNotNull(t.groups());
                    assertTrue(r.groups().get(0).delivered() >= r.groups().get(0).size());
                    assertTrue(r.groups().get(1).delivered() >= 10);
                }
            }
            assertFalse(groupsUnknown.get(), "a message reached the listener before its groups");
            List<CompletableFuture<TransferReport>> reports = new ArrayList<>();
            synchronized (served) {
                for (OutgoingTransfer o : served) {
                    reports.add(o.report());
                }
            }
            assertEquals(160, reports.size());
            for (CompletableFuture<TransferReport> f : reports) {
                assertTrue(f.get(30, TimeUnit.SECONDS).isSuccess());
            }
            assertEquals(0, server.requestedJobsRefused());
            assertEquals(0, client.messagesOfUnknownJobs());
            assertTrue(messages.get() > 0);
            assertNull(peer.failure());
        }
    }
}
