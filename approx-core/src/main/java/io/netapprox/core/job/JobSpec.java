package io.netapprox.core.job;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a job is: its groups (message ids are assigned in group order: group 0 owns [0, N_0), group
 * 1 the next N_1 ids, ...), an optional explicit job id, and whether MRDF scheduling may reorder
 * messages (exact groups are always in order), and an optional deadline (the streaming-epoch
 * sending policy, {@link Builder#deadline(Duration)}). The engine starts it ({@code
 * AtpSession.startJob}), the control plane announces it ({@code JobAnnouncement}; the deadline is
 * the sender's alone and is not announced).
 */
public final class JobSpec {
    /** N, the messages of one job, is at most this (message ids are non-negative ints). */
    public static final long MAX_MESSAGES = Integer.MAX_VALUE;

    private final List<GroupSpec> groups;
    private final Integer jobId;
    private final boolean mrdf;
    private final long deadlineNanos;

    private JobSpec(List<GroupSpec> groups, Integer jobId, boolean mrdf, long deadlineNanos) {
        this.groups = groups;
        this.jobId = jobId;
        this.mrdf = mrdf;
        this.deadlineNanos = deadlineNanos;
    }

    /** One global group (id 0) of {@code messages} messages with the job's MSR. */
    public static JobSpec of(int messages, double msr) {
        return builder().addGroup(0, messages, msr).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public List<GroupSpec> groups() {
        return groups;
    }

    /** The explicit job id, or null to let the session allocate one. */
    public Integer jobId() {
        return jobId;
    }

    public boolean mrdf() {
        return mrdf;
    }

    /**
     * The deadline in nanoseconds from the job's start, 0 for none ({@link
     * Builder#deadline(Duration)}).
     */
    public long deadlineNanos() {
        return deadlineNanos;
    }

    /** N: the sum of the groups' sizes. */
    public long totalMessages() {
        long n = 0;
        for (GroupSpec g : groups) {
            n += g.size();
        }
        return n;
    }

    /** True for a job of one group with id 0: a job without GroupIDs, with one global MSR. */
    public boolean isGlobal() {
        return groups.size() == 1 && groups.get(0).groupId() == 0L;
    }

    /** This spec with job id {@code id} (groups and MRDF unchanged). */
    public JobSpec withJobId(int id) {
        return new JobSpec(groups, id, mrdf, deadlineNanos);
    }

    /**
     * This spec with the MSRs of some groups replaced, by group index (the position in {@link
     * #groups()}).
     *
     * @throws IllegalArgumentException for an index out of range or an MSR outside [0, 1]
     */
    public JobSpec withMsrs(Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        List<GroupSpec> out = new ArrayList<>(groups);
        for (Map.Entry<Integer, Double> e : msrByGroupIndex.entrySet()) {
            int i = Objects.requireNonNull(e.getKey(), "group index");
            if (i < 0 || i >= groups.size()) {
                throw new IllegalArgumentException(
                        "group index " + i + " out of range [0, " + groups.size() + ")");
            }
            GroupSpec g = groups.get(i);
            out.set(
                    i,
                    GroupSpec.of(
                            g.groupId(), g.size(), Objects.requireNonNull(e.getValue(), "msr")));
        }
        return new JobSpec(Collections.unmodifiableList(out), jobId, mrdf, deadlineNanos);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JobSpec s
                && groups.equals(s.groups)
                && Objects.equals(jobId, s.jobId)
                && mrdf == s.mrdf
                && deadlineNanos == s.deadlineNanos;
    }

    @Override
    public int hashCode() {
        return Objects.hash(groups, jobId, mrdf, deadlineNanos);
    }

    @Override
    public String toString() {
        return "JobSpec{jobId="
                + jobId
                + ", mrdf="
                + mrdf
                + (deadlineNanos > 0 ? ", deadline=" + Duration.ofNanos(deadlineNanos) : "")
                + ", groups="
                + groups
                + "}";
    }

    public static final class Builder {
        private final List<GroupSpec> groups = new ArrayList<>();
        private Integer jobId;
        private boolean mrdf = true;
        private long deadlineNanos;

        private Builder() {}

        public Builder addGroup(GroupSpec g) {
            groups.add(Objects.requireNonNull(g, "group"));
            return this;
        }

        public Builder addGroup(long groupId, int size, double msr) {
            return addGroup(GroupSpec.of(groupId, size, msr));
        }

        public Builder addGroups(List<GroupSpec> gs) {
            for (GroupSpec g : gs) {
                addGroup(g);
            }
            return this;
        }

        /**
         * An explicit job id (unique among this side's live jobs on the session); by default the
         * session picks.
         */
        public Builder jobId(int id) {
            jobId = id;
            return this;
        }

        public Builder mrdf(boolean on) {
            mrdf = on;
            return this;
        }

        /**
         * A streaming epoch's deadline (docs/protocol.md section 11, "deadlines"; zero = none, the
         * default). On ATP with slack priority the job's approximate data escalates towards class 0
         * as a group falls behind delivering its target evenly over the deadline - a group that
         * delivered nothing is in class 0 after 7/8 of it, however busy class 0 is - and the
         * messages beyond a group's planned sample (the first {@code target} of its send order,
         * plus one per message given up) go after every planned one, in the lowest class. The TCP
         * data plane ignores it.
         *
         * @throws IllegalArgumentException for a negative deadline
         */
        public Builder deadline(Duration d) {
            Objects.requireNonNull(d, "deadline");
            if (d.isNegative()) {
                throw new IllegalArgumentException("deadline must not be negative, got " + d);
            }
            deadlineNanos =
                    d.compareTo(Duration.ofNanos(Long.MAX_VALUE)) >= 0
                            ? Long.MAX_VALUE
                            : d.toNanos();
            return this;
        }

        /**
         * @throws IllegalArgumentException no group, or more than {@link #MAX_MESSAGES} messages in
         *     all
         */
        public JobSpec build() {
            if (groups.isEmpty()) {
                throw new IllegalArgumentException("a job needs at least one group");
            }
            long n = 0;
            for (GroupSpec g : groups) {
                n += g.size();
            }
            if (n > MAX_MESSAGES) {
                throw new IllegalArgumentException("a job has at most 2^31-1 messages, got " + n);
            }
            return new JobSpec(List.copyOf(groups), jobId, mrdf, deadlineNanos);
        }
    }
}
