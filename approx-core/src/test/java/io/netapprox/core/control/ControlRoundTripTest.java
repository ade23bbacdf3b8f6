package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.eventually;
import static io.netapprox.core.control.TestSupport.failure;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class ControlRoundTripTest {

    /**
     * A server-side handler that records everything and accepts jobs unless the descriptor says
     * "no".
     */
    static final class RecordingHandler implements ControlHandler {
        final List<ControlSession> sessions = new CopyOnWriteArrayList<>();
        final List<ControlSession> closedSessions = new CopyOnWriteArrayList<>();
        final List<JobAnnouncement> jobs = new CopyOnWriteArrayList<>();
        final List<MsrUpdate> updates = new CopyOnWriteArrayList<>();
        final List<JobReport> reports = new CopyOnWriteArrayList<>();

        @Override
        public void onSessionSetup(ControlSession session) {
            sessions.add(session);
        }

        @Override
        public void onSessionClosed(ControlSession session) {
            closedSessions.add(session);
        }

        @Override
        public CompletionStage<JobDecision> onJobAnnounce(
                ControlSession session, JobAnnouncement job) {
            jobs.add(job);
            String d = new String(job.descriptor(), StandardCharsets.UTF_8);
            return CompletableFuture.completedFuture(
                    d.equals("no")
                            ? JobDecision.reject("job " + job.jobId() + " refused: no buffer")
                            : JobDecision.accept());
        }

        @Override
        public CompletionStage<byte[]> onDataRequest(
                ControlSession session, int jobId, byte[] request) {
            String r = new String(request, StandardCharsets.UTF_8);
            if (r.equals("reject")) {
                throw new ControlException(ErrorCode.REQUEST_REJECTED, "unknown shuffle block");
            }
            if (r.equals("bug")) {
                throw new IllegalStateException("secret internal detail");
            }
            // Reply asynchronously from another thread, as an integration would after starting the
            // job.
            return CompletableFuture.supplyAsync(
                    () -> ("job " + jobId + " will carry " + r).getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public void onMsrUpdate(ControlSession session, MsrUpdate update) {
            updates.add(update);
        }

        @Override
        public void onJobReport(ControlSession session, JobReport report) {
            reports.add(report);
        }
    }

    @Test
    void fullHandshakeSessionJobMsrAndReportRoundTrip() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(40001);
        RecordingDataPlane clientDp = new RecordingDataPlane(40002);
        RecordingHandler serverHandler = new RecordingHandler();
        List<JobAnnouncement> clientJobs = new CopyOnWriteArrayList<>();
        ControlHandler clientHandler =
                new ControlHandler() {
                    @Override
                    public CompletionStage<JobDecision> onJobAnnounce(
                            ControlSession s, JobAnnouncement job) {
                        clientJobs.add(job);
                        return CompletableFuture.completedFuture(JobDecision.accept());
                    }
                };
        try (ControlServer server =
                        ControlServer.start(serverConfig().build(), serverDp, serverHandler);
                ControlClientFactory factory =
                        new ControlClientFactory(clientConfig().build(), clientDp, clientHandler)) {
            ControlClient client = await(factory.connect(addressOf(server)));

            // Session setup: one random id and key, opened on both data planes, initiator = client.
            assertEquals(1, clientDp.openCount());
            eventually(
                    "server session",
                    () -> serverDp.openCount() == 1 && serverHandler.sessions.size() == 1);
            RecordingDataPlane.Opened c = clientDp.opened.get(0);
            RecordingDataPlane.Opened s = serverDp.opened.get(0);
            assertEquals(c.sessionId(), s.sessionId());
            assertNotEquals(0L, c.sessionId());
            assertEquals(client.sessionId(), c.sessionId());
            assertEquals(32, c.key().length);
            assertArrayEquals(c.key(), s.key());
            assertFalse(
                    java.util.Arrays.equals(c.key(), new byte[32]),
                    "key must be random, not zeros");
            assertTrue(c.initiator());
            assertFalse(s.initiator());
            assertEquals(new InetSocketAddress(TestSupport.LOOPBACK, 40001), c.peer());
            assertEquals(new InetSocketAddress(TestSupport.LOOPBACK, 40002), s.peer());
            assertEquals("server", client.peerEndpointId());
            assertEquals("client", serverHandler.sessions.get(0).peerEndpointId());
            assertEquals(4, client.protocolVersion());
            assertEquals(java.util.Set.of(DataPlaneKind.ATP), client.dataPlanes());

            // JOB_ANNOUNCE -> JOB_ACCEPT, with groups, MSRs and an opaque descriptor.
            JobAnnouncement job =
                    JobAnnouncement.ofGroups(
                            7,
                            List.of(
                                    new GroupSpec(11L, 100, 0.5),
                                    new GroupSpec(-3L, 20, 1.0),
                                    new GroupSpec(42L, 1, 0.0)),
                            true,
                            new byte[] {1, 2, 3});
            assertTrue(await(client.announceJob(job)).accepted());
            assertEquals(job, serverHandler.jobs.get(0));
            // ... a global-MSR job, and a rejected one with its reason.
            JobAnnouncement global = JobAnnouncement.global(8, 1000, 0.8, false, null);
            assertTrue(await(client.announceJob(global)).accepted());
            assertTrue(serverHandler.jobs.get(1).isGlobalMsr());
            assertEquals(1000, serverHandler.jobs.get(1).totalMessages());
            JobDecision rejected =
                    await(
                            client.announceJob(
                                    JobAnnouncement.global(
                                            9,
                                            5,
                                            0.1,
                                            false,
                                            "no".getBytes(StandardCharsets.UTF_8))));
            assertFalse(rejected.accepted());
            assertEquals("job 9 refused: no buffer", rejected.reason());

            // DATA_REQUEST with correlation; many concurrent requests get their own answers.
            List<CompletableFuture<byte[]>> answers = new java.util.ArrayList<>();
            for (int i = 0; i < 50; i++) {
                answers.add(client.requestData(i, ("block-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            for (int i = 0; i < 50; i++) {
                assertEquals(
                        "job " + i + " will carry block-" + i,
                        new String(await(answers.get(i)), StandardCharsets.UTF_8));
            }

            // MSR_UPDATE.
            MsrUpdate update =
                    new MsrUpdate(
                            7, List.of(new MsrUpdate.Change(0, 0.6), new MsrUpdate.Change(2, 0.9)));
            await(client.updateMsr(update));
            assertEquals(update, serverHandler.updates.get(0));

            // JOB_REPORT: ids as ranges and as a bitset, priority times, loss.
            IdSet delivered0 = IdSet.ofRange(0, 60);
            IdSet lost0 = IdSet.ofRange(60, 40);
            int[] scattered = new int[300];
            for (int i = 0; i < scattered.length; i++) {
                scattered[i] = 100 + 2 * i; // every other id: the bitset is smaller than 300 ranges
            }
            IdSet delivered1 = IdSet.of(scattered);
            assertTrue(IdSetCodec.usesBitmap(delivered1));
            JobReport report =
                    JobReport.outcome(
                            7,
                            AtpStatus.OK,
                            123_456_789L,
                            17,
                            0.25,
                            new long[] {5, 0, 0, 7, 0, 0, 0, 9},
                            List.of(
                                    GroupReport.ofIds(11L, 100, delivered0, lost0),
                                    GroupReport.ofIds(-3L, 600, delivered1, IdSet.empty())));
            await(client.sendReport(report));
            JobReport got = serverHandler.reports.get(0);
            assertEquals(report, got);
            assertEquals(60, got.groups().get(0).delivered());
            assertEquals(40, got.groups().get(0).lost());
            assertTrue(got.groups().get(1).deliveredIds().contains(598));
            assertFalse(got.groups().get(1).deliveredIds().contains(599));

            // The protocol is symmetric: the server announces a job to the client on the same
            // connection.
            ControlSession serverSide = serverHandler.sessions.get(0);
            assertTrue(
                    await(serverSide.announceJob(JobAnnouncement.global(1, 3, 1.0, false, null)))
                            .accepted());
            assertEquals(1, clientJobs.size());
            // ... and the client's default handler refuses what it does not implement.
            Throwable t = failure(serverSide.requestData(1, new byte[0]));
            assertEquals(ErrorCode.UNSUPPORTED, assertInstanceOf(ControlException.class, t).code());

            assertTrue(await(client.ping()).toNanos() > 0);

            // Clean close: data-plane sessions closed on both sides, the handler told, nothing
            // logged at WARN.
            client.close();
            assertFalse(client.isActive());
            assertTrue(client.closeFuture().isDone());
            assertEquals(List.of(c.sessionId()), clientDp.closed);
            eventually(
                    "server-side session closed",
                    () -> serverDp.closed.size() == 1 && serverHandler.closedSessions.size() == 1);
            assertEquals(1, server.metrics().sessionsOpened());
            assertEquals(1, server.metrics().sessionsClosed());
            assertEquals(0, server.metrics().warningsLogged(), server.metrics().toString());
            assertEquals(0, factory.metrics().warningsLogged(), factory.metrics().toString());
        }
    }

    @Test
    void handlerRejectionsAndFailuresAnswerOneRequestAndKeepTheConnection() throws Exception {
        RecordingHandler handler = new RecordingHandler();
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), new RecordingDataPlane(1), handler);
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            ControlClient client = await(factory.connect(addressOf(server)));
            ControlException rejected =
                    assertInstanceOf(
                            ControlException.class,
                            failure(
                                    client.requestData(
                                            1, "reject".getBytes(StandardCharsets.UTF_8))));
            assertEquals(ErrorCode.REQUEST_REJECTED, rejected.code());
            assertTrue(rejected.isRemote());
            assertTrue(
                    rejected.getMessage().contains("unknown shuffle block"), rejected.getMessage());

            ControlException bug =
                    assertInstanceOf(
                            ControlException.class,
                            failure(client.requestData(1, "bug".getBytes(StandardCharsets.UTF_8))));
            assertEquals(ErrorCode.HANDLER_ERROR, bug.code());
            assertFalse(
                    bug.getMessage().contains("secret internal detail"), "internals must not leak");
            assertEquals(1, server.metrics().handlerErrors());

            // Still usable.
            assertEquals(
                    "job 3 will carry x",
                    new String(
                            await(client.requestData(3, "x".getBytes(StandardCharsets.UTF_8))),
                            StandardCharsets.UTF_8));
            assertTrue(client.isActive());
        }
    }

    @Test
    void wildcardDataAddressResolvesToTheControlPeerAndSessionsAreDistinct() throws Exception {
        RecordingDataPlane serverDp =
                new RecordingDataPlane(InetAddress.getByName("0.0.0.0"), 5000);
        RecordingDataPlane clientDp =
                new RecordingDataPlane(InetAddress.getByName("0.0.0.0"), 6000);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new RecordingHandler());
                ControlClientFactory factory =
                        new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            ControlClient a = await(factory.connect(addressOf(server)));
            ControlClient b = await(factory.connect(addressOf(server)));
            assertEquals(new InetSocketAddress(TestSupport.LOOPBACK, 5000), a.peerDataAddress());
            eventually("two server sessions", () -> serverDp.openCount() == 2);
            assertEquals(
                    new InetSocketAddress(TestSupport.LOOPBACK, 6000),
                    serverDp.opened.get(0).peer());
            assertNotEquals(a.sessionId(), b.sessionId());
            assertFalse(
                    java.util.Arrays.equals(
                            clientDp.opened.get(0).key(), clientDp.opened.get(1).key()));
            eventually("two established server sessions", () -> server.sessions().size() == 2);
        }
    }

    @Test
    void dataPlaneRefusalFailsTheSessionOnBothSides() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        serverDp.failOpen = true;
        RecordingDataPlane clientDp = new RecordingDataPlane(2);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new RecordingHandler());
                ControlClientFactory factory =
                        new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            ControlException e =
                    assertInstanceOf(
                            ControlException.class, failure(factory.connect(addressOf(server))));
            assertEquals(ErrorCode.SESSION_FAILED, e.code());
            assertEquals(0, clientDp.openCount());
            assertEquals(1, server.metrics().sessionFailures());
        }
    }

    @Test
    void oversizedOutboundRequestFailsLocally() throws Exception {
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(),
                                new RecordingDataPlane(1),
                                new RecordingHandler());
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            ControlClient client = await(factory.connect(addressOf(server)));
            Throwable t = failure(client.requestData(1, new byte[(1 << 20) + 1]));
            assertInstanceOf(IllegalArgumentException.class, t);
            assertTrue(t.getMessage().contains("exceeds the frame limit"), t.getMessage());
            assertTrue(client.isActive());
        }
    }
}
