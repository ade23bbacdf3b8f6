package io.netapprox.core.transport;

import io.netapprox.core.control.ControlClosedException;
import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ControlTimeoutException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Maps control-plane failures to {@link TransportException}s. */
final class Errors {
    private Errors() {}

    static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    static TransportException fromControl(Throwable err, String what) {
        Throwable c = unwrap(err);
        if (c instanceof TransportException te) {
            return te;
        }
        if (c instanceof ControlTimeoutException) {
            return new TransportException(
                    TransportException.Reason.TIMEOUT, what + ": " + c.getMessage(), c);
        }
        if (c instanceof ControlClosedException) {
            return new TransportException(
                    TransportException.Reason.CONTROL_CLOSED, what + ": " + c.getMessage(), c);
        }
        if (c instanceof ControlException ce) {
            return new TransportException(
                    TransportException.Reason.REJECTED,
                    what
                            + " refused"
                            + (ce.isRemote() ? " by the peer" : "")
                            + ": "
                            + ce.getMessage(),
                    c);
        }
        return new TransportException(
                TransportException.Reason.REJECTED, what + " failed: " + c, c);
    }
}
