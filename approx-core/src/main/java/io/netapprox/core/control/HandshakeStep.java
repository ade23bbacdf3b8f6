package io.netapprox.core.control;

import io.netapprox.core.control.Messages.Msg;

/**
 * What one handshake frame asks of its connection ({@link ClientHandshake}, {@link
 * ServerHandshake}): the handshakes decide, the connection sends, opens sessions and closes.
 */
sealed interface HandshakeStep {
    /** Answer with {@code msg} and go to {@code next}. */
    record Reply(Msg msg, ConnectionState next) implements HandshakeStep {}

    /**
     * Fail the connection: an ERROR with {@code code} and {@code message} to the peer; {@code
     * localDetail} (e.g. an exception) only in the local log. Its metric is counted already.
     */
    record Fail(ErrorCode code, String message, Object localDetail) implements HandshakeStep {
        Fail(ErrorCode code, String message) {
            this(code, message, null);
        }
    }

    /**
     * The keys are agreed: open session {@code sessionId} on the data plane with {@code sessionKey}
     * (the caller wipes it). Server: {@code confirm} goes back in SESSION_SETUP_ACK. Client: {@code
     * dataConnectionKey} opens the session's TCP data connection (null when TCP is not agreed).
     */
    record Session(long sessionId, byte[] sessionKey, byte[] confirm, byte[] dataConnectionKey)
            implements HandshakeStep {}

    /** Server: a data connection proved session {@code sessionId}'s key: hand it over. */
    record Attach(long sessionId) implements HandshakeStep {}
}
