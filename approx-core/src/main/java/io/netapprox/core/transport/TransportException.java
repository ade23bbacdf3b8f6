package io.netapprox.core.transport;

import io.netapprox.core.NetApproxException;
import io.netapprox.core.job.AtpStatus;

/**
 * Why a connect, a transfer or a transfer's report failed. Unchecked (like Netty's {@code
 * ChannelException}); the {@link #reason()} says which part failed, {@link #getCause()} is the
 * underlying control-plane or engine error (e.g. a {@code ControlException} with code AUTH_FAILED,
 * an {@code AtpJobFailedException} with status PEER_DEAD), and {@link #report()} the transfer's
 * report when one exists.
 */
public final class TransportException extends NetApproxException {
    private static final long serialVersionUID = 1L;

    /** Which part failed. */
    public enum Reason {
        /**
         * Connecting failed: TCP connect, handshake, authentication or data-plane session setup.
         */
        CONNECT_FAILED,
        /**
         * The peer refused the request (its handler rejected it, or it could not start the job).
         */
        REJECTED,
        /** The control connection ended (peer closed or died, idle timeout, protocol error). */
        CONTROL_CLOSED,
        /** The data-plane (ATP) session failed: peer dead, idle timeout, protocol error. */
        DATA_PLANE_FAILED,
        /** The ATP job ended with an error status; {@link #status()} says which. */
        JOB_FAILED,
        /** A request or the peer's final report did not arrive in time. */
        TIMEOUT,
        /** Closed locally (the peer handle or the transport). */
        CLOSED
    }

    private final Reason reason;
    private final AtpStatus status;
    private final transient TransferReport report;
    private final boolean noDataPlane;

    public TransportException(Reason reason, String message, Throwable cause) {
        this(reason, message, cause, null, null);
    }

    private TransportException(String message) {
        super(Reason.CONNECT_FAILED + ": " + message, null);
        this.reason = Reason.CONNECT_FAILED;
        this.status = null;
        this.report = null;
        this.noDataPlane = true;
    }

    /**
     * A {@link Reason#CONNECT_FAILED} that retrying cannot cure: no data plane both ends may use
     * reaches the peer (ATP only, and UDP does not pass). See {@link #noDataPlane()}.
     */
    static TransportException noDataPlane(String message) {
        return new TransportException(message);
    }

    TransportException(
            Reason reason,
            String message,
            Throwable cause,
            AtpStatus status,
            TransferReport report) {
        super(reason + ": " + message, cause);
        this.reason = reason;
        this.status = status;
        this.report = report;
        this.noDataPlane = false;
    }

    public Reason reason() {
        return reason;
    }

    /**
     * The engine status for {@link Reason#JOB_FAILED} / {@link Reason#DATA_PLANE_FAILED}, else
     * null.
     */
    public AtpStatus status() {
        return status;
    }

    /** The transfer's (failed) report, when the job got far enough to have one; else null. */
    public TransferReport report() {
        return report;
    }

    /**
     * True when the connect failed because no data plane both ends may use reaches the peer (the
     * peer is not reachable over UDP and one side runs {@code dataPlane=atp}): a configuration or
     * network fault that every later connect to that peer meets too. An integration fails its job
     * or query then, instead of answering without the peer's data.
     */
    public boolean noDataPlane() {
        return noDataPlane;
    }
}
