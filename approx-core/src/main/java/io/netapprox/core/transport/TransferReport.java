package io.netapprox.core.transport;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.JobReport;
import java.util.List;
import java.util.Objects;

/**
 * The outcome of one transfer, the same on both sides: {@link #report()} is the receiver's
 * authoritative report as it crossed the control plane ({@link JobReport#forPeer()}, JOB_REPORT) -
 * per group N_g and the delivered / lost message ids - so the requesting and the serving side hold
 * equal reports. {@link #localReport()} is this side's own engine report: on the requesting
 * (receiving) side the one {@link #report()} was made from (targets, per-group counts), on the
 * serving (sending) side the sender's (packets, retransmissions, time per priority class, targets
 * after MSR updates).
 */
public final class TransferReport {
    private final JobReport report;
    private final JobReport localReport;
    private final long[] groupWaitNanos;

    TransferReport(JobReport report, JobReport localReport) {
        this(report, localReport, null);
    }

    TransferReport(JobReport report, JobReport localReport, long[] groupWaitNanos) {
        this.report = Objects.requireNonNull(report, "report");
        this.localReport = localReport;
        this.groupWaitNanos = groupWaitNanos != null ? groupWaitNanos : new long[0];
    }

    /**
     * On the receiving side, per group (the job's group order) the longest time in nanoseconds the
     * group went without a delivery while short of its target (from the announcement to the first
     * message, between messages, to the end when it ended short): a group starved behind a busier
     * priority class waits long here. Empty on the serving side and without a job.
     */
    public long[] groupWaitNanos() {
        return groupWaitNanos.clone();
    }

    /** Groups whose {@link #groupWaitNanos() wait} exceeded {@code boundNanos}. */
    public int groupsWaitingLongerThan(long boundNanos) {
        int n = 0;
        for (long w : groupWaitNanos) {
            n += w > boundNanos ? 1 : 0;
        }
        return n;
    }

    /**
     * The outcome of a request answered without a job ({@link OutgoingTransfer#answerWithoutJob}):
     * no group, no message, status OK.
     */
    static TransferReport withoutJob(int jobId) {
        return new TransferReport(
                JobReport.outcome(jobId, AtpStatus.OK, 0, 0, 0.0, new long[0], List.of()), null);
    }

    /** False when the serving side answered without a job (nothing was sent). */
    public boolean hasJob() {
        return !report.groups().isEmpty();
    }

    /** The receiver's authoritative report (what JOB_REPORT carried). */
    public JobReport report() {
        return report;
    }

    /**
     * This side's engine report: the receiver's on the requesting side, the sender's on the serving
     * side (null on the serving side when its engine job ended without a readable report).
     */
    public JobReport localReport() {
        return localReport;
    }

    public int jobId() {
        return report.jobId();
    }

    public AtpStatus status() {
        return report.status();
    }

    public boolean isSuccess() {
        return report.isSuccess();
    }

    /** Per group, in the job's group order. */
    public List<GroupReport> groups() {
        return report.groups();
    }

    /** Delivered messages over all groups. */
    public long delivered() {
        return report.delivered();
    }

    /** Lost (given up or never sent) messages over all groups. */
    public long lost() {
        return report.lost();
    }

    /** N. */
    public long messages() {
        return report.messages();
    }

    @Override
    public String toString() {
        StringBuilder sb =
                new StringBuilder("TransferReport{job=")
                        .append(Integer.toUnsignedString(jobId()))
                        .append(", status=")
                        .append(status())
                        .append(", N=")
                        .append(messages())
                        .append(", delivered=")
                        .append(delivered())
                        .append(", lost=")
                        .append(lost())
                        .append(", groups=[");
        for (int i = 0; i < report.groups().size(); i++) {
            GroupReport g = report.groups().get(i);
            sb.append(i == 0 ? "" : ", ")
                    .append(g.groupId())
                    .append(':')
                    .append(g.delivered())
                    .append('/')
                    .append(g.size());
        }
        return sb.append("]}").toString();
    }
}
