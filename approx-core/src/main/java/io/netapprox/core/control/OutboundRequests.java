package io.netapprox.core.control;

import io.netapprox.core.control.Messages.DataRequestMsg;
import io.netapprox.core.control.Messages.DataResponseMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.JobAcceptMsg;
import io.netapprox.core.control.Messages.JobAnnounceMsg;
import io.netapprox.core.control.Messages.JobRejectMsg;
import io.netapprox.core.control.Messages.JobReportMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.MsrUpdateMsg;
import io.netapprox.core.control.Messages.PingMsg;
import io.netapprox.core.job.JobReport;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The requests this side sends on an established {@link ControlConnection} (the typed calls of
 * {@link ControlSession}: JOB_ANNOUNCE, DATA_REQUEST, MSR_UPDATE, JOB_REPORT, PING, and the
 * client's DATA_PLANE_SELECT): each is checked (session up, connection open, under the pending
 * bound, within the frame limit of both sides), framed and written, and its response correlated by
 * id in the connection's {@link PendingRequests}, whose timeouts run on the channel's event loop.
 * Callable from any thread.
 */
final class OutboundRequests {
    private final ControlConnection conn;
    private final ControlConfig config;
    private final ControlMetrics metrics;
    private final PendingRequests requests;

    OutboundRequests(ControlConnection conn, ControlConfig config, ControlMetrics metrics) {
        this.conn = conn;
        this.config = config;
        this.metrics = metrics;
        this.requests =
                new PendingRequests(
                        config.maxPendingRequests(),
                        (task, ms) -> {
                            ScheduledFuture<?> t =
                                    conn.channel()
                                            .eventLoop()
                                            .schedule(task, ms, TimeUnit.MILLISECONDS);
                            return () -> t.cancel(false);
                        },
                        metrics,
                        conn::describePeer);
    }

    /** The correlation table: responses and ERRORs complete its requests by id. */
    PendingRequests pending() {
        return requests;
    }

    <T> CompletableFuture<T> request(Msg msg, Duration timeout, Function<Msg, T> mapper) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            return CompletableFuture.failedFuture(
                    new IllegalArgumentException("timeout must be positive: " + timeout));
        }
        if (conn.isClosed() || conn.state() == ConnectionState.CLOSING) {
            return CompletableFuture.failedFuture(
                    new ControlClosedException(
                            "control connection to " + conn.describePeer() + " is closed",
                            conn.closeCause()));
        }
        if (conn.state() != ConnectionState.ESTABLISHED) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("the session is not set up yet"));
        }
        if (requests.full()) {
            return CompletableFuture.failedFuture(
                    new ControlException(
                            ErrorCode.OVERLOADED,
                            "more than "
                                    + requests.maxPending()
                                    + " requests pending on "
                                    + conn.describePeer()));
        }
        Channel ch = conn.channel();
        long id = requests.nextId();
        ByteBuf buf = ch.alloc().buffer();
        try {
            FrameEncoder.encode(new Frame(id, msg), buf);
        } catch (RuntimeException e) {
            buf.release();
            return CompletableFuture.failedFuture(e);
        }
        int body = buf.readableBytes() - WireFormat.HEADER_LENGTH;
        int limit = Math.min(conn.peerMaxFrame(), config.maxFrameLength());
        if (body > limit) {
            buf.release();
            return CompletableFuture.failedFuture(
                    new IllegalArgumentException(
                            msg.type()
                                    + " body of "
                                    + body
                                    + " bytes exceeds the frame limit of "
                                    + limit
                                    + " bytes"));
        }
        CompletableFuture<Msg> f = requests.add(id, msg.type(), Math.max(1, timeout.toMillis()));
        if (conn.isClosed()) { // raced with channelInactive, which may have failed the table before
            // our add
            buf.release();
            requests.fail(
                    id,
                    new ControlClosedException(
                            "control connection to " + conn.describePeer() + " is closed",
                            conn.closeCause()));
            return f.thenApply(mapper);
        }
        metrics.framesSent.incrementAndGet();
        ch.writeAndFlush(buf)
                .addListener(
                        w -> {
                            if (!w.isSuccess()) {
                                // A full send queue (FlowControl) fails only this request.
                                requests.fail(
                                        id,
                                        w.cause() instanceof ControlException overloaded
                                                ? overloaded
                                                : new ControlClosedException(
                                                        "could not send "
                                                                + msg.type()
                                                                + " to "
                                                                + conn.describePeer(),
                                                        w.cause()));
                            }
                        });
        return f.thenApply(mapper);
    }

    CompletableFuture<JobDecision> announceJob(JobAnnouncement job) {
        return announceJob(job, config.requestTimeout());
    }

    CompletableFuture<JobDecision> announceJob(JobAnnouncement job, Duration timeout) {
        if (job == null) {
            return CompletableFuture.failedFuture(new NullPointerException("job"));
        }
        return request(
                new JobAnnounceMsg(job),
                timeout,
                m -> {
                    if (m instanceof JobAcceptMsg a) {
                        checkJob(job.jobId(), a.jobId());
                        return JobDecision.accept();
                    }
                    JobRejectMsg r = (JobRejectMsg) m;
                    checkJob(job.jobId(), r.jobId());
                    return JobDecision.reject(r.reason());
                });
    }

    private static void checkJob(int expected, int actual) {
        if (expected != actual) {
            throw new ControlException(
                    ErrorCode.UNEXPECTED_MESSAGE,
                    "decision for job "
                            + Integer.toUnsignedString(actual)
                            + " in answer to job "
                            + Integer.toUnsignedString(expected));
        }
    }

    CompletableFuture<byte[]> requestData(int jobId, byte[] request) {
        return requestData(jobId, request, config.requestTimeout());
    }

    CompletableFuture<byte[]> requestData(int jobId, byte[] request, Duration timeout) {
        byte[] copy = request == null ? new byte[0] : request.clone();
        return request(
                new DataRequestMsg(jobId, copy), timeout, m -> ((DataResponseMsg) m).payload());
    }

    CompletableFuture<Void> updateMsr(MsrUpdate update) {
        return updateMsr(update, config.requestTimeout());
    }

    CompletableFuture<Void> updateMsr(MsrUpdate update, Duration timeout) {
        if (update == null) {
            return CompletableFuture.failedFuture(new NullPointerException("update"));
        }
        return request(new MsrUpdateMsg(update), timeout, m -> null);
    }

    CompletableFuture<Void> sendReport(JobReport report) {
        return sendReport(report, config.requestTimeout());
    }

    CompletableFuture<Void> sendReport(JobReport report, Duration timeout) {
        if (report == null) {
            return CompletableFuture.failedFuture(new NullPointerException("report"));
        }
        return request(new JobReportMsg(report), timeout, m -> null);
    }

    CompletableFuture<Duration> ping() {
        long start = System.nanoTime();
        return request(
                new PingMsg(),
                config.requestTimeout(),
                m -> Duration.ofNanos(System.nanoTime() - start));
    }
}
