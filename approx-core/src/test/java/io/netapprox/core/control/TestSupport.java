package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.Msg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

final class TestSupport {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    /**
     * How long a test waits for something that must happen. It bounds a failing test only; a
     * passing one never waits it out. 10 s was within reach of a loaded 2-core CI machine (JIT, GC
     * and six other builds), so waits are 30 s.
     */
    static final long LIVENESS_SECONDS = 30;

    static final int LIVENESS_MS = (int) TimeUnit.SECONDS.toMillis(LIVENESS_SECONDS);

    private TestSupport() {}

    static ControlConfig.Builder serverConfig() {
        return ControlConfig.builder()
                .bindAddress(LOOPBACK)
                .port(0)
                .endpointId("server")
                .shutdownTimeout(Duration.ofSeconds(3));
    }

    static ControlConfig.Builder clientConfig() {
        return ControlConfig.builder()
                .endpointId("client")
                .connectTimeout(Duration.ofSeconds(5))
                .shutdownTimeout(Duration.ofSeconds(3));
    }

    static InetSocketAddress addressOf(ControlServer server) {
        return new InetSocketAddress(LOOPBACK, server.port());
    }

    static <T> T await(CompletableFuture<T> f) throws Exception {
        try {
            return f.get(LIVENESS_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    /** The cause a future failed with (fails the test if it completes normally). */
    static Throwable failure(CompletableFuture<?> f) throws Exception {
        try {
            f.get(LIVENESS_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            while (t instanceof java.util.concurrent.CompletionException && t.getCause() != null) {
                t = t.getCause();
            }
            return t;
        }
        return fail("expected the future to fail, it completed normally");
    }

    static void eventually(String what, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_SECONDS);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting for: " + what);
            }
            Thread.sleep(10);
        }
    }

    // ---- a handshake recorded by a relay --------------------------------------------------------

    static final String SECRET = "correct horse battery staple";

    /**
     * A server (with or without {@link #SECRET}) and a client factory of the same kind that reaches
     * it through a {@link RecordingRelay}: what a passive observer of real handshakes records, for
     * the key-secrecy and replay tests.
     */
    static final class RecordedHandshakes implements AutoCloseable {
        final RecordingDataPlane serverDp = new RecordingDataPlane(1);
        final RecordingDataPlane clientDp = new RecordingDataPlane(2);
        final ControlServer server;
        final RecordingRelay relay;
        final ControlClientFactory clients;

        RecordedHandshakes(boolean secret) throws IOException {
            ControlConfig.Builder sc = serverConfig();
            ControlConfig.Builder cc = clientConfig();
            if (secret) {
                sc.authSecret(SECRET);
                cc.authSecret(SECRET);
            }
            server = ControlServer.start(sc.build(), serverDp, new ControlHandler() {});
            RecordingRelay r = null;
            try {
                r = new RecordingRelay(addressOf(server));
                clients = new ControlClientFactory(cc.build(), clientDp, null);
            } catch (IOException | RuntimeException e) {
                if (r != null) {
                    r.close();
                }
                server.close();
                throw e;
            }
            relay = r;
        }

        /** A session opened through the relay (the server has opened its end too). */
        ControlClient connect() throws Exception {
            int before = serverDp.openCount();
            ControlClient c = await(clients.connect(relay.address()));
            eventually("the server opened the session", () -> serverDp.openCount() > before);
            return c;
        }

        /** Everything the client sent on the relay's {@code i}-th connection. */
        byte[] clientBytes(int i) {
            return relay.captures().get(i).clientBytes();
        }

        /** A new raw connection to the server that replays {@code recorded} as it is. */
        Socket replay(byte[] recorded) throws IOException {
            Socket s = rawConnect(server);
            s.getOutputStream().write(recorded);
            return s;
        }

        @Override
        public void close() throws IOException {
            try {
                clients.close();
                relay.close();
            } finally {
                server.close();
            }
        }
    }

    // ---- raw-socket peer ------------------------------------------------------------------------

    static Socket rawConnect(ControlServer server) throws IOException {
        Socket s = new Socket(LOOPBACK, server.port());
        s.setSoTimeout(LIVENESS_MS);
        return s;
    }

    static byte[] encode(long requestId, Msg msg) {
        ByteBuf buf = Unpooled.buffer();
        FrameEncoder.encode(new Frame(requestId, msg), buf);
        byte[] b = new byte[buf.readableBytes()];
        buf.readBytes(b);
        buf.release();
        return b;
    }

    /** A frame with an arbitrary header and body. */
    static byte[] rawFrame(
            int magic, int version, int type, long requestId, long bodyLength, byte[] body) {
        ByteBuf buf = Unpooled.buffer();
        buf.writeShort(magic);
        buf.writeByte(version);
        buf.writeByte(type);
        buf.writeLong(requestId);
        buf.writeInt((int) bodyLength);
        buf.writeBytes(body);
        byte[] b = new byte[buf.readableBytes()];
        buf.readBytes(b);
        buf.release();
        return b;
    }

    static byte[] rawFrame(MessageType type, long requestId, byte[] body) {
        return rawFrame(
                WireFormat.MAGIC, WireFormat.VERSION, type.code, requestId, body.length, body);
    }

    static byte[] body(Msg msg) {
        return Auth.bodyBytes(msg);
    }

    /** A well-formed HELLO of this version with a fresh nonce and a real X25519 share. */
    static Messages.HelloMsg hello(String id, int udpPort) {
        return hello(id, udpPort, KeySchedule.Ephemeral.generate(), Auth.randomBytes(32));
    }

    static Messages.HelloMsg hello(
            String id, int udpPort, KeySchedule.Ephemeral share, byte[] nonce) {
        return new Messages.HelloMsg(
                WireFormat.VERSION,
                WireFormat.VERSION,
                1 << 20,
                id,
                LOOPBACK,
                udpPort,
                nonce,
                share.share());
    }

    /**
     * Plays the server's side of an unauthenticated handshake on a raw socket (HELLO_ACK with a
     * real share, SESSION_SETUP_ACK with the right key confirmation); returns the session key.
     */
    static byte[] rawServerHandshake(Socket peer, int maxFrame, long sessionId) throws Exception {
        return rawServerHandshake(peer, maxFrame, sessionId, sessionId);
    }

    /**
     * As {@link #rawServerHandshake(Socket, int, long)}, but the SESSION_SETUP_ACK confirms {@code
     * confirmedId}: a confirmation that does not match {@code sessionId} when they differ.
     */
    static byte[] rawServerHandshake(Socket peer, int maxFrame, long sessionId, long confirmedId)
            throws Exception {
        Frame f = readFrame(peer);
        Messages.HelloMsg h = assertInstanceOf(Messages.HelloMsg.class, f.msg());
        KeySchedule.Ephemeral eph = KeySchedule.Ephemeral.generate();
        byte[] nonce = Auth.randomBytes(WireFormat.NONCE_LENGTH);
        Messages.HelloAckMsg ack =
                new Messages.HelloAckMsg(
                        WireFormat.VERSION,
                        false,
                        maxFrame,
                        "raw",
                        LOOPBACK,
                        9,
                        nonce,
                        eph.share());
        peer.getOutputStream().write(encode(f.requestId(), ack));
        KeySchedule keys =
                KeySchedule.derive(
                        eph.agree(h.clientShare()),
                        null,
                        h.clientNonce(),
                        nonce,
                        body(h),
                        body(ack));
        assertInstanceOf(Messages.SessionSetupMsg.class, readFrame(peer).msg());
        peer.getOutputStream()
                .write(
                        encode(
                                f.requestId(),
                                new Messages.SessionSetupAckMsg(
                                        sessionId, keys.sessionConfirm(confirmedId))));
        return keys.sessionKey(sessionId);
    }

    /** Reads one frame from a raw socket (the client side of the test); null at EOF. */
    static Frame readFrame(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        byte[] header = new byte[WireFormat.HEADER_LENGTH];
        try {
            in.readFully(header);
        } catch (EOFException e) {
            return null;
        }
        ByteBuf h = Unpooled.wrappedBuffer(header);
        assertEquals(WireFormat.MAGIC, h.readUnsignedShort(), "magic");
        int version = h.readUnsignedByte();
        MessageType type = MessageType.fromCode(h.readUnsignedByte());
        if (type != MessageType.ERROR) { // an ERROR refusing our version comes in our version
            assertEquals(WireFormat.VERSION, version, "version");
        }
        long reqId = h.readLong();
        int len = h.readInt();
        byte[] body = new byte[len];
        in.readFully(body);
        return new Frame(reqId, WireFormat.decodeBody(type, Unpooled.wrappedBuffer(body)));
    }

    /** Reads frames until an ERROR arrives (skipping e.g. PINGs) and returns it. */
    static ErrorMsg readError(Socket s) throws IOException {
        for (int i = 0; i < 100; i++) {
            Frame f = readFrame(s);
            assertTrue(f != null, "connection closed without an ERROR frame");
            if (f.msg() instanceof ErrorMsg e) {
                return e;
            }
        }
        return fail("no ERROR frame");
    }

    /** Asserts the server closed the connection (EOF or reset) within the socket timeout. */
    static void assertClosedByPeer(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        try {
            byte[] buf = new byte[4096];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_SECONDS);
            while (System.nanoTime() < deadline) {
                if (in.read(buf) < 0) {
                    return;
                }
            }
            fail("connection still open");
        } catch (SocketTimeoutException e) {
            fail("connection still open after the socket timeout");
        } catch (IOException e) {
            // connection reset: closed as well
        }
    }

    static int openFileDescriptors() {
        String[] fds = new java.io.File("/proc/self/fd").list();
        return fds == null ? -1 : fds.length;
    }

    static long controlThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("netapprox-ctl"))
                .count();
    }
}
