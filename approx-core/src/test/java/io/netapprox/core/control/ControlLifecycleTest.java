package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.assertClosedByPeer;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.encode;
import static io.netapprox.core.control.TestSupport.eventually;
import static io.netapprox.core.control.TestSupport.failure;
import static io.netapprox.core.control.TestSupport.rawConnect;
import static io.netapprox.core.control.TestSupport.readError;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.ErrorMsg;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class ControlLifecycleTest {

    /** Never answers data requests until released. */
    static final class StallingHandler implements ControlHandler {
        final List<CompletableFuture<byte[]>> stalled = new CopyOnWriteArrayList<>();
        final List<ControlSession> sessions = new CopyOnWriteArrayList<>();

        @Override
        public void onSessionSetup(ControlSession session) {
            sessions.add(session);
        }

        @Override
        public CompletionStage<byte[]> onDataRequest(
                ControlSession session, int jobId, byte[] request) {
            CompletableFuture<byte[]> f = new CompletableFuture<>();
            stalled.add(f);
            return f;
        }
    }

    @Test
    void requestTimeoutFailsOnlyThatRequest() throws Exception {
        StallingHandler handler = new StallingHandler();
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), new RecordingDataPlane(1), handler);
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            ControlClient client = await(factory.connect(addressOf(server)));
            Throwable t = failure(client.requestData(5, new byte[] {1}, Duration.ofMillis(200)));
            assertInstanceOf(ControlTimeoutException.class, t);
            assertTrue(t.getMessage().contains("DATA_REQUEST"), t.getMessage());
            assertEquals(1, factory.metrics().requestTimeouts());
            assertTrue(client.isActive());
            assertTrue(await(client.ping()).toNanos() > 0);
            // The late answer is dropped and counted, not misdelivered.
            handler.stalled.get(0).complete(new byte[] {9});
            eventually("late response counted", () -> factory.metrics().lateResponses() == 1);
            assertTrue(client.isActive());
        }
    }

    @Test
    void peerDisconnectFailsPendingFutures() throws Exception {
        StallingHandler handler = new StallingHandler();
        RecordingDataPlane clientDp = new RecordingDataPlane(2);
        ControlServer server =
                ControlServer.start(serverConfig().build(), new RecordingDataPlane(1), handler);
        try (ControlClientFactory factory =
                new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            ControlClient client = await(factory.connect(addressOf(server)));
            List<CompletableFuture<byte[]>> pending = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                pending.add(client.requestData(i, new byte[0], Duration.ofSeconds(30)));
            }
            eventually("requests reached the server", () -> handler.stalled.size() == 5);
            server.close(); // the peer goes away
            // Failed by the close, not by the 30 s request timeout: a timeout fails with
            // ControlTimeoutException. (No wall-clock bound: a loaded machine may take seconds.)
            for (CompletableFuture<byte[]> f : pending) {
                assertInstanceOf(ControlClosedException.class, failure(f));
            }
            await(client.closeFuture());
            assertFalse(client.isActive());
            assertEquals(List.of(client.sessionId()), clientDp.closed);
            // New requests fail at once.
            assertInstanceOf(
                    ControlClosedException.class, failure(client.requestData(1, new byte[0])));
        } finally {
            server.close();
        }
    }

    @Test
    void serverSideCloseOfOneSessionFailsTheClientsPendingRequests() throws Exception {
        StallingHandler handler = new StallingHandler();
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), new RecordingDataPlane(1), handler);
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            ControlClient client = await(factory.connect(addressOf(server)));
            CompletableFuture<byte[]> f = client.requestData(1, new byte[0]);
            eventually("request reached the server", () -> handler.stalled.size() == 1);
            handler.sessions.get(0).close();
            assertInstanceOf(ControlClosedException.class, failure(f));
        }
    }

    @Test
    void connectFailuresAreReported() throws Exception {
        int freePort;
        try (ServerSocket ss = new ServerSocket(0)) {
            freePort = ss.getLocalPort();
        }
        try (ControlClientFactory factory =
                new ControlClientFactory(clientConfig().build(), new RecordingDataPlane(2), null)) {
            Throwable t =
                    failure(factory.connect(new InetSocketAddress(TestSupport.LOOPBACK, freePort)));
            assertInstanceOf(ConnectException.class, t);
        }
    }

    @Test
    void silentPeerHitsTheHandshakeTimeout() throws Exception {
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().handshakeTimeout(Duration.ofMillis(300)).build(),
                                new RecordingDataPlane(1),
                                new ControlHandler() {});
                Socket s = rawConnect(server)) {
            ErrorMsg e = readError(s);
            assertEquals(ErrorCode.HANDSHAKE_TIMEOUT, e.errorCode());
            assertClosedByPeer(s);
            assertEquals(1, server.metrics().handshakeTimeouts());
        }
    }

    @Test
    void idleTimeoutClosesDeadPeersButKeepalivesHoldHealthyOnes() throws Exception {
        // The healthy session is closed only if ten PINGs in a row are late: 600 ms (four) was
        // within reach of a loaded 2-core machine's scheduling stalls.
        Duration idle = Duration.ofMillis(1500);
        ControlConfig cfg =
                serverConfig().idleTimeout(idle).pingInterval(Duration.ofMillis(150)).build();
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server = ControlServer.start(cfg, serverDp, new ControlHandler() {});
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig()
                                        .idleTimeout(idle)
                                        .pingInterval(Duration.ofMillis(150))
                                        .build(),
                                new RecordingDataPlane(2),
                                null);
                Socket dead = rawConnect(server)) {
            ControlClient healthy = await(factory.connect(addressOf(server)));
            // A raw peer that sets up a session and then never answers anything.
            dead.getOutputStream().write(encode(1, TestSupport.hello("dead", 9)));
            TestSupport.readFrame(dead);
            dead.getOutputStream().write(encode(2, new Messages.SessionSetupMsg()));
            TestSupport.readFrame(dead);
            ErrorMsg e =
                    readError(
                            dead); // PINGs are skipped; the server gives up after the idle timeout
            assertEquals(ErrorCode.IDLE_TIMEOUT, e.errorCode());
            assertClosedByPeer(dead);
            // Not a synchronisation: the healthy session must outlive one more idle period.
            Thread.sleep(idle.toMillis() + 100);
            assertTrue(healthy.isActive(), "keepalive PINGs keep an idle but healthy session open");
            assertEquals(1, server.metrics().idleTimeouts());
            eventually("dead session closed on the data plane", () -> serverDp.closed.size() == 1);
        }
    }

    @Test
    void manyOpenCloseCyclesLeaveNoThreadsOrFileDescriptors() throws Exception {
        // Warm up (class loading, JDK-internal threads and fds such as the SecureRandom source).
        cycle(1);
        TestSupport.eventually("warm-up threads gone", () -> TestSupport.controlThreads() == 0);
        int fdsBefore = TestSupport.openFileDescriptors();
        for (int i = 0; i < 25; i++) {
            cycle(3);
        }
        TestSupport.eventually("control threads gone", () -> TestSupport.controlThreads() == 0);
        // A long-lived server and factory with many short connections.
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new ControlHandler() {});
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            for (int i = 0; i < 200; i++) {
                ControlClient c = await(factory.connect(addressOf(server)));
                c.close();
            }
            eventually(
                    "every server-side session closed",
                    () ->
                            serverDp.closed.size() == 200
                                    && server.metrics().activeConnections() == 0);
            assertEquals(200, server.metrics().sessionsOpened());
            assertEquals(0, server.metrics().warningsLogged(), server.metrics().toString());
        }
        TestSupport.eventually("control threads gone", () -> TestSupport.controlThreads() == 0);
        int fdsAfter = TestSupport.openFileDescriptors();
        assertTrue(
                fdsAfter <= fdsBefore + 4,
                "file descriptors before " + fdsBefore + ", after " + fdsAfter);
    }

    private static void cycle(int clients) throws Exception {
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(),
                                new RecordingDataPlane(1),
                                new ControlHandler() {});
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            for (int i = 0; i < clients; i++) {
                ControlClient c = await(factory.connect(addressOf(server)));
                await(c.ping());
            }
            // Leave the clients open: factory.close() and server.close() must clean them up.
        }
    }
}
