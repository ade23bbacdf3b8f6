package io.netapprox.core.control;

import io.netapprox.core.control.Messages.Msg;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.security.SecureRandom;

/**
 * Handshake randomness and transcript bytes. Authentication itself (the optional shared secret, in
 * the spirit of Spark's {@code spark.authenticate}) is part of the {@link KeySchedule}: both sides
 * prove knowledge of the secret and of their ephemeral key over a transcript that binds both
 * nonces, both shares and both HELLO bodies; the secret never crosses the wire.
 */
final class Auth {
    static final SecureRandom RANDOM = new SecureRandom();

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
}
