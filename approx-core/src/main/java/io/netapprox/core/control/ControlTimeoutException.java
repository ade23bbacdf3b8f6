package io.netapprox.core.control;

import io.netapprox.core.NetApproxException;

/** A control request got no response within its timeout. The connection itself stays open. */
public final class ControlTimeoutException extends NetApproxException {
    private static final long serialVersionUID = 1L;

    ControlTimeoutException(String message) {
        super(message);
    }
}
