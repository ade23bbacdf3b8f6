package io.netapprox.core.control;

import io.netapprox.core.control.Messages.AckMsg;
import io.netapprox.core.control.Messages.DataPlaneSelectMsg;
import io.netapprox.core.control.Messages.DataRequestMsg;
import io.netapprox.core.control.Messages.DataResponseMsg;
import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.JobAcceptMsg;
import io.netapprox.core.control.Messages.JobAnnounceMsg;
import io.netapprox.core.control.Messages.JobRejectMsg;
import io.netapprox.core.control.Messages.JobReportMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.MsrUpdateMsg;
import io.netty.channel.Channel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requests a peer sends on an established {@link ControlConnection}: each goes to the {@link
 * ControlHandler} (at most {@link ControlConfig#maxPendingRequests()} in flight; one more is
 * answered {@code OVERLOADED}), and its outcome goes back as the reply, or as the ERROR its failure
 * maps to. The connection has checked the frame is allowed (not a handshake message; a client's
 * single DATA_PLANE_SELECT among the agreed planes) before {@link #dispatch}.
 */
final class InboundRequests {
    private static final Logger LOG = LoggerFactory.getLogger(ControlConnection.class);

    private final ControlConnection conn;
    private final ControlHandler handler;
    private final ControlMetrics metrics;
    private final int maxPending;
    private final AtomicInteger inFlight = new AtomicInteger();

    InboundRequests(
            ControlConnection conn,
            ControlHandler handler,
            ControlMetrics metrics,
            int maxPending) {
        this.conn = conn;
        this.handler = handler;
        this.metrics = metrics;
        this.maxPending = maxPending;
    }

    /** Hands request {@code frame} to the handler; its reply is sent when it completes. */
    void dispatch(Frame frame) {
        long id = frame.requestId();
        Msg msg = frame.msg();
        if (inFlight.incrementAndGet() > maxPending) {
            inFlight.decrementAndGet();
            conn.send(
                    id,
                    new ErrorMsg(
                            ErrorCode.OVERLOADED.code(),
                            "more than " + maxPending + " requests in flight"));
            return;
        }
        CompletionStage<? extends Msg> reply;
        try {
            if (msg instanceof JobAnnounceMsg ja) {
                int job = ja.job().jobId();
                reply =
                        nonNull(handler.onJobAnnounce(conn, ja.job()))
                                .thenApply(
                                        d ->
                                                d.accepted()
                                                        ? new JobAcceptMsg(job)
                                                        : new JobRejectMsg(job, d.reason()));
            } else if (msg instanceof DataRequestMsg dr) {
                reply =
                        nonNull(handler.onDataRequest(conn, dr.jobId(), dr.payload()))
                                .thenApply(
                                        b -> {
                                            if (b == null) {
                                                throw new IllegalStateException(
                                                        "onDataRequest completed with null");
                                            }
                                            return new DataResponseMsg(b);
                                        });
            } else if (msg instanceof MsrUpdateMsg mu) {
                handler.onMsrUpdate(conn, mu.update());
                reply = CompletableFuture.completedFuture(new AckMsg());
            } else if (msg instanceof JobReportMsg jr) {
                handler.onJobReport(conn, jr.report());
                reply = CompletableFuture.completedFuture(new AckMsg());
            } else if (msg instanceof DataPlaneSelectMsg sel) {
                conn.peerSelectedPlane();
                reply =
                        nonNull(
                                        handler.onDataPlaneSelect(
                                                conn,
                                                sel.plane(),
                                                ControlConnection.printable(sel.reason())))
                                .thenApply(v -> new AckMsg());
            } else {
                reply =
                        CompletableFuture.failedFuture(
                                new IllegalStateException("no dispatch for " + msg.type()));
            }
        } catch (RuntimeException e) {
            reply = CompletableFuture.failedFuture(e);
        }
        MessageType type = msg.type();
        reply.whenComplete(
                (response, error) -> {
                    inFlight.decrementAndGet();
                    Channel ch = conn.channel();
                    if (ch != null && ch.eventLoop().inEventLoop()) {
                        // Completed on the event loop (e.g. the handler had completed before this
                        // callback was registered): queue the reply behind the writes other threads
                        // have already submitted, so it never overtakes a request the handler's
                        // thread sent before completing (a JOB_ANNOUNCE before its DATA_RESPONSE).
                        try {
                            ch.eventLoop().execute(() -> reply(id, type, response, error));
                        } catch (java.util.concurrent.RejectedExecutionException e) {
                            LOG.debug(
                                    "control connection {}: closing, reply dropped",
                                    conn.describePeer());
                        }
                    } else {
                        reply(id, type, response, error);
                    }
                });
    }

    /** Sends the reply to inbound request {@code id} (or the ERROR its failure maps to). */
    private void reply(long id, MessageType type, Msg response, Throwable error) {
        if (conn.isClosed()) {
            return;
        }
        if (error == null) {
            if (!conn.sendChecked(id, response)) {
                metrics.handlerErrors.incrementAndGet();
                conn.send(
                        id,
                        new ErrorMsg(
                                ErrorCode.HANDLER_ERROR.code(),
                                "the "
                                        + response.type()
                                        + " reply exceeds the frame limit of "
                                        + conn.peerMaxFrame()
                                        + " bytes"));
            }
            return;
        }
        Throwable cause =
                error instanceof CompletionException && error.getCause() != null
                        ? error.getCause()
                        : error;
        if (cause instanceof ControlException ce) {
            ErrorCode code = ce.code().isFatal() ? ErrorCode.REQUEST_REJECTED : ce.code();
            String text =
                    ce.getMessage().startsWith(ce.code() + ": ")
                            ? ce.getMessage().substring(ce.code().toString().length() + 2)
                            : ce.getMessage();
            conn.send(id, new ErrorMsg(code.code(), text));
        } else {
            metrics.handlerErrors.incrementAndGet();
            conn.warnOnce(
                    "control connection {}: {} handler failed: {}",
                    conn.describePeer(),
                    type,
                    cause.toString());
            LOG.debug("handler failure", cause);
            conn.send(
                    id,
                    new ErrorMsg(
                            ErrorCode.HANDLER_ERROR.code(),
                            type + " handler failed on the remote endpoint (details in its log)"));
        }
    }

    private static <T> CompletionStage<T> nonNull(CompletionStage<T> s) {
        if (s == null) {
            throw new IllegalStateException("handler returned a null CompletionStage");
        }
        return s;
    }
}
