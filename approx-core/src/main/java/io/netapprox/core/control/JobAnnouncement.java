package io.netapprox.core.control;

import java.util.Arrays;
import java.util.List;

/**
 * JOB_ANNOUNCE: a job the sender is about to transmit over the data plane.
 *
 * <p>Either a list of groups (each with N_g and MSR_g), or - {@link #global} - one group without a GroupID that
 * carries the job's MSR. {@code descriptor} is opaque to the control plane: the integration defines it (e.g. a
 * Spark shuffle id and partition range). Instances are immutable; the descriptor is copied in and out.
 */
public final class JobAnnouncement {
    private final int jobId;
    private final List<GroupSpec> groups;
    private final boolean globalMsr;
    private final boolean mrdf;
    private final byte[] descriptor;

    private JobAnnouncement(int jobId, List<GroupSpec> groups, boolean globalMsr, boolean mrdf, byte[] descriptor) {
        if (groups == null || groups.isEmpty()) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId) + ": at least one group");
        }
        if (globalMsr && groups.size() != 1) {
            throw new IllegalArgumentException("a global-MSR job has exactly one group");
        }
        long total = 0;
        for (GroupSpec g : groups) {
            if (g == null) {
                throw new IllegalArgumentException("null group");
            }
            total += g.messages();
        }
        if (total > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("job " + Integer.toUnsignedString(jobId)
                    + ": total messages " + total + " exceed 2^32-1");
        }
        this.jobId = jobId;
        this.groups = List.copyOf(groups);
        this.globalMsr = globalMsr;
        this.mrdf = mrdf;
        this.descriptor = descriptor == null ? new byte[0] : descriptor.clone();
    }

    /** A job with per-group MSRs. {@code jobId} is an unsigned 32-bit id (the engine's job id). */
    public static JobAnnouncement ofGroups(int jobId, List<GroupSpec> groups, boolean mrdf, byte[] descriptor) {
        return new JobAnnouncement(jobId, groups, false, mrdf, descriptor);
    }

    /** A job without GroupIDs: one global group of {@code messages} messages with the job's MSR. */
    public static JobAnnouncement global(int jobId, int messages, double msr, boolean mrdf, byte[] descriptor) {
        return new JobAnnouncement(jobId, List.of(new GroupSpec(0L, messages, msr)), true, mrdf, descriptor);
    }

    public int jobId() {
        return jobId;
    }

    public List<GroupSpec> groups() {
        return groups;
    }

    /** True for a job announced with one global MSR (no GroupIDs). */
    public boolean isGlobalMsr() {
        return globalMsr;
    }

    /** Whether the sender may reorder messages minimal-remaining-data-first. */
    public boolean mrdf() {
        return mrdf;
    }

    /** N: the sum of the groups' sizes. */
    public long totalMessages() {
        long n = 0;
        for (GroupSpec g : groups) {
            n += g.messages();
        }
        return n;
    }

    /** A copy of the integration-defined descriptor. */
    public byte[] descriptor() {
        return descriptor.clone();
    }

    int descriptorLength() {
        return descriptor.length;
    }

    byte[] descriptorUnsafe() {
        return descriptor;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof JobAnnouncement other)) {
            return false;
        }
        return jobId == other.jobId && globalMsr == other.globalMsr && mrdf == other.mrdf
                && groups.equals(other.groups) && Arrays.equals(descriptor, other.descriptor);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * jobId + groups.hashCode()) + Arrays.hashCode(descriptor);
    }

    @Override
    public String toString() {
        return "JobAnnouncement{job=" + Integer.toUnsignedString(jobId) + ", groups=" + groups.size()
                + ", N=" + totalMessages() + (globalMsr ? ", global" : "") + (mrdf ? ", mrdf" : "")
                + ", descriptor=" + descriptor.length + "B}";
    }
}
