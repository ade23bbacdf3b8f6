package io.netapprox.core.control;

import static io.netapprox.core.control.TestSupport.addressOf;
import static io.netapprox.core.control.TestSupport.await;
import static io.netapprox.core.control.TestSupport.clientConfig;
import static io.netapprox.core.control.TestSupport.failure;
import static io.netapprox.core.control.TestSupport.serverConfig;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.SelfSignedCertificate;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The optional TLS hook: the same protocol over Netty's SslHandler. */
@SuppressWarnings("deprecation") // SelfSignedCertificate: fine for a test certificate
class ControlTlsTest {

    @Test
    void sessionOverTlsWithAuthentication() throws Exception {
        SelfSignedCertificate cert;
        try {
            cert = new SelfSignedCertificate("localhost", "EC", 256);
        } catch (Exception | LinkageError e) {
            Assumptions.abort("no self-signed certificate generator on this JVM: " + e);
            return;
        }
        try {
            SslContext serverCtx = SslContextBuilder.forServer(cert.key(), cert.cert()).build();
            // The test certificate names "localhost" while we connect to 127.0.0.1; trust it
            // explicitly instead.
            SslContext clientCtx =
                    SslContextBuilder.forClient()
                            .trustManager(cert.cert())
                            .endpointIdentificationAlgorithm(null)
                            .build();
            RecordingDataPlane serverDp = new RecordingDataPlane(1);
            RecordingDataPlane clientDp = new RecordingDataPlane(2);
            String secret = "tls plus shared secret";
            try (ControlServer server =
                            ControlServer.start(
                                    serverConfig().sslContext(serverCtx).authSecret(secret).build(),
                                    serverDp,
                                    new ControlHandler() {});
                    ControlClientFactory tls =
                            new ControlClientFactory(
                                    clientConfig().sslContext(clientCtx).authSecret(secret).build(),
                                    clientDp,
                                    null);
                    ControlClientFactory plain =
                            new ControlClientFactory(
                                    clientConfig().authSecret(secret).build(),
                                    new RecordingDataPlane(3),
                                    null)) {
                ControlClient client = await(tls.connect(addressOf(server)));
                assertTrue(client.isActive());
                TestSupport.eventually("server session", () -> serverDp.openCount() == 1);
                assertArrayEquals(clientDp.opened.get(0).key(), serverDp.opened.get(0).key());
                // A plain-TCP client cannot talk to a TLS server: its handshake fails, no session.
                failure(plain.connect(addressOf(server)));
                assertEquals(1, serverDp.openCount());
                assertTrue(await(client.ping()).toNanos() > 0);
            }
        } finally {
            cert.delete();
        }
    }
}
