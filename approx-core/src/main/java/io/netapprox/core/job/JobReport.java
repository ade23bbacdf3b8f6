package io.netapprox.core.job;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The final report of a job (immutable). The engine makes one on each side: the sender's ({@code
 * OutgoingJob.outcome()}: packets, retransmissions, time per priority class, targets after MSR
 * updates) and the receiver's ({@code IncomingJobListener.onJobDone}: authoritative, lists the
 * delivered and lost ids per group). The receiver sends {@link #forPeer()} of its report to the
 * sender over the control plane (JOB_REPORT), so both sides of a transfer hold the same outcome.
 */
public final class JobReport {
    /** Priority classes of slack-based priority (class 0 = exact traffic). */
    public static final int PRIORITY_CLASSES = 8;

    private final long sessionId;
    private final int jobId;
    private final boolean sender;
    private final AtpStatus status;
    private final int messages;
    private final int delivered;
    private final int lost;
    private final double measuredLoss;
    private final long packetsSent;
    private final long packetsRetransmitted;
    private final long bytesSent;
    private final long epochs;
    private final long startedNanos;
    private final long finishedNanos;
    private final long jctNanos;
    private final long[] timeInClassNanos;
    private final ControlPathReport controlPath;
    private final List<GroupReport> groups;

    private JobReport(Builder b) {
        if (b.status == null) {
            throw new IllegalArgumentException(
                    "job " + Integer.toUnsignedString(b.jobId) + ": status is required");
        }
        if (b.messages < 0 || b.delivered < 0 || b.lost < 0) {
            throw new IllegalArgumentException("message counts must be >= 0");
        }
        if (!(b.measuredLoss >= 0.0 && b.measuredLoss <= 1.0)) {
            throw new IllegalArgumentException(
                    "measuredLoss must be in [0, 1], got " + b.measuredLoss);
        }
        if (b.jctNanos < 0
                || b.packetsRetransmitted < 0
                || b.packetsSent < 0
                || b.bytesSent < 0
                || b.epochs < 0) {
            throw new IllegalArgumentException(
                    "jctNanos and the packet, byte and epoch counts must be >= 0");
        }
        if (b.timeInClassNanos.length > PRIORITY_CLASSES) {
            throw new IllegalArgumentException(
                    "at most "
                            + PRIORITY_CLASSES
                            + " priority classes, got "
                            + b.timeInClassNanos.length);
        }
        for (long t : b.timeInClassNanos) {
            if (t < 0) {
                throw new IllegalArgumentException("priority class times must be >= 0");
            }
        }
        this.sessionId = b.sessionId;
        this.jobId = b.jobId;
        this.sender = b.sender;
        this.status = b.status;
        this.messages = b.messages;
        this.delivered = b.delivered;
        this.lost = b.lost;
        this.measuredLoss = b.measuredLoss;
        this.packetsSent = b.packetsSent;
        this.packetsRetransmitted = b.packetsRetransmitted;
        this.bytesSent = b.bytesSent;
        this.epochs = b.epochs;
        this.startedNanos = b.startedNanos;
        this.finishedNanos = b.finishedNanos;
        this.jctNanos = b.jctNanos;
        this.timeInClassNanos = Arrays.copyOf(b.timeInClassNanos, PRIORITY_CLASSES);
        this.controlPath =
                new ControlPathReport(
                        b.announcesSent,
                        b.updatesSent,
                        b.donesSent,
                        b.startToRunningNanos,
                        b.lastDataToDoneNanos,
                        b.announceProbes,
                        b.acksWhileStarting,
                        b.announcesReceived,
                        b.announcesDuplicate,
                        b.announcesAcked,
                        b.earlyDataPackets);
        this.groups = List.copyOf(b.groups);
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The part of a receiver's report that JOB_REPORT carries to the sender: the job id, status,
     * JCT, retransmissions, measured loss, time per priority class and, per group, N_g with the
     * delivered and lost ids ({@link GroupReport#ofIds}; no targets). The job's message counts are
     * the groups' sums; the rest (session id, packets and bytes sent, epochs, start and finish
     * times) is 0.
     *
     * @throws IllegalArgumentException for a sender's report, or a receiver's that does not list
     *     its ids (the groups were never announced completely)
     */
    public JobReport forPeer() {
        if (sender) {
            throw new IllegalArgumentException(
                    "job "
                            + Integer.toUnsignedString(jobId)
                            + ": only the receiver's report lists delivered /"
                            + " lost message ids; the sender's report cannot be sent as JOB_REPORT");
        }
        List<GroupReport> gs = new ArrayList<>(groups.size());
        for (GroupReport g : groups) {
            if (!g.listsIds()) {
                throw new IllegalArgumentException(
                        "job "
                                + Integer.toUnsignedString(jobId)
                                + ", group "
                                + g.groupId()
                                + " reports "
                                + g.delivered()
                                + " delivered and "
                                + g.lost()
                                + " lost messages but lists "
                                + g.deliveredIds().cardinality()
                                + " and "
                                + g.lostIds().cardinality()
                                + " ids");
            }
            gs.add(GroupReport.ofIds(g.groupId(), g.size(), g.deliveredIds(), g.lostIds()));
        }
        return outcome(
                jobId, status, jctNanos, packetsRetransmitted, measuredLoss, timeInClassNanos, gs);
    }

    /**
     * A receiver's report as JOB_REPORT carries it (what {@link #forPeer()} keeps): the job's
     * counts are the sums over {@code groups}, everything else 0.
     */
    public static JobReport outcome(
            int jobId,
            AtpStatus status,
            long jctNanos,
            long retransmissions,
            double measuredLoss,
            long[] timeInClassNanos,
            List<GroupReport> groups) {
        long n = 0;
        long d = 0;
        long l = 0;
        for (GroupReport g : groups) {
            n += g.size();
            d += g.delivered();
            l += g.lost();
        }
        if (n > JobSpec.MAX_MESSAGES) {
            throw new IllegalArgumentException("a job has at most 2^31-1 messages, got " + n);
        }
        return builder()
                .jobId(jobId)
                .sender(false)
                .status(status)
                .messages((int) n)
                .delivered((int) d)
                .lost((int) l)
                .measuredLoss(measuredLoss)
                .packetsRetransmitted(retransmissions)
                .jctNanos(jctNanos)
                .timeInClassNanos(timeInClassNanos)
                .groups(groups)
                .build();
    }

    /** The engine's data-plane session (0 in a report that crossed the control plane). */
    public long sessionId() {
        return sessionId;
    }

    /** The job (unsigned 32-bit). */
    public int jobId() {
        return jobId;
    }

    /** True for the sender's report, false for the receiver's. */
    public boolean isSender() {
        return sender;
    }

    /**
     * {@link AtpStatus#OK} or what ended the job (PEER_DEAD, IDLE_TIMEOUT, CLOSED on cancel/close,
     * ...).
     */
    public AtpStatus status() {
        return status;
    }

    public boolean isSuccess() {
        return status == AtpStatus.OK;
    }

    /** N. */
    public int messages() {
        return messages;
    }

    public int delivered() {
        return delivered;
    }

    public int lost() {
        return lost;
    }

    /** Sender: 1 - acked/sent packets over the job; receiver: lost/N messages. */
    public double measuredLoss() {
        return measuredLoss;
    }

    public long packetsSent() {
        return packetsSent;
    }

    public long packetsRetransmitted() {
        return packetsRetransmitted;
    }

    public long bytesSent() {
        return bytesSent;
    }

    public long epochs() {
        return epochs;
    }

    /** Engine clock (CLOCK_MONOTONIC) at start. */
    public long startedNanos() {
        return startedNanos;
    }

    public long finishedNanos() {
        return finishedNanos;
    }

    public long jctNanos() {
        return jctNanos;
    }

    /** Job completion time. */
    public Duration jct() {
        return Duration.ofNanos(jctNanos);
    }

    /** Sender: time spent marked with priority class k (0 = exact). */
    public Duration timeInClass(int k) {
        return Duration.ofNanos(timeInClassNanos[k]);
    }

    /** Time per priority class, {@value #PRIORITY_CLASSES} entries (a copy). */
    public long[] timeInClassNanos() {
        return timeInClassNanos.clone();
    }

    /**
     * Control-path counters (why a job waited to start or end); {@link ControlPathReport#NONE} in a
     * report that crossed the control plane.
     */
    public ControlPathReport controlPath() {
        return controlPath;
    }

    /** Per group, in the job's group order. */
    public List<GroupReport> groups() {
        return groups;
    }

    /** True when every group's target is reported and was reached. */
    public boolean allTargetsReached() {
        for (GroupReport g : groups) {
            if (!g.reachedTarget()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JobReport r
                && r.sessionId == sessionId
                && r.jobId == jobId
                && r.sender == sender
                && r.status == status
                && r.messages == messages
                && r.delivered == delivered
                && r.lost == lost
                && Double.compare(r.measuredLoss, measuredLoss) == 0
                && r.packetsSent == packetsSent
                && r.packetsRetransmitted == packetsRetransmitted
                && r.bytesSent == bytesSent
                && r.epochs == epochs
                && r.startedNanos == startedNanos
                && r.finishedNanos == finishedNanos
                && r.jctNanos == jctNanos
                && Arrays.equals(r.timeInClassNanos, timeInClassNanos)
                && r.controlPath.equals(controlPath)
                && r.groups.equals(groups);
    }

    @Override
    public int hashCode() {
        return Objects.hash(sessionId, jobId, sender, status, messages, delivered, groups);
    }

    @Override
    public String toString() {
        return "JobReport{session="
                + Long.toUnsignedString(sessionId)
                + ", job="
                + Integer.toUnsignedString(jobId)
                + ", "
                + (sender ? "sender" : "receiver")
                + ", status="
                + status
                + ", N="
                + messages
                + ", delivered="
                + delivered
                + ", lost="
                + lost
                + ", measuredLoss="
                + String.format("%.4f", measuredLoss)
                + ", packets="
                + packetsSent
                + ", retx="
                + packetsRetransmitted
                + ", jct="
                + jct().toMillis()
                + "ms, groups="
                + groups
                + "}";
    }

    /** Builds a {@link JobReport}; unset numbers are 0, the status is required. */
    public static final class Builder {
        private long sessionId;
        private int jobId;
        private boolean sender;
        private AtpStatus status;
        private int messages;
        private int delivered;
        private int lost;
        private double measuredLoss;
        private long packetsSent;
        private long packetsRetransmitted;
        private long bytesSent;
        private long epochs;
        private long startedNanos;
        private long finishedNanos;
        private long jctNanos;
        private long[] timeInClassNanos = new long[PRIORITY_CLASSES];
        private int announcesSent;
        private int updatesSent;
        private int donesSent;
        private long startToRunningNanos;
        private long lastDataToDoneNanos;
        private int announceProbes;
        private int acksWhileStarting;
        private int announcesReceived;
        private int announcesDuplicate;
        private int announcesAcked;
        private long earlyDataPackets;
        private List<GroupReport> groups = List.of();

        private Builder() {}

        /** The control-path counters at once (see {@link ControlPathReport}). */
        public Builder controlPath(ControlPathReport c) {
            announcesSent = c.announcesSent();
            updatesSent = c.updatesSent();
            donesSent = c.donesSent();
            startToRunningNanos = c.startToRunningNanos();
            lastDataToDoneNanos = c.lastDataToDoneNanos();
            announceProbes = c.announceProbes();
            acksWhileStarting = c.acksWhileStarting();
            announcesReceived = c.announcesReceived();
            announcesDuplicate = c.announcesDuplicate();
            announcesAcked = c.announcesAcked();
            earlyDataPackets = c.earlyDataPackets();
            return this;
        }

        public Builder announcesSent(int v) {
            announcesSent = v;
            return this;
        }

        public Builder updatesSent(int v) {
            updatesSent = v;
            return this;
        }

        public Builder donesSent(int v) {
            donesSent = v;
            return this;
        }

        public Builder startToRunningNanos(long v) {
            startToRunningNanos = v;
            return this;
        }

        public Builder lastDataToDoneNanos(long v) {
            lastDataToDoneNanos = v;
            return this;
        }

        public Builder announceProbes(int v) {
            announceProbes = v;
            return this;
        }

        public Builder acksWhileStarting(int v) {
            acksWhileStarting = v;
            return this;
        }

        public Builder announcesReceived(int v) {
            announcesReceived = v;
            return this;
        }

        public Builder announcesDuplicate(int v) {
            announcesDuplicate = v;
            return this;
        }

        public Builder announcesAcked(int v) {
            announcesAcked = v;
            return this;
        }

        public Builder earlyDataPackets(long v) {
            earlyDataPackets = v;
            return this;
        }

        public Builder sessionId(long v) {
            sessionId = v;
            return this;
        }

        public Builder jobId(int v) {
            jobId = v;
            return this;
        }

        public Builder sender(boolean v) {
            sender = v;
            return this;
        }

        public Builder status(AtpStatus v) {
            status = v;
            return this;
        }

        public Builder messages(int v) {
            messages = v;
            return this;
        }

        public Builder delivered(int v) {
            delivered = v;
            return this;
        }

        public Builder lost(int v) {
            lost = v;
            return this;
        }

        public Builder measuredLoss(double v) {
            measuredLoss = v;
            return this;
        }

        public Builder packetsSent(long v) {
            packetsSent = v;
            return this;
        }

        public Builder packetsRetransmitted(long v) {
            packetsRetransmitted = v;
            return this;
        }

        public Builder bytesSent(long v) {
            bytesSent = v;
            return this;
        }

        public Builder epochs(long v) {
            epochs = v;
            return this;
        }

        public Builder startedNanos(long v) {
            startedNanos = v;
            return this;
        }

        public Builder finishedNanos(long v) {
            finishedNanos = v;
            return this;
        }

        public Builder jctNanos(long v) {
            jctNanos = v;
            return this;
        }

        /**
         * At most {@value JobReport#PRIORITY_CLASSES} entries (copied, padded with zeros); null
         * means all zero.
         */
        public Builder timeInClassNanos(long[] v) {
            timeInClassNanos = v == null ? new long[0] : v.clone();
            return this;
        }

        /**
         * The time spent in priority class {@code k} (0 .. {@value JobReport#PRIORITY_CLASSES} -
         * 1).
         */
        public Builder timeInClassNanos(int k, long v) {
            if (k < 0 || k >= PRIORITY_CLASSES) {
                throw new IllegalArgumentException(
                        "priority class " + k + " outside [0, " + PRIORITY_CLASSES + ")");
            }
            if (timeInClassNanos.length < PRIORITY_CLASSES) {
                timeInClassNanos = Arrays.copyOf(timeInClassNanos, PRIORITY_CLASSES);
            }
            timeInClassNanos[k] = v;
            return this;
        }

        public Builder groups(List<GroupReport> v) {
            groups = Objects.requireNonNull(v, "groups");
            return this;
        }

        /**
         * @throws IllegalArgumentException for a missing status or out-of-range values
         */
        public JobReport build() {
            return new JobReport(this);
        }
    }
}
