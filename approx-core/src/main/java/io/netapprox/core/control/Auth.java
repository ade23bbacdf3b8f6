package io.netapprox.core.control;

import io.netapprox.core.control.Messages.Msg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Shared-secret challenge-response authentication (HMAC-SHA256), in the spirit of Spark's {@code
 * spark.authenticate}: both sides contribute a 32-byte nonce, both prove knowledge of the secret
 * over a transcript that binds the nonces and both HELLO bodies (versions, identities, data-plane
 * addresses), and the secret itself never crosses the wire. MACs are compared in constant time.
 */
final class Auth {
    static final SecureRandom RANDOM = new SecureRandom();

    private static final byte[] CLIENT_LABEL =
            "NetApprox control v1 client proof".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_LABEL =
            "NetApprox control v1 server proof".getBytes(StandardCharsets.US_ASCII);

    private Auth() {}

    static byte[] randomBytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    /** The canonical body bytes of a handshake message, as they go into the transcript. */
    static byte[] bodyBytes(Msg msg) {
        ByteBuf buf = Unpooled.buffer(256);
        try {
            WireFormat.encodeBody(msg, buf);
            byte[] b = new byte[buf.readableBytes()];
            buf.readBytes(b);
            return b;
        } finally {
            buf.release();
        }
    }

    static byte[] clientProof(
            byte[] secret, byte[] helloBody, byte[] helloAckBody, byte[] clientNonce) {
        return mac(secret, CLIENT_LABEL, helloBody, helloAckBody, clientNonce);
    }

    static byte[] serverProof(
            byte[] secret, byte[] helloBody, byte[] helloAckBody, byte[] clientNonce) {
        return mac(secret, SERVER_LABEL, helloBody, helloAckBody, clientNonce);
    }

    /** Constant-time comparison. */
    static boolean verify(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }

    private static byte[] mac(
            byte[] secret,
            byte[] label,
            byte[] helloBody,
            byte[] helloAckBody,
            byte[] clientNonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            lengthPrefixed(mac, helloBody); // HELLO_ACK carries the server nonce
            lengthPrefixed(mac, helloAckBody);
            lengthPrefixed(mac, clientNonce);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is not available in this JVM", e);
        }
    }

    private static void lengthPrefixed(Mac mac, byte[] b) {
        mac.update(
                new byte[] {
                    (byte) (b.length >>> 24),
                    (byte) (b.length >>> 16),
                    (byte) (b.length >>> 8),
                    (byte) b.length
                });
        mac.update(b);
    }
}
