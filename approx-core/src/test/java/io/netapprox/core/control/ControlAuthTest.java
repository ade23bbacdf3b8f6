package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.SECRET;
import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.body;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.encode;
import static io.netapprox.core.control.TestSupport.failure;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.HelloAckMsg;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ControlAuthTest {

    @Test
    void sharedSecretAuthenticatesBothSides() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        RecordingDataPlane clientDp = new RecordingDataPlane(2);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().authSecret(SECRET).build(),
                                serverDp,
                                new ControlHandler() {});
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().authSecret(SECRET).build(), clientDp, null)) {
            ControlClient client = await(factory.connect(addressOf(server)));
            assertTrue(client.isActive());
            assertEquals(1, clientDp.openCount());
            assertEquals(1, server.metrics().authSuccesses());
            assertEquals(1, factory.metrics().authSuccesses());
            assertEquals(0, server.metrics().authFailures());
        }
    }

    @Test
    void wrongSecretIsRejectedWithoutSessionAndTheServerKeepsServing() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        RecordingDataPlane clientDp = new RecordingDataPlane(2);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().authSecret(SECRET).build(),
                                serverDp,
                                new ControlHandler() {});
                ControlClientFactory bad =
                        new ControlClientFactory(
                                clientConfig().authSecret("incorrect horse battery staple").build(),
                                clientDp,
                                null);
                ControlClientFactory good =
                        new ControlClientFactory(
                                clientConfig().authSecret(SECRET).build(),
                                new RecordingDataPlane(3),
                                null)) {
            ControlException e =
                    assertInstanceOf(
                            ControlException.class, failure(bad.connect(addressOf(server))));
            assertEquals(ErrorCode.AUTH_FAILED, e.code());
            assertTrue(e.isRemote(), "the server reported it");
            assertFalse(e.getMessage().contains("horse"), "no secret in messages");
            assertEquals(0, clientDp.openCount());
            assertEquals(0, serverDp.openCount());
            assertEquals(1, server.metrics().authFailures());
            assertEquals(0, server.metrics().sessionsOpened());

            assertTrue(await(good.connect(addressOf(server))).isActive());
            assertEquals(1, serverDp.openCount());
        }
    }

    @Test
    void clientWithoutSecretGetsAClearError() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().authSecret(SECRET).build(),
                                serverDp,
                                new ControlHandler() {});
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().build(), new RecordingDataPlane(2), null)) {
            ControlException e =
                    assertInstanceOf(
                            ControlException.class, failure(factory.connect(addressOf(server))));
            assertEquals(ErrorCode.AUTH_FAILED, e.code());
            assertTrue(e.getMessage().contains("requires authentication"), e.getMessage());
            assertEquals(0, serverDp.openCount());
        }
    }

    @Test
    void clientWithSecretRefusesAnUnauthenticatedServer() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().build(), serverDp, new ControlHandler() {});
                ControlClientFactory factory =
                        new ControlClientFactory(
                                clientConfig().authSecret(SECRET).build(),
                                new RecordingDataPlane(2),
                                null)) {
            ControlException e =
                    assertInstanceOf(
                            ControlException.class, failure(factory.connect(addressOf(server))));
            assertEquals(ErrorCode.AUTH_FAILED, e.code());
            assertTrue(e.getMessage().contains("does not authenticate"), e.getMessage());
            assertEquals(0, serverDp.openCount());
        }
    }

    @Test
    void sessionSetupBeforeAuthenticationIsRefusedAndTheSecretNeverCrossesTheWire()
            throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().authSecret(SECRET).build(),
                                serverDp,
                                new ControlHandler() {});
                Socket s = TestSupport.rawConnect(server)) {
            OutputStream out = s.getOutputStream();
            ByteArrayOutputStream seen = new ByteArrayOutputStream();
            out.write(encode(1, TestSupport.hello("raw", 9)));
            Frame ack = TestSupport.readFrame(s);
            HelloAckMsg helloAck = assertInstanceOf(HelloAckMsg.class, ack.msg());
            assertTrue(helloAck.authRequired());
            assertEquals(32, helloAck.serverNonce().length);
            seen.write(TestSupport.encode(ack.requestId(), ack.msg()));
            // Skip authentication and ask for a session.
            out.write(
                    TestSupport.rawFrame(
                            MessageType.SESSION_SETUP, 2, body(new Messages.SessionSetupMsg())));
            ErrorMsg err = TestSupport.readError(s);
            assertEquals(ErrorCode.UNEXPECTED_MESSAGE.code(), err.code());
            TestSupport.assertClosedByPeer(s);
            assertEquals(0, serverDp.openCount());
            byte[] secret = SECRET.getBytes(StandardCharsets.UTF_8);
            assertFalse(
                    new String(seen.toByteArray(), StandardCharsets.ISO_8859_1)
                            .contains(new String(secret, StandardCharsets.ISO_8859_1)));
        }
    }

    @Test
    void forgedAuthResponseIsRejected() throws Exception {
        RecordingDataPlane serverDp = new RecordingDataPlane(1);
        try (ControlServer server =
                        ControlServer.start(
                                serverConfig().authSecret(SECRET).build(),
                                serverDp,
                                new ControlHandler() {});
                Socket s = TestSupport.rawConnect(server)) {
            OutputStream out = s.getOutputStream();
            out.write(encode(1, TestSupport.hello("raw", 9)));
            assertInstanceOf(HelloAckMsg.class, TestSupport.readFrame(s).msg());
            out.write(encode(2, new Messages.AuthResponseMsg(new byte[32])));
            ErrorMsg err = TestSupport.readError(s);
            assertEquals(ErrorCode.AUTH_FAILED.code(), err.code());
            TestSupport.assertClosedByPeer(s);
            assertEquals(0, serverDp.openCount());
            assertEquals(1, server.metrics().authFailures());
        }
    }
}
