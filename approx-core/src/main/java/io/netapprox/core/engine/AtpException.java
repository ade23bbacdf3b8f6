package io.netapprox.core.engine;

import io.netapprox.core.NetApproxException;
import io.netapprox.core.job.AtpStatus;

/**
 * An engine error that is not a caller mistake: the peer died, the session idled out, a protocol
 * error, a system call failed, a configured limit was hit, or a send timed out waiting for buffer
 * space. Carries the native status.
 *
 * <p>Caller mistakes map to the usual JDK exceptions instead: {@code NA_ERR_INVALID_ARGUMENT} -&gt;
 * {@link IllegalArgumentException}; {@code NA_ERR_CLOSED}, {@code NA_ERR_CLOSED_HANDLE} and use
 * after {@code close()} -&gt; {@link IllegalStateException} ("... closed"); {@code
 * NA_ERR_ALREADY_EXISTS} -&gt; {@link IllegalStateException}. See {@link #check(int, String)}.
 */
public class AtpException extends NetApproxException {
    private static final long serialVersionUID = 1L;
    private final AtpStatus status;

    public AtpException(AtpStatus status, String message) {
        super(message + " (" + status.nativeName() + ")");
        this.status = status;
    }

    public AtpException(AtpStatus status, String message, Throwable cause) {
        super(message + " (" + status.nativeName() + ")", cause);
        this.status = status;
    }

    public AtpStatus status() {
        return status;
    }

    /**
     * Throws the exception a native status maps to; returns the code when it is {@code NA_OK} or
     * positive.
     */
    static int check(int code, String what) {
        if (code >= 0) {
            return code;
        }
        throw map(code, what);
    }

    static RuntimeException map(int code, String what) {
        AtpStatus s = AtpStatus.of(code);
        switch (s) {
            case INVALID_ARGUMENT:
                return new IllegalArgumentException(
                        what + ": invalid argument (" + s.nativeName() + ")");
            case CLOSED:
            case CLOSED_HANDLE:
                return new IllegalStateException(what + ": closed (" + s.nativeName() + ")");
            case ALREADY_EXISTS:
                return new IllegalStateException(
                        what + ": already exists (" + s.nativeName() + ")");
            case WOULD_BLOCK:
                return new AtpException(s, what + ": timed out waiting for send buffer space");
            default:
                return new AtpException(s, what + " failed");
        }
    }
}
