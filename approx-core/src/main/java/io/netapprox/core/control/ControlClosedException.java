package io.netapprox.core.control;

import io.netapprox.core.NetApproxException;

/**
 * The control connection closed (locally, by the peer, or after an error) before a request got its
 * response. {@link #getCause()} is the error that closed it, if there was one (often a {@link
 * ControlException}).
 */
public final class ControlClosedException extends NetApproxException {
    private static final long serialVersionUID = 1L;

    ControlClosedException(String message, Throwable cause) {
        super(message, cause);
    }
}
