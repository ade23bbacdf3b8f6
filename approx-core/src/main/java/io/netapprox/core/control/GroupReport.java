package io.netapprox.core.control;

/**
 * The final report of one group of a job.
 *
 * @param groupId   the application's GroupID
 * @param messages  N_g
 * @param delivered the delivered message ids (job-wide ids, compact)
 * @param lost      the lost message ids (every message of the group not delivered)
 */
public record GroupReport(long groupId, int messages, IdSet delivered, IdSet lost) {
    public GroupReport {
        if (messages < 0) {
            throw new IllegalArgumentException("group " + groupId + ": messages must be >= 0, got " + messages);
        }
        if (delivered == null || lost == null) {
            throw new IllegalArgumentException("group " + groupId + ": delivered and lost id sets are required");
        }
        if (delivered.cardinality() + lost.cardinality() > messages) {
            throw new IllegalArgumentException("group " + groupId + ": delivered (" + delivered.cardinality()
                    + ") + lost (" + lost.cardinality() + ") exceed the group's " + messages + " messages");
        }
    }

    public long deliveredCount() {
        return delivered.cardinality();
    }

    public long lostCount() {
        return lost.cardinality();
    }
}
