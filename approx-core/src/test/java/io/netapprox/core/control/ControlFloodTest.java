package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.assertClosedByPeer;
import static io.netapprox.core.control.TestSupport.encode;
import static io.netapprox.core.control.TestSupport.eventually;
import static io.netapprox.core.control.TestSupport.rawConnect;
import static io.netapprox.core.control.TestSupport.readFrame;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.HelloAckMsg;
import io.netapprox.core.control.Messages.PingMsg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import io.netapprox.core.control.Messages.SessionSetupMsg;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Floods from peers over real sockets: the control plane answers nothing but the handshake before a
 * session is set up, stops reading while its peer does not read, bounds what it queues per
 * connection, and its timeouts close the connection even with a backlog.
 */
class ControlFloodTest {
    private static final String SECRET = "flood-test-secret-0123456789";

    private ControlServer server;

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static ControlHandler replyWith(int bytes) {
        return new ControlHandler() {
            @Override
            public CompletionStage<byte[]> onDataRequest(
                    ControlSession s, int jobId, byte[] request) {
                return CompletableFuture.completedFuture(new byte[bytes]);
            }
        };
    }

    /**
     * Slow-loris: connections that send nothing hold a slot until the handshake timeout; past
     * {@code maxConnections} the server answers OVERLOADED and closes at once, and a slot freed is
     * usable again. Before, every connection was accepted (no bound on descriptors).
     */
    @Test
    void connectionsBeyondMaxConnectionsAreRefusedWithAClearError() throws Exception {
        RecordingDataPlane dp = new RecordingDataPlane(7000);
        server =
                ControlServer.start(
                        serverConfig().maxConnections(2).build(), dp, new ControlHandler() {});
        try (Socket idle1 = rawConnect(server);
                Socket idle2 = rawConnect(server)) {
            eventually("two connections open", () -> server.metrics().activeConnections() == 2);
            try (Socket third = rawConnect(server)) {
                ErrorMsg e = TestSupport.readError(third);
                assertEquals(ErrorCode.OVERLOADED, e.errorCode(), e.toString());
                assertTrue(e.message().contains("maxConnections"), e.message());
                assertClosedByPeer(third);
            }
            try (ControlClientFactory clients =
                    new ControlClientFactory(
                            TestSupport.clientConfig().build(),
                            new RecordingDataPlane(7001),
                            null)) {
                ControlException refused =
                        assertInstanceOf(
                                ControlException.class,
                                TestSupport.failure(clients.connect(addressOf(server))));
                assertEquals(ErrorCode.OVERLOADED, refused.code(), refused.toString());
                assertEquals(2, server.metrics().connectionsRefused());
                assertEquals(0, dp.openCount());
                idle1.close();
                eventually("a slot is free", () -> server.metrics().activeConnections() == 1);
                assertTrue(TestSupport.await(clients.connect(addressOf(server))).isActive());
                assertEquals(1, dp.openCount());
            }
        }
    }

    @Test
    void pingBeforeTheHandshakeIsRefusedNotAnswered() throws IOException {
        server =
                ControlServer.start(
                        serverConfig().build(),
                        new RecordingDataPlane(7000),
                        new ControlHandler() {});
        try (Socket s = rawConnect(server)) {
            s.getOutputStream().write(encode(5, new PingMsg()));
            Frame f = readFrame(s);
            assertInstanceOf(ErrorMsg.class, f.msg(), "expected ERROR, got " + f.msg());
            assertEquals(
                    ErrorCode.UNEXPECTED_MESSAGE, ((ErrorMsg) f.msg()).errorCode(), f.toString());
            assertClosedByPeer(s);
        }
        assertEquals(1, server.metrics().unexpectedMessages());
    }

    @Test
    void pingAfterHelloButBeforeAuthenticationIsRefused() throws IOException {
        server =
                ControlServer.start(
                        serverConfig().authSecret(SECRET).build(),
                        new RecordingDataPlane(7000),
                        new ControlHandler() {});
        try (Socket s = rawConnect(server)) {
            s.getOutputStream().write(encode(1, TestSupport.hello("x", 9)));
            assertInstanceOf(HelloAckMsg.class, readFrame(s).msg());
            s.getOutputStream().write(encode(0, new PingMsg()));
            Frame f = readFrame(s);
            assertInstanceOf(ErrorMsg.class, f.msg(), "expected ERROR, got " + f.msg());
            assertEquals(ErrorCode.UNEXPECTED_MESSAGE, ((ErrorMsg) f.msg()).errorCode());
            assertClosedByPeer(s);
        }
    }

    /**
     * A raw client: handshake (no authentication) over a blocking channel, then the channel is
     * non-blocking.
     */
    private static SocketChannel establish(ControlServer server, int receiveBuffer)
            throws IOException {
        SocketChannel ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.SO_RCVBUF, receiveBuffer);
        ch.setOption(StandardSocketOptions.SO_SNDBUF, 64 << 10);
        ch.connect(addressOf(server));
        Socket s = ch.socket();
        s.setSoTimeout(TestSupport.LIVENESS_MS);
        s.getOutputStream().write(encode(1, TestSupport.hello("flooder", 9)));
        assertInstanceOf(HelloAckMsg.class, readFrame(s).msg());
        s.getOutputStream().write(encode(1, new SessionSetupMsg()));
        assertInstanceOf(SessionSetupAckMsg.class, readFrame(s).msg());
        ch.configureBlocking(false);
        return ch;
    }

    /**
     * Writes {@code frames} (repeated) without ever reading, until {@code limit} bytes are written
     * or the server ends the connection. Returns the bytes written; waits for writability with a
     * selector, at most 30 s in total.
     */
    private static long floodWithoutReading(SocketChannel ch, byte[] frames, long limit)
            throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(frames);
        long written = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        try (Selector sel = Selector.open()) {
            ch.register(sel, SelectionKey.OP_WRITE);
            while (written < limit && System.nanoTime() < deadline) {
                if (!buf.hasRemaining()) {
                    buf.rewind();
                }
                int n = ch.write(buf);
                written += n;
                if (n == 0) {
                    sel.select(200);
                    sel.selectedKeys().clear();
                }
            }
        } catch (IOException e) {
            // reset / broken pipe: the server closed the connection
        }
        return written;
    }

    private static byte[] repeat(byte[] frame, int times) {
        byte[] out = new byte[frame.length * times];
        for (int i = 0; i < times; i++) {
            System.arraycopy(frame, 0, out, i * frame.length, frame.length);
        }
        return out;
    }

    @Test
    void pingFloodFromAPeerThatNeverReadsStopsTheReaderAndTheIdleTimeoutCloses() throws Exception {
        // Without flow control the server read all 16 MiB, queued a PONG for each of the 1 Mi
        // PINGs, and its idle
        // timeout queued the ERROR (and the close) behind that backlog, so the connection never
        // closed.
        server =
                ControlServer.start(
                        serverConfig()
                                .idleTimeout(Duration.ofSeconds(2))
                                .pingInterval(Duration.ofMillis(500))
                                .build(),
                        new RecordingDataPlane(7000),
                        new ControlHandler() {});
        long limit = 16L << 20;
        long written;
        try (SocketChannel ch = establish(server, 4096)) {
            written = floodWithoutReading(ch, repeat(encode(7, new PingMsg()), 4096), limit);
            eventually(
                    "the server closed the flooding connection",
                    () -> server.metrics().connectionsClosed() == 1);
        }
        ControlMetrics m = server.metrics();
        assertEquals(1, m.idleTimeouts(), m.toString());
        assertTrue(m.readPauses() >= 1, "the server never stopped reading: " + m);
        assertTrue(m.peakQueuedBytes() <= server.config().maxQueuedBytes(), m.toString());
    }

    @Test
    void repliesThePeerDoesNotReadAreCappedAndCloseTheConnection() throws Exception {
        // 300 pipelined DATA_REQUESTs, each answered with 60 KB, and the peer never reads: 18 MB of
        // replies. The
        // server queues at most maxQueuedBytes (256 KiB) beyond what the kernel takes, then closes.
        long cap = 256 << 10;
        server =
                ControlServer.start(
                        serverConfig().maxFrameLength(64 << 10).maxQueuedBytes(cap).build(),
                        new RecordingDataPlane(7000),
                        replyWith(60_000));
        try (SocketChannel ch = establish(server, 4096)) {
            byte[] requests = new byte[0];
            for (int i = 1; i <= 300; i++) {
                byte[] r = encode(i, new Messages.DataRequestMsg(1, new byte[4]));
                byte[] joined = java.util.Arrays.copyOf(requests, requests.length + r.length);
                System.arraycopy(r, 0, joined, requests.length, r.length);
                requests = joined;
            }
            ch.configureBlocking(true);
            ch.write(ByteBuffer.wrap(requests));
            eventually(
                    "the server closed the connection",
                    () -> server.metrics().connectionsClosed() == 1);
        }
        ControlMetrics m = server.metrics();
        assertTrue(m.sendQueueOverflows() >= 1, m.toString());
        assertTrue(m.peakQueuedBytes() <= cap, m.toString());
        assertEquals(0, m.idleTimeouts(), "closed by the cap, not by a timeout: " + m);
    }

    @Test
    void applicationRequestsToAPeerThatDoesNotReadFailWithOverloadedAndTheConnectionStays()
            throws Exception {
        long cap = 256 << 10;
        try (ServerSocket raw = new ServerSocket()) {
            raw.setReceiveBufferSize(4096); // inherited by the accepted socket
            raw.bind(new InetSocketAddress(TestSupport.LOOPBACK, 0));
            ControlConfig cfg =
                    TestSupport.clientConfig().maxFrameLength(64 << 10).maxQueuedBytes(cap).build();
            try (ControlClientFactory clients =
                    new ControlClientFactory(cfg, new RecordingDataPlane(7001), null)) {
                CompletableFuture<ControlClient> connecting =
                        clients.connect(
                                new InetSocketAddress(TestSupport.LOOPBACK, raw.getLocalPort()));
                try (Socket peer = raw.accept()) {
                    peer.setSoTimeout(TestSupport.LIVENESS_MS);
                    TestSupport.rawServerHandshake(peer, 64 << 10, 42);
                    ControlClient c = TestSupport.await(connecting);
                    // The peer reads nothing from now on.
                    Throwable refused = null;
                    for (int i = 0; i < 1000 && refused == null; i++) {
                        CompletableFuture<byte[]> f = c.requestData(1, new byte[60_000]);
                        try {
                            f.get(10, TimeUnit.MILLISECONDS);
                        } catch (java.util.concurrent.ExecutionException e) {
                            refused = e.getCause();
                        } catch (java.util.concurrent.TimeoutException pendingAsItShouldBe) {
                            // queued or in the kernel: no answer from a peer that does not read
                        }
                    }
                    ControlException e =
                            assertInstanceOf(
                                    ControlException.class, refused, String.valueOf(refused));
                    assertEquals(ErrorCode.OVERLOADED, e.code(), e.toString());
                    assertTrue(
                            c.isActive(), "an overloaded send queue must not close the connection");
                    assertTrue(
                            clients.metrics().peakQueuedBytes() <= cap,
                            clients.metrics().toString());
                }
            }
        }
    }
}
