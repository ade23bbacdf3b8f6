package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;

/**
 * A job ended with an error (peer dead, idle timeout, cancelled/closed, protocol error); carries
 * its report.
 */
public final class AtpJobFailedException extends AtpException {
    private static final long serialVersionUID = 1L;
    private final transient JobReport report;

    public AtpJobFailedException(JobReport report) {
        super(
                report.status(),
                "job "
                        + report.jobId()
                        + " of session "
                        + Long.toUnsignedString(report.sessionId())
                        + " ended with "
                        + report.status());
        this.report = report;
    }

    AtpJobFailedException(AtpStatus status, String message) {
        super(status, message);
        this.report = null;
    }

    /**
     * The final report (null when the job ended because the endpoint closed before the engine
     * reported).
     */
    public JobReport report() {
        return report;
    }
}
