package io.netapprox.core.control;

import java.util.List;

/**
 * MSR_UPDATE: new minimal sampling rates for some groups of a running job.
 *
 * @param jobId   the job (unsigned 32-bit)
 * @param changes the new MSRs, by group index (the position of the group in the job's announcement)
 */
public record MsrUpdate(int jobId, List<Change> changes) {
    /** One group's new MSR. */
    public record Change(int groupIndex, double msr) {
        public Change {
            if (groupIndex < 0) {
                throw new IllegalArgumentException("group index must be >= 0, got " + groupIndex);
            }
            GroupSpec.checkMsr(msr, "group index " + groupIndex);
        }
    }

    public MsrUpdate {
        if (changes == null || changes.isEmpty()) {
            throw new IllegalArgumentException("an MSR update changes at least one group");
        }
        changes = List.copyOf(changes);
    }

    /** An update of one group. */
    public static MsrUpdate of(int jobId, int groupIndex, double msr) {
        return new MsrUpdate(jobId, List.of(new Change(groupIndex, msr)));
    }
}
