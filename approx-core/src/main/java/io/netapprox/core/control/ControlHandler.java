package io.netapprox.core.control;

import io.netapprox.core.job.JobReport;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What the integration implements to serve inbound control requests. The protocol is symmetric once
 * a session exists: the server's handler serves requests from clients and a client's handler
 * (optional) serves requests the server sends over the same connection.
 *
 * <p>Methods are called on the connection's Netty event-loop thread, in arrival order, and must not
 * block: slow work should return an incomplete {@link CompletionStage} and complete it later from
 * any thread. To refuse a request with a message the peer sees, throw (or complete exceptionally
 * with) a {@link ControlException}, usually with {@link ErrorCode#REQUEST_REJECTED}; any other
 * exception is logged here and reported to the peer as {@link ErrorCode#HANDLER_ERROR} without
 * details. The defaults refuse everything with {@link ErrorCode#UNSUPPORTED}.
 */
public interface ControlHandler {
    /**
     * A session was set up (the data plane has already opened it). Throwing closes the connection
     * with SESSION_FAILED (and the data-plane session with it).
     */
    default void onSessionSetup(ControlSession session) {}

    /** The connection of a set-up session ended (after the data plane closed the session). */
    default void onSessionClosed(ControlSession session) {}

    /** JOB_ANNOUNCE: accept or reject the job. */
    default CompletionStage<JobDecision> onJobAnnounce(
            ControlSession session, JobAnnouncement job) {
        return CompletableFuture.completedFuture(
                JobDecision.reject("this endpoint does not accept jobs"));
    }

    /**
     * DATA_REQUEST: "send me data X as job J". The returned bytes are the integration-defined
     * reply.
     */
    default CompletionStage<byte[]> onDataRequest(
            ControlSession session, int jobId, byte[] request) {
        throw new ControlException(
                ErrorCode.UNSUPPORTED, "this endpoint does not serve data requests");
    }

    /** MSR_UPDATE for a job; acknowledged when this returns normally. */
    default void onMsrUpdate(ControlSession session, MsrUpdate update) {
        throw new ControlException(
                ErrorCode.UNSUPPORTED, "this endpoint does not take MSR updates");
    }

    /**
     * DATA_PLANE_SELECT (server side, once per session, before any job): the client chose the plane
     * the session's jobs run on - one of {@link ControlSession#dataPlanes()}, the agreed ones - and
     * says why ({@code reason}, peer-chosen text; may be empty). Acknowledged when the returned
     * stage completes (e.g. once the session's TCP data connection has attached); failing it
     * refuses the choice. The default accepts.
     */
    default CompletionStage<Void> onDataPlaneSelect(
            ControlSession session, DataPlaneKind plane, String reason) {
        return CompletableFuture.completedFuture(null);
    }

    /** JOB_REPORT: a job's final report; acknowledged when this returns normally. */
    default void onJobReport(ControlSession session, JobReport report) {
        throw new ControlException(
                ErrorCode.UNSUPPORTED, "this endpoint does not take job reports");
    }
}
