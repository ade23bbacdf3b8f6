package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static io.netapprox.core.transport.TransportTestSupport.failure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.OutgoingJob;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * (c): the serving side goes away mid-job; the requester fails in bounded time and releases
 * everything - on either data plane.
 */
class ApproxTransportFailureTest {
    static final int SIZE = 16 * 1024;

    /**
     * Not shorter: while data flows, an engine kept off the CPU this long on a loaded machine is
     * declared dead, and the test would see a peer death instead of the failure it provokes. How
     * soon a failure is noticed is printed, not asserted; the bound is the tests' liveness wait.
     */
    static final Duration PEER_DEATH = Duration.ofMillis(2000);

    /**
     * Serves an endless-ish exact job (100,000 x 16 KiB); records the OutgoingTransfer and the
     * handler's exit.
     */
    static DataRequestHandler endless(
            CompletableFuture<OutgoingTransfer> served, CompletableFuture<Throwable> exit) {
        return request -> {
            served.complete(request);
            try {
                OutgoingJob job = request.startJob(TransportTestSupport.spec(request.payload()));
                TransportTestSupport.sendAll(job, SIZE, -1, null);
                exit.complete(null);
            } catch (Throwable t) {
                exit.complete(t);
                throw t;
            }
        };
    }

    static byte[] bigRequest() {
        return TransportTestSupport.request(
                SIZE, new long[] {1}, new int[] {100_000}, new double[] {1.0});
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void servingTransportClosedMidJobFailsTheRequesterPromptlyAndReleasesEverything(
            DataPlaneMode plane) throws Exception {
        long fdsBefore = TransportTestSupport.openFds();
        CompletableFuture<OutgoingTransfer> served = new CompletableFuture<>();
        CompletableFuture<Throwable> handlerExit = new CompletableFuture<>();
        ApproxTransportConfig clientCfg =
                config(atp().peerDeathTimeout(PEER_DEATH).build(), control().build(), plane)
                        .serverEnabled(false)
                        .build();
        ApproxTransportConfig serverCfg =
                config(atp().peerDeathTimeout(PEER_DEATH).build(), control().build(), plane)
                        .build();
        ApproxTransport server = ApproxTransport.start(serverCfg, endless(served, handlerExit));
        try (ApproxTransport client = ApproxTransport.start(clientCfg)) {
            ApproxPeer peer = client.connect(server.controlAddress()).get(30, TimeUnit.SECONDS);
            CountDownLatch some = new CountDownLatch(50);
            IncomingTransfer in =
                    peer.request(
                            bigRequest(),
                            (t, m) -> {
                                m.release();
                                some.countDown();
                            });
            assertTrue(some.await(30, TimeUnit.SECONDS), "data flows");
            long t0 = System.nanoTime();
            server.close();
            long closeMs = (System.nanoTime() - t0) / 1_000_000;
            Throwable e = failure(in.report(), 10_000);
            long failMs = (System.nanoTime() - t0) / 1_000_000;
            TransportException te = assertInstanceOf(TransportException.class, e);
            System.out.println(
                    "(c1) "
                            + plane
                            + ": serving transport closed (close took "
                            + closeMs
                            + " ms); requester failed after "
                            + failMs
                            + " ms: "
                            + te.getMessage());
            assertTrue(
                    EnumSet.of(
                                    TransportException.Reason.CONTROL_CLOSED,
                                    TransportException.Reason.JOB_FAILED,
                                    TransportException.Reason.DATA_PLANE_FAILED)
                            .contains(te.reason()),
                    te.reason().toString());
            // the serving side's handler was released from send() and the server's threads are gone
            assertTrue(
                    handlerExit.get(30, TimeUnit.SECONDS) != null,
                    "the serving handler's send() failed");
            assertTrue(served.get().report().isCompletedExceptionally());
            // requester: peer ended, nothing left
            peer.closeFuture().get(30, TimeUnit.SECONDS);
            assertTrue(!peer.isActive());
            assertEquals(0, peer.incomingTransfers());
            TransportTestSupport.eventually(
                    "requester released the session",
                    5000,
                    () -> TransportTestSupport.noSessions(client));
            assertEquals(0, TransportTestSupport.unreleased(client));
            assertTrue(server.peers().isEmpty() && !server.isOpen());
        } finally {
            server.close();
        }
        TransportTestSupport.eventually(
                "no transport threads",
                5000,
                () -> TransportTestSupport.transportThreads().isEmpty());
        TransportTestSupport.eventually(
                "fds back to " + fdsBefore,
                5000,
                () -> TransportTestSupport.openFds() <= fdsBefore);
    }

    @ParameterizedTest
    @EnumSource(
            value = DataPlaneMode.class,
            names = {"ATP", "TCP"})
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void servingDataPlaneDeathFailsTheRequesterAndClosesThePeer(DataPlaneMode plane)
            throws Exception {
        // The serving process's data plane dies while its control connection stays up: the
        // requester learns it from the data plane (ATP: the engine's best-effort CLOSE, or peer
        // death after PEER_DEATH; TCP: the data connection's end) and closes the peer.
        CompletableFuture<OutgoingTransfer> served = new CompletableFuture<>();
        CompletableFuture<Throwable> handlerExit = new CompletableFuture<>();
        ApproxTransportConfig clientCfg =
                config(atp().peerDeathTimeout(PEER_DEATH).build(), control().build(), plane)
                        .build();
        ApproxTransportConfig serverCfg =
                config(atp().peerDeathTimeout(PEER_DEATH).build(), control().build(), plane)
                        .build();
        try (ApproxTransport server =
                        ApproxTransport.start(serverCfg, endless(served, handlerExit));
                ApproxTransport client = ApproxTransport.start(clientCfg)) {
            ApproxPeer peer = client.connect(server.controlAddress()).get(30, TimeUnit.SECONDS);
            CountDownLatch some = new CountDownLatch(50);
            IncomingTransfer in =
                    peer.request(
                            bigRequest(),
                            (t, m) -> {
                                m.release();
                                some.countDown();
                            });
            assertTrue(some.await(30, TimeUnit.SECONDS), "data flows");
            long t0 = System.nanoTime();
            if (plane == DataPlaneMode.ATP) {
                server.endpoint().close();
            } else { // the serving side's data connection dies (reset), control stays up
                server.planes().tcp().sessions().get(0).channel().close();
            }
            Throwable e = failure(in.report(), 10_000);
            long failMs = (System.nanoTime() - t0) / 1_000_000;
            TransportException te = assertInstanceOf(TransportException.class, e);
            System.out.println(
                    "(c2) "
                            + plane
                            + ": serving data plane closed; requester failed after "
                            + failMs
                            + " ms: "
                            + te.getMessage()
                            + " status="
                            + te.status());
            // TCP: the serving side closes the control connection as soon as its data connection
            // ends, so the requester may learn of either end first (both fail the transfer).
            EnumSet<TransportException.Reason> expected =
                    EnumSet.of(
                            TransportException.Reason.JOB_FAILED,
                            TransportException.Reason.DATA_PLANE_FAILED);
            if (plane == DataPlaneMode.TCP) {
                expected.add(TransportException.Reason.CONTROL_CLOSED);
            }
            assertTrue(expected.contains(te.reason()), te.reason().toString());
            // the peer is closed on both sides (the data plane is gone, the control connection goes
            // with it)
            peer.closeFuture().get(30, TimeUnit.SECONDS);
            TransportTestSupport.eventually(
                    "both sides dropped the peer",
                    5000,
                    () -> TransportTestSupport.noSessions(client) && server.peers().isEmpty());
            assertTrue(
                    handlerExit.get(30, TimeUnit.SECONDS) != null,
                    "the serving handler's send() failed");
            assertTrue(served.get().report().isCompletedExceptionally());
            assertEquals(0, TransportTestSupport.unreleased(client));
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
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void requesterClosingThePeerFailsItsTransfersAsClosedAndReleasesTheServingThread(
            DataPlaneMode plane) throws Exception {
        CompletableFuture<OutgoingTransfer> served = new CompletableFuture<>();
        CompletableFuture<Throwable> handlerExit = new CompletableFuture<>();
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(
                                                atp().peerDeathTimeout(PEER_DEATH).build(),
                                                control().build(),
                                                plane)
                                        .build(),
                                endless(served, handlerExit));
                ApproxTransport client =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), plane).build())) {
            ApproxPeer peer = client.connect(server.controlAddress()).get(30, TimeUnit.SECONDS);
            CountDownLatch some = new CountDownLatch(20);
            IncomingTransfer in =
                    peer.request(
                            bigRequest(),
                            (t, m) -> {
                                m.release();
                                some.countDown();
                            });
            assertTrue(some.await(30, TimeUnit.SECONDS));
            peer.close();
            TransportException te =
                    assertInstanceOf(TransportException.class, failure(in.report(), 5000));
            assertEquals(TransportException.Reason.CLOSED, te.reason());
            assertTrue(handlerExit.get(30, TimeUnit.SECONDS) != null);
            Throwable se = failure(served.get().report(), 5000);
            System.out.println(
                    "(c3) "
                            + plane
                            + ": requester closed: requester "
                            + te.getMessage()
                            + "; server "
                            + se.getMessage());
            // The server learns it from whichever arrives first: the control connection's end, or
            // the requester's
            // sealed CLOSE on the data session (its job then ends with status CLOSED).
            TransportException ste = assertInstanceOf(TransportException.class, se);
            assertTrue(
                    ste.reason() == TransportException.Reason.CONTROL_CLOSED
                            || (ste.reason() == TransportException.Reason.JOB_FAILED
                                    && ste.status() == io.netapprox.core.job.AtpStatus.CLOSED),
                    ste.toString());
            TransportTestSupport.eventually(
                    "server released the session",
                    5000,
                    () -> TransportTestSupport.noSessions(server));
            // a closed peer refuses new requests at once
            TransportException again =
                    assertInstanceOf(
                            TransportException.class,
                            failure(
                                    peer.request(new byte[1], (t, m) -> m.release()).report(),
                                    1000));
            assertEquals(TransportException.Reason.CLOSED, again.reason());
        }
    }
}
