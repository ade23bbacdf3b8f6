package io.netapprox.core.control;

import io.netapprox.core.NetApproxException;

/**
 * A control-plane failure with a wire {@link ErrorCode}.
 *
 * <p>Thrown (or used to complete a future exceptionally) when the peer answered with an ERROR
 * frame, when the local endpoint detected a protocol violation, or by an application {@link
 * ControlHandler} to refuse a request: in that case the message is sent to the peer verbatim (so it
 * must not contain secrets) with the given code, typically {@link ErrorCode#REQUEST_REJECTED}.
 */
public class ControlException extends NetApproxException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;
    private final boolean remote;

    public ControlException(ErrorCode code, String message) {
        this(code, message, false, null);
    }

    public ControlException(ErrorCode code, String message, Throwable cause) {
        this(code, message, false, cause);
    }

    ControlException(ErrorCode code, String message, boolean remote, Throwable cause) {
        super(code + ": " + message, cause);
        if (code == null) {
            throw new NullPointerException("code");
        }
        this.code = code;
        this.remote = remote;
    }

    /** The error code. */
    public ErrorCode code() {
        return code;
    }

    /**
     * True when the error was reported by the peer in an ERROR frame, false when it was detected
     * locally.
     */
    public boolean isRemote() {
        return remote;
    }
}
