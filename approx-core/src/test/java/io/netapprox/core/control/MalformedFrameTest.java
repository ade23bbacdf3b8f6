package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.assertClosedByPeer;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.body;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.encode;
import static io.netapprox.core.control.TestSupport.eventually;
import static io.netapprox.core.control.TestSupport.rawConnect;
import static io.netapprox.core.control.TestSupport.rawFrame;
import static io.netapprox.core.control.TestSupport.readError;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Strict decoding over real sockets: every malformed input gets one ERROR frame and a closed
 * connection.
 */
class MalformedFrameTest {
    private RecordingDataPlane serverDp;
    private ControlServer server;

    @BeforeEach
    void start() {
        serverDp = new RecordingDataPlane(7000);
        server =
                ControlServer.start(
                        serverConfig().build(),
                        serverDp,
                        new ControlHandler() {
                            @Override
                            public CompletionStage<JobDecision> onJobAnnounce(
                                    ControlSession s, JobAnnouncement job) {
                                return CompletableFuture.completedFuture(JobDecision.accept());
                            }
                        });
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /**
     * Sends {@code bytes} on a fresh connection and returns the ERROR the server answers before
     * closing.
     */
    private ErrorMsg rejected(byte[] bytes, boolean halfClose) throws IOException {
        try (Socket s = rawConnect(server)) {
            s.getOutputStream().write(bytes);
            s.getOutputStream().flush();
            if (halfClose) {
                s.shutdownOutput();
            }
            ErrorMsg e = readError(s);
            assertClosedByPeer(s);
            return e;
        }
    }

    private static void assertError(ErrorMsg e, ErrorCode code, String... fragments) {
        assertEquals(code, e.errorCode(), e.toString());
        for (String f : fragments) {
            assertTrue(e.message().contains(f), "'" + e.message() + "' should mention '" + f + "'");
        }
    }

    private static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] out = new byte[n];
        int o = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, o, p.length);
            o += p.length;
        }
        return out;
    }

    @Test
    void randomBytes() throws IOException {
        byte[] junk = new byte[256];
        new Random(1).nextBytes(junk);
        junk[0] = 'G'; // e.g. an HTTP client: "GET / HTTP/1.1"
        junk[1] = 'E';
        assertError(rejected(junk, false), ErrorCode.MALFORMED_FRAME, "bad magic");
        assertEquals(1, server.metrics().malformedFrames());
    }

    @Test
    void otherProtocolVersionGetsAnExplicitVersionMismatch() throws IOException {
        // A peer of the previous release (version 3: one data plane, no plane byte in HELLO)
        // gets a clear mismatch.
        byte[] v3 = rawFrame(WireFormat.MAGIC, 3, MessageType.HELLO.code, 1, 0, new byte[0]);
        assertError(rejected(v3, false), ErrorCode.VERSION_MISMATCH, "version 3", "version 4");
        // A HELLO in this version's framing that offers only versions 5..6.
        byte[] hello =
                encode(
                        1,
                        new Messages.HelloMsg(
                                5,
                                6,
                                1 << 20,
                                "future-peer",
                                TestSupport.LOOPBACK,
                                9,
                                new byte[32],
                                KeySchedule.Ephemeral.generate().share()));
        assertError(
                rejected(hello, false), ErrorCode.VERSION_MISMATCH, "versions 5..6", "version 4");
        assertEquals(2, server.metrics().versionMismatches());
        assertEquals(0, serverDp.openCount());
    }

    /**
     * A version-1 peer (which expects the session key in clear in SESSION_SETUP_ACK) is refused at
     * its first frame with an ERROR it can read - in version-1 framing - and a close, not a hang.
     * Before version 2 the server accepted this HELLO.
     */
    @Test
    void versionOnePeerIsRefusedWithAnErrorInItsOwnFraming() throws IOException {
        // A version-1 HELLO exactly as a 1.x client sends it: range [1, 1], no nonce, no share.
        ByteBuf b = Unpooled.buffer();
        b.writeByte(1).writeByte(1).writeShort(0).writeInt(1 << 20);
        b.writeShort(2).writeBytes("v1".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        b.writeByte(4).writeBytes(new byte[] {127, 0, 0, 1}).writeShort(9);
        byte[] body = new byte[b.readableBytes()];
        b.readBytes(body);
        try (Socket s = rawConnect(server)) {
            s.getOutputStream()
                    .write(
                            rawFrame(
                                    WireFormat.MAGIC,
                                    1,
                                    MessageType.HELLO.code,
                                    1,
                                    body.length,
                                    body));
            java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
            byte[] header = new byte[WireFormat.HEADER_LENGTH];
            in.readFully(header);
            ByteBuf h = Unpooled.wrappedBuffer(header);
            assertEquals(WireFormat.MAGIC, h.readUnsignedShort());
            assertEquals(1, h.readUnsignedByte(), "the ERROR is framed in the peer's version");
            assertEquals(MessageType.ERROR.code, h.readUnsignedByte());
            h.skipBytes(8);
            byte[] errBody = new byte[h.readInt()];
            in.readFully(errBody);
            ErrorMsg e =
                    (ErrorMsg)
                            WireFormat.decodeBody(
                                    MessageType.ERROR, Unpooled.wrappedBuffer(errBody));
            assertError(e, ErrorCode.VERSION_MISMATCH, "version 1", "version 4");
            assertClosedByPeer(s);
        }
        assertEquals(1, server.metrics().versionMismatches());
        assertEquals(0, serverDp.openCount());
    }

    @Test
    void unknownMessageType() throws IOException {
        byte[] f = rawFrame(WireFormat.MAGIC, WireFormat.VERSION, 99, 1, 0, new byte[0]);
        assertError(rejected(f, false), ErrorCode.UNKNOWN_MESSAGE_TYPE, "99");
        assertEquals(1, server.metrics().unknownMessageTypes());
    }

    @Test
    void oversizeLengthIsRejectedAtOnceWithoutWaitingForTheBody() throws IOException {
        byte[] f =
                rawFrame(
                        WireFormat.MAGIC,
                        WireFormat.VERSION,
                        MessageType.HELLO.code,
                        1,
                        0x7FFF_FFFFL,
                        new byte[0]);
        assertError(rejected(f, false), ErrorCode.FRAME_TOO_LARGE, "2147483647");
        // Before the handshake, the limit is the small handshake limit, not the configured 1 MiB.
        byte[] big =
                rawFrame(
                        WireFormat.MAGIC,
                        WireFormat.VERSION,
                        MessageType.HELLO.code,
                        1,
                        5000,
                        new byte[5000]);
        assertError(rejected(big, false), ErrorCode.FRAME_TOO_LARGE, "4096");
        assertEquals(2, server.metrics().oversizedFrames());
    }

    @Test
    void truncatedFrames() throws IOException {
        byte[] hello = encode(1, TestSupport.hello("x", 9));
        // A header announcing more body than is sent, then the client stops sending.
        assertError(
                rejected(Arrays.copyOf(hello, hello.length - 3), true),
                ErrorCode.MALFORMED_FRAME,
                "truncated");
        // Half a header.
        assertError(
                rejected(Arrays.copyOf(hello, 7), true), ErrorCode.MALFORMED_FRAME, "truncated");
    }

    @Test
    void badFieldLengths() throws IOException {
        // endpointId claims 500 bytes but the body ends first.
        ByteBuf b = Unpooled.buffer();
        b.writeByte(1)
                .writeByte(1)
                .writeShort(0)
                .writeInt(1 << 20)
                .writeShort(500)
                .writeBytes(new byte[10]);
        byte[] body = new byte[b.readableBytes()];
        b.readBytes(body);
        assertError(
                rejected(rawFrame(MessageType.HELLO, 1, body), false),
                ErrorCode.MALFORMED_FRAME,
                "endpointId");
        // A fixed-size field cut short: AUTH_RESPONSE needs 32 bytes.
        byte[] shortAuth = rawFrame(MessageType.AUTH_RESPONSE, 1, new byte[20]);
        assertError(rejected(shortAuth, false), ErrorCode.MALFORMED_FRAME, "mac");
        // Trailing bytes after a valid body.
        byte[] hello = body(TestSupport.hello("x", 9));
        assertError(
                rejected(rawFrame(MessageType.HELLO, 1, concat(hello, new byte[] {0})), false),
                ErrorCode.MALFORMED_FRAME,
                "trailing");
        // Invalid UTF-8 in a string field.
        byte[] badUtf8 = hello.clone();
        badUtf8[10] = (byte) 0xFF; // the single byte of endpointId "x"
        assertError(
                rejected(rawFrame(MessageType.HELLO, 1, badUtf8), false),
                ErrorCode.MALFORMED_FRAME,
                "UTF-8");
        // Unknown address family.
        byte[] badFamily = hello.clone();
        badFamily[11] = 5;
        assertError(
                rejected(rawFrame(MessageType.HELLO, 1, badFamily), false),
                ErrorCode.MALFORMED_FRAME,
                "address family");
        assertEquals(5, server.metrics().malformedFrames());
    }

    @Test
    void wellFormedMessageInTheWrongStateIsRejected() throws IOException {
        JobAnnouncement job = JobAnnouncement.global(1, 10, 0.5, false, null);
        assertError(
                rejected(encode(1, new Messages.JobAnnounceMsg(job)), false),
                ErrorCode.UNEXPECTED_MESSAGE,
                "JOB_ANNOUNCE");
        assertEquals(1, server.metrics().unexpectedMessages());
    }

    /** Raw handshake up to an established session; returns the socket. */
    private Socket establishedRawSession() throws IOException {
        Socket s = rawConnect(server);
        OutputStream out = s.getOutputStream();
        out.write(encode(1, TestSupport.hello("raw", 9)));
        assertInstanceOf(Messages.HelloAckMsg.class, TestSupport.readFrame(s).msg());
        out.write(encode(2, new Messages.SessionSetupMsg()));
        assertInstanceOf(SessionSetupAckMsg.class, TestSupport.readFrame(s).msg());
        return s;
    }

    @Test
    void malformedBodiesAfterTheSessionIsSetUp() throws Exception {
        // JOB_ANNOUNCE declaring 100 million groups in a 40-byte body: no allocation, a clear
        // error.
        ByteBuf b = Unpooled.buffer();
        b.writeInt(1).writeByte(0).writeByte(0).writeInt(100_000_000).writeBytes(new byte[30]);
        byte[] body = new byte[b.readableBytes()];
        b.readBytes(body);
        try (Socket s = establishedRawSession()) {
            s.getOutputStream().write(rawFrame(MessageType.JOB_ANNOUNCE, 3, body));
            assertError(readError(s), ErrorCode.MALFORMED_FRAME, "100000000 groups");
            assertClosedByPeer(s);
        }
        // MSR out of [0, 1].
        byte[] announce =
                body(new Messages.JobAnnounceMsg(JobAnnouncement.global(1, 10, 0.5, false, null)));
        ByteBuf a = Unpooled.wrappedBuffer(announce);
        a.setDouble(4 + 1 + 1 + 4 + 8 + 4, 1.5);
        try (Socket s = establishedRawSession()) {
            s.getOutputStream().write(rawFrame(MessageType.JOB_ANNOUNCE, 3, announce));
            assertError(readError(s), ErrorCode.MALFORMED_FRAME, "MSR must be in [0, 1]");
            assertClosedByPeer(s);
        }
        // JOB_REPORT whose id ranges overlap.
        JobReport r =
                JobReport.outcome(
                        1,
                        AtpStatus.OK,
                        1,
                        0,
                        0.0,
                        null,
                        List.of(
                                GroupReport.ofIds(
                                        0,
                                        2000,
                                        IdSet.of(1, 2, 3, 1000, 1001, 1002),
                                        IdSet.empty())));
        byte[] report = body(new Messages.JobReportMsg(r));
        ByteBuf rb = Unpooled.wrappedBuffer(report);
        int rangesAt =
                4 + 4 + 8 + 8 + 8 + 1 + 4 + 8 + 4 + 1 + 4; // header fields, group, encoding, count
        rb.setInt(rangesAt + 8, 2); // second range starts at 2, inside the first
        try (Socket s = establishedRawSession()) {
            s.getOutputStream().write(rawFrame(MessageType.JOB_REPORT, 3, report));
            assertError(readError(s), ErrorCode.MALFORMED_FRAME, "delivered", "range 1");
            assertClosedByPeer(s);
        }
        // Sessions were opened and are closed again.
        eventually("sessions closed", () -> serverDp.closed.size() == 3);
    }

    @Test
    void manyBadClientsCauseNoExceptionStormAndGoodClientsKeepWorking() throws Exception {
        int bad = 40;
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try (ControlClientFactory factory =
                new ControlClientFactory(
                        clientConfig().build(), new RecordingDataPlane(7001), null)) {
            ControlClient good = await(factory.connect(addressOf(server)));
            List<Future<ErrorMsg>> results = new ArrayList<>();
            for (int i = 0; i < bad; i++) {
                int seed = i;
                results.add(
                        pool.submit(
                                () -> {
                                    try (Socket s = rawConnect(server)) {
                                        byte[] junk = new byte[64 * 1024]; // many frames' worth of
                                        // garbage after the first
                                        // error
                                        new Random(seed).nextBytes(junk);
                                        try {
                                            s.getOutputStream().write(junk);
                                        } catch (IOException e) {
                                            // the server may close before it has read everything
                                        }
                                        try {
                                            return readError(s);
                                        } catch (IOException e) {
                                            return null; // reset before the ERROR could be read:
                                            // still rejected and counted
                                        }
                                    }
                                }));
                // Interleave real traffic.
                assertTrue(
                        await(good.announceJob(JobAnnouncement.global(i, 10, 0.5, false, null)))
                                .accepted());
            }
            int errorsSeen = 0;
            for (Future<ErrorMsg> f : results) {
                ErrorMsg e = f.get();
                if (e != null) {
                    errorsSeen++;
                    assertEquals(ErrorCode.MALFORMED_FRAME, e.errorCode());
                }
            }
            assertTrue(errorsSeen >= bad / 2, "most bad clients read their ERROR: " + errorsSeen);
            eventually(
                    "all bad connections closed", () -> server.metrics().activeConnections() == 1);
            ControlMetrics m = server.metrics();
            // Exactly one rejection and at most one WARN line per bad connection, however much
            // garbage it sent.
            assertEquals(
                    bad,
                    m.malformedFrames()
                            + m.unknownMessageTypes()
                            + m.versionMismatches()
                            + m.oversizedFrames(),
                    m.toString());
            assertEquals(bad, m.warningsLogged(), m.toString());
            assertTrue(good.isActive());
            assertTrue(await(good.ping()).toNanos() > 0);
            assertTrue(await(factory.connect(addressOf(server))).isActive());
        } finally {
            pool.shutdownNow();
        }
    }
}
