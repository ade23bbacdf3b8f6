package io.netapprox.core.control;

import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobSpec;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * JOB_ANNOUNCE: a job the sender is about to transmit over the data plane: its {@link JobSpec}
 * under the announced job id, and whether it was announced as a global-MSR job (one group without a
 * GroupID that carries the job's MSR). {@code descriptor} is opaque to the control plane: the
 * integration defines it (e.g. a Spark shuffle id and partition range). Instances are immutable;
 * the descriptor is copied in and out.
 */
public final class JobAnnouncement {
    private final JobSpec spec;
    private final boolean globalMsr;
    private final byte[] descriptor;
    private final boolean pushed;

    /** Job ids of pushed jobs have this bit set (the pushing side allocates them). */
    public static final int PUSHED_JOB_ID_BIT = 0x8000_0000;

    private JobAnnouncement(JobSpec spec, boolean globalMsr, byte[] descriptor) {
        this(spec, globalMsr, descriptor, false);
    }

    private JobAnnouncement(JobSpec spec, boolean globalMsr, byte[] descriptor, boolean pushed) {
        if (globalMsr && !spec.isGlobal()) {
            throw new IllegalArgumentException("a global-MSR job has exactly one group, with id 0");
        }
        this.spec = spec;
        this.globalMsr = globalMsr;
        this.descriptor = descriptor == null ? new byte[0] : descriptor.clone();
        if (pushed && (spec.jobId() & PUSHED_JOB_ID_BIT) == 0) {
            throw new IllegalArgumentException(
                    "a pushed job's id has bit 31 set, got "
                            + Integer.toUnsignedString(spec.jobId()));
        }
        this.pushed = pushed;
    }

    /**
     * This announcement as a <em>pushed</em> job (flag PUSHED, protocol version 3): the sender
     * offers it without a DATA_REQUEST; {@link #descriptor()} says what the data is. The receiver
     * accepts it within its push budget or rejects it, and the sender then keeps the data for a
     * pull. The job id must have {@link #PUSHED_JOB_ID_BIT} set (requested jobs never do), so the
     * two id spaces of a session never collide.
     */
    public JobAnnouncement asPushed() {
        return new JobAnnouncement(spec, globalMsr, descriptor, true);
    }

    /** True when the sender pushes this job (no DATA_REQUEST preceded it). */
    public boolean pushed() {
        return pushed;
    }

    /**
     * The announcement of {@code spec} as job {@code jobId} (unsigned 32-bit, the engine's job id).
     * A spec of exactly one group with id 0 (what {@link JobSpec#of} builds) is announced as a
     * global-MSR job.
     */
    public static JobAnnouncement of(int jobId, JobSpec spec, byte[] descriptor) {
        Objects.requireNonNull(spec, "spec");
        return new JobAnnouncement(spec.withJobId(jobId), spec.isGlobal(), descriptor);
    }

    /** A job with per-group MSRs. */
    public static JobAnnouncement ofGroups(
            int jobId, List<GroupSpec> groups, boolean mrdf, byte[] descriptor) {
        if (groups == null || groups.isEmpty()) {
            throw new IllegalArgumentException(
                    "job " + Integer.toUnsignedString(jobId) + ": at least one group");
        }
        JobSpec spec = JobSpec.builder().jobId(jobId).mrdf(mrdf).addGroups(groups).build();
        return new JobAnnouncement(spec, false, descriptor);
    }

    /** A job without GroupIDs: one global group of {@code messages} messages with the job's MSR. */
    public static JobAnnouncement global(
            int jobId, int messages, double msr, boolean mrdf, byte[] descriptor) {
        JobSpec spec =
                JobSpec.builder().jobId(jobId).mrdf(mrdf).addGroup(0L, messages, msr).build();
        return new JobAnnouncement(spec, true, descriptor);
    }

    public int jobId() {
        return spec.jobId();
    }

    /** The job as the engine runs it, with {@link JobSpec#jobId()} set to {@link #jobId()}. */
    public JobSpec spec() {
        return spec;
    }

    public List<GroupSpec> groups() {
        return spec.groups();
    }

    /** True for a job announced with one global MSR (no GroupIDs). */
    public boolean isGlobalMsr() {
        return globalMsr;
    }

    /** Whether the sender may reorder messages minimal-remaining-data-first. */
    public boolean mrdf() {
        return spec.mrdf();
    }

    /** N: the sum of the groups' sizes. */
    public long totalMessages() {
        return spec.totalMessages();
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
        return o instanceof JobAnnouncement other
                && globalMsr == other.globalMsr
                && pushed == other.pushed
                && spec.equals(other.spec)
                && Arrays.equals(descriptor, other.descriptor);
    }

    @Override
    public int hashCode() {
        return 31 * spec.hashCode() + Arrays.hashCode(descriptor);
    }

    @Override
    public String toString() {
        return "JobAnnouncement{job="
                + Integer.toUnsignedString(jobId())
                + ", groups="
                + groups().size()
                + ", N="
                + totalMessages()
                + (globalMsr ? ", global" : "")
                + (mrdf() ? ", mrdf" : "")
                + (pushed ? ", pushed" : "")
                + ", descriptor="
                + descriptor.length
                + "B}";
    }
}
