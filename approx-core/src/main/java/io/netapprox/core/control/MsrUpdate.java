package io.netapprox.core.control;

import io.netapprox.core.job.GroupSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * MSR_UPDATE: new minimal sampling rates for some groups of a running job.
 *
 * @param jobId the job (unsigned 32-bit)
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

    /** An update of the MSRs by group index ({@code OutgoingJob.updateMsr}'s argument). */
    public static MsrUpdate of(int jobId, Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        List<Change> changes = new ArrayList<>(msrByGroupIndex.size());
        for (Map.Entry<Integer, Double> e : msrByGroupIndex.entrySet()) {
            changes.add(
                    new Change(
                            Objects.requireNonNull(e.getKey(), "group index"),
                            Objects.requireNonNull(e.getValue(), "msr")));
        }
        return new MsrUpdate(jobId, changes);
    }

    /**
     * The new MSRs by group index, in update order ({@code OutgoingJob.updateMsr}'s argument).
     *
     * @throws IllegalArgumentException if a group index appears twice
     */
    public Map<Integer, Double> byGroupIndex() {
        Map<Integer, Double> m = new LinkedHashMap<>();
        for (Change c : changes) {
            if (m.put(c.groupIndex(), c.msr()) != null) {
                throw new IllegalArgumentException(
                        "MSR update for job "
                                + Integer.toUnsignedString(jobId)
                                + " changes group index "
                                + c.groupIndex()
                                + " twice");
            }
        }
        return m;
    }
}
