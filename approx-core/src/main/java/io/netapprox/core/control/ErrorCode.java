package io.netapprox.core.control;

/**
 * Error codes carried by ERROR frames. The numeric values are part of the wire format and never
 * change meaning.
 *
 * <p>A code is <em>fatal</em> when the endpoint that sends it closes the connection right after the
 * ERROR frame (framing, version, authentication and state-machine violations); non-fatal codes
 * answer one request and leave the connection usable.
 */
public enum ErrorCode {
    /**
     * A frame or one of its fields is malformed (bad magic, truncated, bad field length, trailing
     * bytes).
     */
    MALFORMED_FRAME(1, true),
    /** The peer speaks a protocol version this endpoint does not support. */
    VERSION_MISMATCH(2, true),
    /** The frame's message type is not defined by the negotiated version. */
    UNKNOWN_MESSAGE_TYPE(3, true),
    /** The frame's declared body length exceeds the receiver's limit. */
    FRAME_TOO_LARGE(4, true),
    /**
     * A well-formed message arrived in a state that does not allow it (e.g. JOB_ANNOUNCE before
     * SESSION_SETUP).
     */
    UNEXPECTED_MESSAGE(5, true),
    /** Authentication failed or is required but was not configured; no session was created. */
    AUTH_FAILED(6, true),
    /** The handshake (HELLO, authentication, SESSION_SETUP) did not finish in time. */
    HANDSHAKE_TIMEOUT(7, true),
    /** Nothing was received from the peer within the idle timeout. */
    IDLE_TIMEOUT(8, true),
    /** The data plane could not open the session, or the session was refused by the handler. */
    SESSION_FAILED(9, true),
    /**
     * The request was refused by the application handler (its {@link ControlException} message is
     * forwarded).
     */
    REQUEST_REJECTED(10, false),
    /**
     * The application handler failed unexpectedly; details are in the handling endpoint's log only.
     */
    HANDLER_ERROR(11, false),
    /** Too many requests are in flight on this connection; retry later. */
    OVERLOADED(12, false),
    /** The handler does not implement this request. */
    UNSUPPORTED(13, false),
    /** The endpoint is shutting down. */
    SHUTTING_DOWN(14, true),
    /** An unexpected internal failure of the control plane itself. */
    INTERNAL_ERROR(15, true);

    private final int code;
    private final boolean fatal;

    ErrorCode(int code, boolean fatal) {
        this.code = code;
        this.fatal = fatal;
    }

    /** The wire value (u16). */
    public int code() {
        return code;
    }

    /** Whether the sender of this code closes the connection after it. */
    public boolean isFatal() {
        return fatal;
    }

    /**
     * The code for a wire value, or {@code null} if unknown (a newer peer); callers map null to a
     * generic error.
     */
    public static ErrorCode fromCode(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }
}
