package io.netapprox.core.engine;

import io.netapprox.core.job.JobReport;

/**
 * Non-message events that {@link AtpChannelForwarder} fires through a pipeline with {@code
 * fireUserEventTriggered}: a job started, a message was lost, a job finished (receiver report), or
 * the session failed.
 */
public final class AtpJobEvent {
    /** What happened. */
    public enum Kind {
        JOB_STARTED,
        MESSAGE_LOST,
        JOB_DONE,
        SESSION_ERROR
    }

    private final Kind kind;
    private final AtpSession session;
    private final int jobId;
    private final int messageId;
    private final long groupId;
    private final JobReport report;
    private final AtpException error;

    AtpJobEvent(
            Kind kind,
            AtpSession session,
            int jobId,
            int messageId,
            long groupId,
            JobReport report,
            AtpException error) {
        this.kind = kind;
        this.session = session;
        this.jobId = jobId;
        this.messageId = messageId;
        this.groupId = groupId;
        this.report = report;
        this.error = error;
    }

    public Kind kind() {
        return kind;
    }

    public AtpSession session() {
        return session;
    }

    public int jobId() {
        return jobId;
    }

    /** MESSAGE_LOST only. */
    public int messageId() {
        return messageId;
    }

    /** MESSAGE_LOST only. */
    public long groupId() {
        return groupId;
    }

    /** JOB_DONE only: the receiver's report. */
    public JobReport report() {
        return report;
    }

    /** SESSION_ERROR only. */
    public AtpException error() {
        return error;
    }

    @Override
    public String toString() {
        return "AtpJobEvent{"
                + kind
                + ", session="
                + Long.toUnsignedString(session.id())
                + ", job="
                + jobId
                + (kind == Kind.MESSAGE_LOST ? ", message=" + messageId + ", group=" + groupId : "")
                + (report != null ? ", " + report : "")
                + (error != null ? ", " + error.getMessage() : "")
                + "}";
    }
}
