package io.netapprox.core.control;

import java.util.concurrent.TimeoutException;

/** A control request got no response within its timeout. The connection itself stays open. */
public final class ControlTimeoutException extends TimeoutException {
    private static final long serialVersionUID = 1L;

    ControlTimeoutException(String message) {
        super(message);
    }
}
