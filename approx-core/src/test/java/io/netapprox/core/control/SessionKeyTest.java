package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.SECRET;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.encode;
import static io.netapprox.core.control.TestSupport.failure;
import static io.netapprox.core.control.TestSupport.readFrame;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.HelloAckMsg;
import io.netapprox.core.control.Messages.HelloMsg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The data-plane session key never crosses the control connection (issue 12): both ends derive it
 * ({@link KeySchedule}), so what a passive observer records does not contain it and a recorded
 * handshake replayed later yields no session whose key the replayer knows. Before protocol version
 * 2 the server sent the key in clear in SESSION_SETUP_ACK: {@link
 * #passiveObserverOfTheControlConnectionNeverSeesTheSessionKey} and {@link
 * #replayWithoutASecretOpensASessionWhoseKeyTheReplayerDoesNotLearn} failed.
 */
class SessionKeyTest {
    private static boolean contains(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    private static String hex(byte[] b) {
        return java.util.HexFormat.of().formatHex(b);
    }

    @ParameterizedTest(name = "secret={0}")
    @ValueSource(booleans = {true, false})
    void passiveObserverOfTheControlConnectionNeverSeesTheSessionKey(boolean secret)
            throws Exception {
        try (TestSupport.RecordedHandshakes h = new TestSupport.RecordedHandshakes(secret)) {
            int sessions = 4;
            for (int i = 0; i < sessions; i++) {
                assertTrue(await(h.connect().ping()).toNanos() > 0, "the session works");
            }
            List<RecordingRelay.Capture> captures = h.relay.captures();
            assertEquals(sessions, captures.size());
            Set<String> keys = new HashSet<>();
            for (RecordingDataPlane.Opened s : h.serverDp.opened) {
                RecordingDataPlane.Opened c =
                        h.clientDp.opened.stream()
                                .filter(o -> o.sessionId() == s.sessionId())
                                .findFirst()
                                .orElseThrow();
                assertArrayEquals(s.key(), c.key(), "both ends derive the same key");
                assertTrue(c.initiator() && !s.initiator());
                assertTrue(keys.add(hex(s.key())), "a fresh key per session");
                for (RecordingRelay.Capture cap : captures) {
                    assertFalse(
                            contains(cap.serverBytes(), s.key()),
                            "the key crossed the wire from the server");
                    assertFalse(
                            contains(cap.clientBytes(), s.key()),
                            "the key crossed the wire from the client");
                    if (secret) {
                        assertFalse(contains(cap.clientBytes(), SECRET.getBytes()));
                        assertFalse(contains(cap.serverBytes(), SECRET.getBytes()));
                    }
                }
            }
        }
    }

    @Test
    void recordedHandshakeReplayedWithoutTheSecretIsRefused() throws Exception {
        try (TestSupport.RecordedHandshakes h = new TestSupport.RecordedHandshakes(true)) {
            h.connect().close();
            assertEquals(1, h.serverDp.openCount());
            // HELLO, AUTH_RESPONSE, SESSION_SETUP as recorded
            try (Socket s = h.replay(h.clientBytes(0))) {
                assertInstanceOf(HelloAckMsg.class, readFrame(s).msg()); // with fresh nonce+share
                ErrorMsg err = TestSupport.readError(s);
                assertEquals(ErrorCode.AUTH_FAILED, err.errorCode(), err.toString());
                TestSupport.assertClosedByPeer(s);
            }
            assertEquals(1, h.serverDp.openCount(), "the replay opened no session");
            assertEquals(1, h.server.metrics().authFailures());
        }
    }

    @Test
    void replayWithoutASecretOpensASessionWhoseKeyTheReplayerDoesNotLearn() throws Exception {
        try (TestSupport.RecordedHandshakes h = new TestSupport.RecordedHandshakes(false)) {
            h.connect();
            byte[] recordedKey = h.serverDp.opened.get(0).key();
            // HELLO, SESSION_SETUP (+ maybe PING) as recorded
            try (Socket s = h.replay(h.clientBytes(0))) {
                ByteArrayOutputStream answers = new ByteArrayOutputStream();
                Frame ack = readFrame(s);
                answers.write(encode(ack.requestId(), ack.msg()));
                Frame setup = readFrame(s);
                answers.write(encode(setup.requestId(), setup.msg()));
                SessionSetupAckMsg sa = assertInstanceOf(SessionSetupAckMsg.class, setup.msg());
                TestSupport.eventually("replayed session", () -> h.serverDp.openCount() == 2);
                RecordingDataPlane.Opened replayed = h.serverDp.opened.get(1);
                assertEquals(sa.sessionId(), replayed.sessionId());
                assertFalse(
                        java.util.Arrays.equals(recordedKey, replayed.key()),
                        "the recorded session's datagrams must not verify in the replayed one");
                assertFalse(
                        contains(answers.toByteArray(), replayed.key()),
                        "the replayer received the session key");
            }
        }
    }

    /**
     * An active man in the middle without the secret runs its own X25519 exchange with each side
     * (substituting both shares, which it needs to learn any key): the transcripts differ, the
     * client's proof fails at the server, and no session opens.
     */
    @Test
    void activeManInTheMiddleWithoutTheSecretGetsNoSession() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        RecordingDataPlane clientDp = new RecordingDataPlane(2);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().authSecret(SECRET).build(),
                                serverDp,
                                new ControlHandler() {});
                ServerSocket mitm = new ServerSocket(0, 5, TestSupport.LOOPBACK);
                ControlClientFactory clients =
                        new ControlClientFactory(
                                clientConfig().authSecret(SECRET).build(), clientDp, null)) {
            CompletableFuture<ControlClient> connecting =
                    clients.connect(
                            new InetSocketAddress(TestSupport.LOOPBACK, mitm.getLocalPort()));
            try (Socket toClient = mitm.accept();
                    Socket toServer = TestSupport.rawConnect(server)) {
                toClient.setSoTimeout(TestSupport.LIVENESS_MS);
                Frame hf = readFrame(toClient);
                HelloMsg h = (HelloMsg) hf.msg();
                HelloMsg forged =
                        new HelloMsg(
                                h.minVersion(),
                                h.maxVersion(),
                                h.maxFrameLength(),
                                h.endpointId(),
                                h.udpAddress(),
                                h.udpPort(),
                                h.clientNonce(),
                                KeySchedule.Ephemeral.generate().share());
                toServer.getOutputStream().write(encode(hf.requestId(), forged));
                Frame af = readFrame(toServer);
                HelloAckMsg a = (HelloAckMsg) af.msg();
                HelloAckMsg forgedAck =
                        new HelloAckMsg(
                                a.version(),
                                a.authRequired(),
                                a.maxFrameLength(),
                                a.endpointId(),
                                a.udpAddress(),
                                a.udpPort(),
                                a.serverNonce(),
                                KeySchedule.Ephemeral.generate().share());
                toClient.getOutputStream().write(encode(af.requestId(), forgedAck));
                Frame proof = readFrame(toClient);
                assertInstanceOf(Messages.AuthResponseMsg.class, proof.msg());
                toServer.getOutputStream().write(encode(proof.requestId(), proof.msg()));
                ErrorMsg err = TestSupport.readError(toServer);
                assertEquals(ErrorCode.AUTH_FAILED, err.errorCode(), err.toString());
                toClient.getOutputStream().write(encode(proof.requestId(), err));
                ControlException e = assertInstanceOf(ControlException.class, failure(connecting));
                assertEquals(ErrorCode.AUTH_FAILED, e.code());
            }
            assertEquals(0, serverDp.openCount());
            assertEquals(0, clientDp.openCount());
            assertEquals(1, server.metrics().authFailures());
        }
    }

    @Test
    void helloWithASmallOrderShareIsRefused() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new ControlHandler() {});
                Socket s = TestSupport.rawConnect(server)) {
            // u = 0 has small order: X25519 with it is all zero whatever the server's key.
            HelloMsg h =
                    new HelloMsg(
                            WireFormat.VERSION,
                            WireFormat.VERSION,
                            1 << 20,
                            "weak",
                            TestSupport.LOOPBACK,
                            9,
                            new byte[32],
                            new byte[32]);
            s.getOutputStream().write(encode(1, h));
            ErrorMsg err = TestSupport.readError(s);
            assertEquals(ErrorCode.MALFORMED_FRAME, err.errorCode(), err.toString());
            assertTrue(err.message().contains("X25519"), err.message());
            TestSupport.assertClosedByPeer(s);
            assertEquals(0, serverDp.openCount());
        }
    }

    /** A SESSION_SETUP_ACK whose confirmation does not match (altered id): no session. */
    @Test
    void sessionSetupAckWithAWrongConfirmationOpensNoSession() throws Exception {
        RecordingDataPlane clientDp = new RecordingDataPlane(2);
        try (ServerSocket raw = new ServerSocket(0, 5, TestSupport.LOOPBACK);
                ControlClientFactory clients =
                        new ControlClientFactory(clientConfig().build(), clientDp, null)) {
            CompletableFuture<ControlClient> connecting =
                    clients.connect(
                            new InetSocketAddress(TestSupport.LOOPBACK, raw.getLocalPort()));
            try (Socket peer = raw.accept()) {
                peer.setSoTimeout(TestSupport.LIVENESS_MS);
                // the session id is altered after the confirmation was computed
                TestSupport.rawServerHandshake(peer, 1 << 20, 43, 42);
                ControlException e = assertInstanceOf(ControlException.class, failure(connecting));
                assertEquals(ErrorCode.AUTH_FAILED, e.code());
                assertTrue(e.getMessage().contains("key confirmation"), e.getMessage());
            }
            assertEquals(0, clientDp.openCount());
        }
    }

    /** A hostile server's ERROR text cannot forge log lines: control characters are replaced. */
    @Test
    void peerErrorTextCannotInjectLogLines() throws Exception {
        try (ServerSocket raw = new ServerSocket(0, 5, TestSupport.LOOPBACK);
                ControlClientFactory clients =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            CompletableFuture<ControlClient> connecting =
                    clients.connect(
                            new InetSocketAddress(TestSupport.LOOPBACK, raw.getLocalPort()));
            try (Socket peer = raw.accept()) {
                peer.setSoTimeout(TestSupport.LIVENESS_MS);
                Frame f = readFrame(peer);
                peer.getOutputStream()
                        .write(
                                encode(
                                        f.requestId(),
                                        new ErrorMsg(
                                                ErrorCode.AUTH_FAILED.code(),
                                                "no\n12:00:00 INFO forged line\r\u2028")));
                ControlException e = assertInstanceOf(ControlException.class, failure(connecting));
                assertEquals(ErrorCode.AUTH_FAILED, e.code());
                assertTrue(
                        e.getMessage().contains("no?12:00:00 INFO forged line??"), e.getMessage());
            }
        }
        assertEquals("a?b", ControlConnection.printable("a\u0000b"));
        assertEquals("exec-1@host \u00e9", ControlConnection.printable("exec-1@host \u00e9"));
    }

    @Test
    void bothEndsDeriveTheSameKeysAndEveryInputMatters() throws Exception {
        KeySchedule.Ephemeral c = KeySchedule.Ephemeral.generate();
        KeySchedule.Ephemeral s = KeySchedule.Ephemeral.generate();
        byte[] cn = Auth.randomBytes(32);
        byte[] sn = Auth.randomBytes(32);
        byte[] h = {1, 2, 3};
        byte[] a = {4, 5, 6};
        byte[] secret = SECRET.getBytes();
        KeySchedule client = KeySchedule.derive(c.agree(s.share()), secret, cn, sn, h, a);
        KeySchedule server = KeySchedule.derive(s.agree(c.share()), secret, cn, sn, h, a);
        byte[] key = client.sessionKey(7);
        assertArrayEquals(key, server.sessionKey(7));
        assertArrayEquals(client.clientProof(), server.clientProof());
        assertArrayEquals(client.serverProof(), server.serverProof());
        assertArrayEquals(client.sessionConfirm(7), server.sessionConfirm(7));
        Set<String> outputs = new HashSet<>();
        for (byte[] o :
                List.of(
                        key,
                        client.sessionKey(8),
                        client.sessionConfirm(7),
                        client.clientProof(),
                        client.serverProof(),
                        KeySchedule.derive(
                                        c.agree(s.share()),
                                        "another secret!!".getBytes(),
                                        cn,
                                        sn,
                                        h,
                                        a)
                                .sessionKey(7),
                        KeySchedule.derive(c.agree(s.share()), null, cn, sn, h, a).sessionKey(7),
                        KeySchedule.derive(c.agree(s.share()), secret, sn, cn, h, a).sessionKey(7),
                        KeySchedule.derive(c.agree(s.share()), secret, cn, sn, a, h).sessionKey(7),
                        KeySchedule.derive(
                                        c.agree(KeySchedule.Ephemeral.generate().share()),
                                        secret,
                                        cn,
                                        sn,
                                        h,
                                        a)
                                .sessionKey(7))) {
            assertEquals(32, o.length);
            assertTrue(outputs.add(hex(o)), "two inputs gave the same output");
        }
    }
}
