package io.netapprox.core.control;

/**
 * The answer to a JOB_ANNOUNCE: JOB_ACCEPT, or JOB_REJECT with a human-readable reason (sent to the
 * peer).
 *
 * @param accepted whether the job is accepted
 * @param reason the rejection reason ({@code ""} when accepted); at most {@value #MAX_REASON_BYTES}
 *     UTF-8 bytes are sent, longer reasons are truncated
 */
public record JobDecision(boolean accepted, String reason) {
    public static final int MAX_REASON_BYTES = 1024;

    private static final JobDecision ACCEPT = new JobDecision(true, "");

    public JobDecision {
        reason = reason == null ? "" : reason;
    }

    public static JobDecision accept() {
        return ACCEPT;
    }

    public static JobDecision reject(String reason) {
        return new JobDecision(false, reason);
    }
}
