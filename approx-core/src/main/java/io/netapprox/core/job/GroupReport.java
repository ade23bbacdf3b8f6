package io.netapprox.core.job;

import java.util.Objects;

/**
 * The outcome of one group of a job (immutable). Message ids are job-wide ids (group g owns {@code
 * [base_g, base_g + N_g)}).
 *
 * <p>What a report holds depends on who made it: the receiver's engine lists the delivered and lost
 * ids; the sender's engine lists none (empty sets) but knows whether a raised MSR made the target
 * unreachable; a report the sender received over the control plane (JOB_REPORT, see {@link
 * JobReport#forPeer()}) lists the ids but carries no target ({@link #TARGET_NOT_REPORTED}).
 */
public final class GroupReport {
    /**
     * {@link #target()} of a report that crossed the control plane (JOB_REPORT does not carry
     * targets).
     */
    public static final int TARGET_NOT_REPORTED = -1;

    private final long groupId;
    private final int size;
    private final int target;
    private final boolean targetUnreachable;
    private final int delivered;
    private final int lost;
    private final IdSet deliveredIds;
    private final IdSet lostIds;

    /**
     * @param groupId the application's GroupID
     * @param size N_g, {@code >= 1}
     * @param target {@code ceil(MSR_g * N_g)} (after MSR updates, possibly clamped), in {@code [0,
     *     size]}, or {@link #TARGET_NOT_REPORTED}
     * @param targetUnreachable an MSR raised mid-job asked for more than the remaining messages
     *     could give
     * @param delivered delivered messages, {@code >= 0}
     * @param lost messages given up by the sender or never sent because the group had met its
     *     target
     * @param deliveredIds the delivered ids: empty (not listed) or exactly {@code delivered} of
     *     them
     * @param lostIds the lost ids: empty (not listed) or exactly {@code lost} of them
     * @throws IllegalArgumentException for values outside these ranges, or {@code delivered + lost
     *     > size}
     */
    public GroupReport(
            long groupId,
            int size,
            int target,
            boolean targetUnreachable,
            int delivered,
            int lost,
            IdSet deliveredIds,
            IdSet lostIds) {
        String g = "group " + groupId + ": ";
        if (size < 1) {
            throw new IllegalArgumentException(g + "size (N_g) must be >= 1, got " + size);
        }
        if (target < TARGET_NOT_REPORTED || target > size) {
            throw new IllegalArgumentException(
                    g + "target " + target + " outside [0, " + size + "]");
        }
        if (delivered < 0 || lost < 0 || (long) delivered + lost > size) {
            throw new IllegalArgumentException(
                    g
                            + "delivered ("
                            + delivered
                            + ") + lost ("
                            + lost
                            + ") exceed the group's "
                            + size
                            + " messages");
        }
        Objects.requireNonNull(deliveredIds, "deliveredIds");
        Objects.requireNonNull(lostIds, "lostIds");
        if (!deliveredIds.isEmpty() && deliveredIds.cardinality() != delivered) {
            throw new IllegalArgumentException(
                    g
                            + deliveredIds.cardinality()
                            + " delivered ids listed for "
                            + delivered
                            + " delivered");
        }
        if (!lostIds.isEmpty() && lostIds.cardinality() != lost) {
            throw new IllegalArgumentException(
                    g + lostIds.cardinality() + " lost ids listed for " + lost + " lost");
        }
        this.groupId = groupId;
        this.size = size;
        this.target = target;
        this.targetUnreachable = targetUnreachable;
        this.delivered = delivered;
        this.lost = lost;
        this.deliveredIds = deliveredIds;
        this.lostIds = lostIds;
    }

    /**
     * A group as JOB_REPORT carries it: N_g and the delivered and lost ids (counts are their
     * sizes).
     */
    public static GroupReport ofIds(long groupId, int size, IdSet deliveredIds, IdSet lostIds) {
        return new GroupReport(
                groupId,
                size,
                TARGET_NOT_REPORTED,
                false,
                (int) deliveredIds.cardinality(),
                (int) lostIds.cardinality(),
                deliveredIds,
                lostIds);
    }

    public long groupId() {
        return groupId;
    }

    /** N_g. */
    public int size() {
        return size;
    }

    /**
     * {@code ceil(MSR_g * N_g)} as the reporting engine knew it (after MSR updates; clamped when
     * {@link #targetUnreachable()}), or {@link #TARGET_NOT_REPORTED}.
     */
    public int target() {
        return target;
    }

    public boolean hasTarget() {
        return target != TARGET_NOT_REPORTED;
    }

    public boolean targetUnreachable() {
        return targetUnreachable;
    }

    public int delivered() {
        return delivered;
    }

    /** Given up by the sender, or never sent because the group had already met its target. */
    public int lost() {
        return lost;
    }

    /** True when the target is reported and at least that many messages were delivered. */
    public boolean reachedTarget() {
        return hasTarget() && delivered >= target;
    }

    /** The delivered message ids (empty when not listed: sender reports). */
    public IdSet deliveredIds() {
        return deliveredIds;
    }

    /** The lost message ids (empty when not listed: sender reports). */
    public IdSet lostIds() {
        return lostIds;
    }

    /** True when the delivered and lost ids are listed (receiver reports). */
    public boolean listsIds() {
        return deliveredIds.cardinality() == delivered && lostIds.cardinality() == lost;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GroupReport g
                && groupId == g.groupId
                && size == g.size
                && target == g.target
                && targetUnreachable == g.targetUnreachable
                && delivered == g.delivered
                && lost == g.lost
                && deliveredIds.equals(g.deliveredIds)
                && lostIds.equals(g.lostIds);
    }

    @Override
    public int hashCode() {
        return Objects.hash(groupId, size, target, delivered, lost);
    }

    @Override
    public String toString() {
        return "GroupReport{id="
                + groupId
                + ", size="
                + size
                + (hasTarget() ? ", target=" + target : "")
                + ", delivered="
                + delivered
                + ", lost="
                + lost
                + (targetUnreachable ? ", UNREACHABLE" : "")
                + "}";
    }
}
