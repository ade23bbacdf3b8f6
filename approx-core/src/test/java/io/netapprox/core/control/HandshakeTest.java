package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.AuthOkMsg;
import io.netapprox.core.control.Messages.AuthResponseMsg;
import io.netapprox.core.control.Messages.DataAttachAckMsg;
import io.netapprox.core.control.Messages.DataAttachMsg;
import io.netapprox.core.control.Messages.DataAttachProofMsg;
import io.netapprox.core.control.Messages.HelloAckMsg;
import io.netapprox.core.control.Messages.HelloMsg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import io.netapprox.core.control.Messages.SessionSetupMsg;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The two sides of the control handshake ({@link ClientHandshake}, {@link ServerHandshake}) run
 * against each other with no network: the frames one side's steps produce are the other side's
 * input. Over real connections: ControlRoundTripTest, ControlAuthTest, SessionKeyTest,
 * DataConnectionTest.
 */
class HandshakeTest {
    private static final InetSocketAddress CLIENT_ADDR =
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 40001);
    private static final InetSocketAddress SERVER_ADDR =
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 40002);

    /** A data plane that offers {@code planes}; the handshake never opens anything on it. */
    private static DataPlane plane(Set<DataPlaneKind> planes, int udpPort) {
        return new DataPlane() {
            @Override
            public Set<DataPlaneKind> offeredPlanes() {
                return EnumSet.copyOf(planes);
            }

            @Override
            public int localUdpPort() {
                return udpPort;
            }

            @Override
            public InetAddress udpAddress() {
                return InetAddress.getLoopbackAddress();
            }

            @Override
            public void openSession(
                    long sessionId, byte[] key, InetSocketAddress peer, boolean initiator) {
                throw new AssertionError("the handshake opens no session itself");
            }

            @Override
            public void closeSession(long sessionId) {}
        };
    }

    private final ControlMetrics clientMetrics = new ControlMetrics();
    private final ControlMetrics serverMetrics = new ControlMetrics();
    private final PeerParameters clientSees = new PeerParameters();
    private final PeerParameters serverSees = new PeerParameters();
    private final Set<Long> liveIds = ConcurrentHashMap.newKeySet();
    private final DataConnectionKeys dataKeys = new DataConnectionKeys();

    private ClientHandshake client(String secret, Set<DataPlaneKind> planes) {
        ControlConfig.Builder b = ControlConfig.builder().endpointId("exec-7");
        if (secret != null) {
            b.authSecret(secret);
        }
        return new ClientHandshake(b.build(), plane(planes, 5001), clientMetrics, clientSees);
    }

    private ServerHandshake server(String secret, Set<DataPlaneKind> planes) {
        ControlConfig.Builder b = ControlConfig.builder().endpointId("driver");
        if (secret != null) {
            b.authSecret(secret);
        }
        return new ServerHandshake(
                b.build(), plane(planes, 5002), serverMetrics, serverSees, liveIds, dataKeys);
    }

    private static <T> T reply(HandshakeStep step, Class<T> type, ConnectionState next) {
        HandshakeStep.Reply r = assertInstanceOf(HandshakeStep.Reply.class, step, step.toString());
        assertEquals(next, r.next());
        return assertInstanceOf(type, r.msg());
    }

    private static HandshakeStep.Fail fail(HandshakeStep step, ErrorCode code) {
        HandshakeStep.Fail f = assertInstanceOf(HandshakeStep.Fail.class, step, step.toString());
        assertEquals(code, f.code(), f.message());
        return f;
    }

    /** The client's HELLO through the server's HELLO_ACK into the client. */
    private HandshakeStep helloExchange(
            ClientHandshake c, ServerHandshake s, ConnectionState next) {
        HelloMsg hello = c.hello(1);
        HelloAckMsg ack = reply(s.onHello(hello, CLIENT_ADDR), HelloAckMsg.class, next);
        return c.onHelloAck(ack, SERVER_ADDR);
    }

    @Test
    void bothSidesDeriveTheSameSessionKeyWithTheSharedSecret() {
        ClientHandshake c = client("the shared secret, 16+", EnumSet.of(DataPlaneKind.ATP));
        ServerHandshake s = server("the shared secret, 16+", EnumSet.of(DataPlaneKind.ATP));
        AuthResponseMsg auth =
                reply(
                        helloExchange(c, s, ConnectionState.AUTH),
                        AuthResponseMsg.class,
                        ConnectionState.AUTH);
        AuthOkMsg ok = reply(s.onAuth(auth), AuthOkMsg.class, ConnectionState.SESSION);
        reply(c.onAuthOk(ok), SessionSetupMsg.class, ConnectionState.SESSION);
        HandshakeStep.Session server =
                assertInstanceOf(HandshakeStep.Session.class, s.onSessionSetup());
        assertTrue(liveIds.contains(server.sessionId()), "the id is taken");
        assertNull(server.dataConnectionKey(), "ATP only: no data connection");
        HandshakeStep.Session client =
                assertInstanceOf(
                        HandshakeStep.Session.class,
                        c.onSessionSetupAck(
                                new SessionSetupAckMsg(server.sessionId(), server.confirm())));
        assertEquals(server.sessionId(), client.sessionId());
        assertArrayEquals(server.sessionKey(), client.sessionKey(), "derived on both ends");
        assertEquals(1, serverMetrics.authSuccesses());
        assertEquals(1, clientMetrics.authSuccesses());
        // What each side learned of the other.
        assertEquals("exec-7", serverSees.endpointId);
        assertEquals("driver", clientSees.endpointId);
        assertEquals(EnumSet.of(DataPlaneKind.ATP), clientSees.agreedPlanes);
        assertEquals(WireFormat.MAX_SUPPORTED_VERSION, clientSees.version);
        assertEquals(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 5002),
                clientSees.dataAddress);
        assertEquals(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 5001),
                serverSees.dataAddress);
    }

    @Test
    void withoutASecretTheHandshakeSkipsAuthentication() {
        ClientHandshake c = client(null, EnumSet.of(DataPlaneKind.ATP));
        ServerHandshake s = server(null, EnumSet.of(DataPlaneKind.ATP));
        reply(
                helloExchange(c, s, ConnectionState.SESSION),
                SessionSetupMsg.class,
                ConnectionState.SESSION);
        HandshakeStep.Session server =
                assertInstanceOf(HandshakeStep.Session.class, s.onSessionSetup());
        HandshakeStep.Session client =
                assertInstanceOf(
                        HandshakeStep.Session.class,
                        c.onSessionSetupAck(
                                new SessionSetupAckMsg(server.sessionId(), server.confirm())));
        assertArrayEquals(server.sessionKey(), client.sessionKey());
    }

    @Test
    void aWrongSecretFailsAtTheServer() {
        ClientHandshake c = client("the first shared secret", EnumSet.of(DataPlaneKind.ATP));
        ServerHandshake s = server("the second shared secret", EnumSet.of(DataPlaneKind.ATP));
        AuthResponseMsg auth =
                reply(
                        helloExchange(c, s, ConnectionState.AUTH),
                        AuthResponseMsg.class,
                        ConnectionState.AUTH);
        fail(s.onAuth(auth), ErrorCode.AUTH_FAILED);
        assertEquals(1, serverMetrics.authFailures());
    }

    @Test
    void aServerThatDoesNotAuthenticateIsRefusedByAClientWithASecret() {
        ClientHandshake c = client("the shared secret, 16+", EnumSet.of(DataPlaneKind.ATP));
        ServerHandshake s = server(null, EnumSet.of(DataPlaneKind.ATP));
        HandshakeStep.Fail f =
                fail(helloExchange(c, s, ConnectionState.SESSION), ErrorCode.AUTH_FAILED);
        assertTrue(f.message().contains("does not authenticate"), f.message());
        assertEquals(1, clientMetrics.authFailures());
    }

    @Test
    void anAlteredSessionIdFailsTheKeyConfirmation() {
        ClientHandshake c = client(null, EnumSet.of(DataPlaneKind.ATP));
        ServerHandshake s = server(null, EnumSet.of(DataPlaneKind.ATP));
        helloExchange(c, s, ConnectionState.SESSION);
        HandshakeStep.Session server =
                assertInstanceOf(HandshakeStep.Session.class, s.onSessionSetup());
        HandshakeStep.Fail f =
                fail(
                        c.onSessionSetupAck(
                                new SessionSetupAckMsg(server.sessionId() ^ 1, server.confirm())),
                        ErrorCode.AUTH_FAILED);
        assertTrue(f.message().contains("key confirmation"), f.message());
    }

    @Test
    void noCommonVersionOrDataPlaneFailsAtTheServer() {
        ServerHandshake s = server(null, EnumSet.of(DataPlaneKind.ATP));
        HelloMsg hello = client(null, EnumSet.of(DataPlaneKind.ATP)).hello(1);
        HelloMsg future =
                new HelloMsg(
                        WireFormat.MAX_SUPPORTED_VERSION + 1,
                        WireFormat.MAX_SUPPORTED_VERSION + 2,
                        hello.maxFrameLength(),
                        hello.endpointId(),
                        hello.udpAddress(),
                        hello.udpPort(),
                        hello.clientNonce(),
                        hello.clientShare(),
                        hello.dataPlanes());
        fail(s.onHello(future, CLIENT_ADDR), ErrorCode.VERSION_MISMATCH);
        assertEquals(1, serverMetrics.versionMismatches());

        HelloMsg tcpOnly = client(null, EnumSet.of(DataPlaneKind.TCP)).hello(1);
        HandshakeStep.Fail f =
                fail(
                        server(null, EnumSet.of(DataPlaneKind.ATP)).onHello(tcpOnly, CLIENT_ADDR),
                        ErrorCode.SESSION_FAILED);
        assertTrue(f.message().contains("no common data plane"), f.message());
        assertEquals(1, serverMetrics.sessionFailures());
    }

    @Test
    void aWildcardDataAddressMeansTheControlConnectionsAddress() throws Exception {
        InetAddress any = InetAddress.getByName("0.0.0.0");
        InetSocketAddress remote = new InetSocketAddress(InetAddress.getByName("10.1.2.3"), 7000);
        assertEquals(
                new InetSocketAddress(remote.getAddress(), 5005),
                PeerParameters.resolveDataAddress(any, 5005, remote));
        assertNull(PeerParameters.resolveDataAddress(null, 5005, remote));
        assertEquals(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), 5005),
                PeerParameters.resolveDataAddress(InetAddress.getLoopbackAddress(), 5005, remote));
    }

    @Test
    void aTcpSessionsDataConnectionAttachesOnceWithTheSessionsKey() {
        Set<DataPlaneKind> tcp = EnumSet.of(DataPlaneKind.TCP);
        ClientHandshake c = client("the shared secret, 16+", tcp);
        ServerHandshake s = server("the shared secret, 16+", tcp);
        AuthResponseMsg auth =
                reply(
                        helloExchange(c, s, ConnectionState.AUTH),
                        AuthResponseMsg.class,
                        ConnectionState.AUTH);
        reply(
                c.onAuthOk(reply(s.onAuth(auth), AuthOkMsg.class, ConnectionState.SESSION)),
                SessionSetupMsg.class,
                ConnectionState.SESSION);
        HandshakeStep.Session server =
                assertInstanceOf(HandshakeStep.Session.class, s.onSessionSetup());
        assertNull(serverSees.dataAddress, "no ATP: no UDP address");
        HandshakeStep.Session client =
                assertInstanceOf(
                        HandshakeStep.Session.class,
                        c.onSessionSetupAck(
                                new SessionSetupAckMsg(server.sessionId(), server.confirm())));
        byte[] key = client.dataConnectionKey();
        assertNotNull(key, "TCP agreed: the client gets the data-connection key");
        long id = client.sessionId();

        // The data connection's own handshake, on a fresh server-side connection.
        ServerHandshake attach = server("the shared secret, 16+", tcp);
        byte[] clientNonce = Auth.randomBytes(WireFormat.NONCE_LENGTH);
        DataAttachAckMsg ack =
                reply(
                        attach.onDataAttach(new DataAttachMsg(id, clientNonce)),
                        DataAttachAckMsg.class,
                        ConnectionState.ATTACH);
        assertArrayEquals(
                KeySchedule.dataConnectionProof(key, true, id, clientNonce, ack.serverNonce()),
                ack.serverProof(),
                "the server proves the session's key");
        byte[] proof =
                KeySchedule.dataConnectionProof(key, false, id, clientNonce, ack.serverNonce());
        HandshakeStep.Attach a =
                assertInstanceOf(
                        HandshakeStep.Attach.class,
                        attach.onDataAttachProof(new DataAttachProofMsg(proof)));
        assertEquals(id, a.sessionId());

        // One data connection per session; unknown ids and wrong proofs are refused alike.
        ServerHandshake second = server("the shared secret, 16+", tcp);
        fail(second.onDataAttach(new DataAttachMsg(id, clientNonce)), ErrorCode.AUTH_FAILED);
        ServerHandshake wrong = server("the shared secret, 16+", tcp);
        long other = ((HandshakeStep.Session) sessionOver(tcp)).sessionId();
        DataAttachAckMsg ack2 =
                reply(
                        wrong.onDataAttach(new DataAttachMsg(other, clientNonce)),
                        DataAttachAckMsg.class,
                        ConnectionState.ATTACH);
        byte[] badProof =
                KeySchedule.dataConnectionProof(key, false, other, clientNonce, ack2.serverNonce());
        fail(wrong.onDataAttachProof(new DataAttachProofMsg(badProof)), ErrorCode.AUTH_FAILED);
        assertEquals(2, serverMetrics.dataConnectionsRefused());
    }

    /** Another session set up through a fresh pair of handshakes; returns the server's step. */
    private HandshakeStep sessionOver(Set<DataPlaneKind> planes) {
        ClientHandshake c = client(null, planes);
        ServerHandshake s = server(null, planes);
        reply(
                helloExchange(c, s, ConnectionState.SESSION),
                SessionSetupMsg.class,
                ConnectionState.SESSION);
        return s.onSessionSetup();
    }

    @Test
    void aRefusedSessionReleasesItsIdAndDataConnectionKey() {
        Set<DataPlaneKind> tcp = EnumSet.of(DataPlaneKind.TCP);
        ServerHandshake s = server(null, tcp);
        ClientHandshake c = client(null, tcp);
        helloExchange(c, s, ConnectionState.SESSION);
        HandshakeStep.Session step =
                assertInstanceOf(HandshakeStep.Session.class, s.onSessionSetup());
        assertEquals(1, dataKeys.size());
        s.sessionRefused(step.sessionId());
        assertTrue(liveIds.isEmpty());
        assertEquals(0, dataKeys.size());
    }
}
