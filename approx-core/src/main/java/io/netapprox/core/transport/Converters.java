package io.netapprox.core.transport;

import io.netapprox.core.control.IdSet;
import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.control.MsrUpdate;
import io.netapprox.core.engine.AtpStatus;
import io.netapprox.core.engine.JobSpec;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Explicit conversions between the engine's types ({@code io.netapprox.core.engine}: what ATP sends and reports)
 * and the control plane's wire types ({@code io.netapprox.core.control}: what crosses the TCP connection). Both
 * packages have a {@code GroupSpec}, a {@code GroupReport} and a {@code JobReport}; this class is the one place that
 * maps one onto the other, with fully qualified names so a call site never confuses them.
 *
 * <p>Message ids are the engine's job-wide ids (group g owns {@code [base_g, base_g + N_g)}) on both sides. Status
 * codes cross the wire as the C API's values ({@link AtpStatus#code()}; 0 = completed).
 */
public final class Converters {
    private Converters() {
    }

    // ---- groups and jobs --------------------------------------------------------------------------------------------

    /** engine -> control group spec (same group id, N_g and MSR_g). */
    public static io.netapprox.core.control.GroupSpec toControl(io.netapprox.core.engine.GroupSpec g) {
        Objects.requireNonNull(g, "group");
        return new io.netapprox.core.control.GroupSpec(g.groupId(), g.size(), g.msr());
    }

    /**
     * control -> engine group spec.
     *
     * @throws IllegalArgumentException for an empty group (the control plane allows {@code N_g = 0}, the engine does
     *                                  not)
     */
    public static io.netapprox.core.engine.GroupSpec toEngine(io.netapprox.core.control.GroupSpec g) {
        Objects.requireNonNull(g, "group");
        if (g.messages() <= 0) {
            throw new IllegalArgumentException("group " + g.groupId() + " has no messages (N_g = " + g.messages()
                    + "); the engine needs N_g >= 1");
        }
        return io.netapprox.core.engine.GroupSpec.of(g.groupId(), g.messages(), g.msr());
    }

    /** The control-plane groups of an engine job spec, in order. */
    public static List<io.netapprox.core.control.GroupSpec> toControlGroups(JobSpec spec) {
        Objects.requireNonNull(spec, "spec");
        List<io.netapprox.core.control.GroupSpec> out = new ArrayList<>(spec.groups().size());
        for (io.netapprox.core.engine.GroupSpec g : spec.groups()) {
            out.add(toControl(g));
        }
        return out;
    }

    /**
     * The JOB_ANNOUNCE for an engine job spec. A spec of exactly one group with id 0 (what {@link JobSpec#of} builds)
     * is announced as a global-MSR job; anything else per group.
     */
    public static JobAnnouncement toAnnouncement(int jobId, JobSpec spec, byte[] descriptor) {
        Objects.requireNonNull(spec, "spec");
        if (spec.groups().size() == 1 && spec.groups().get(0).groupId() == 0L) {
            io.netapprox.core.engine.GroupSpec g = spec.groups().get(0);
            return JobAnnouncement.global(jobId, g.size(), g.msr(), spec.mrdf(), descriptor);
        }
        return JobAnnouncement.ofGroups(jobId, toControlGroups(spec), spec.mrdf(), descriptor);
    }

    /** The engine job spec of an announcement, with the announced job id. */
    public static JobSpec toJobSpec(JobAnnouncement a) {
        Objects.requireNonNull(a, "announcement");
        JobSpec.Builder b = JobSpec.builder().jobId(a.jobId()).mrdf(a.mrdf());
        for (io.netapprox.core.control.GroupSpec g : a.groups()) {
            b.addGroup(toEngine(g));
        }
        return b.build();
    }

    /** {@code spec} with its job id set to {@code jobId} (groups and MRDF unchanged) and MSRs overridden by index. */
    public static JobSpec withJobId(JobSpec spec, int jobId, Map<Integer, Double> msrOverrides) {
        Objects.requireNonNull(spec, "spec");
        JobSpec.Builder b = JobSpec.builder().jobId(jobId).mrdf(spec.mrdf());
        List<io.netapprox.core.engine.GroupSpec> groups = spec.groups();
        for (int i = 0; i < groups.size(); i++) {
            io.netapprox.core.engine.GroupSpec g = groups.get(i);
            Double msr = msrOverrides == null ? null : msrOverrides.get(i);
            b.addGroup(msr == null ? g : io.netapprox.core.engine.GroupSpec.of(g.groupId(), g.size(), msr));
        }
        return b.build();
    }

    // ---- MSR updates ------------------------------------------------------------------------------------------------

    /** The MSR_UPDATE for new MSRs by group index. */
    public static MsrUpdate toMsrUpdate(int jobId, Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        List<MsrUpdate.Change> changes = new ArrayList<>(msrByGroupIndex.size());
        for (Map.Entry<Integer, Double> e : msrByGroupIndex.entrySet()) {
            changes.add(new MsrUpdate.Change(Objects.requireNonNull(e.getKey(), "group index"),
                    Objects.requireNonNull(e.getValue(), "msr")));
        }
        return new MsrUpdate(jobId, changes);
    }

    /**
     * The map {@link io.netapprox.core.engine.OutgoingJob#updateMsr} takes.
     *
     * @throws IllegalArgumentException if a group index appears twice
     */
    public static Map<Integer, Double> toMsrMap(MsrUpdate update) {
        Objects.requireNonNull(update, "update");
        Map<Integer, Double> m = new LinkedHashMap<>();
        for (MsrUpdate.Change c : update.changes()) {
            if (m.put(c.groupIndex(), c.msr()) != null) {
                throw new IllegalArgumentException("MSR update for job " + Integer.toUnsignedString(update.jobId())
                        + " changes group index " + c.groupIndex() + " twice");
            }
        }
        return m;
    }

    // ---- reports ----------------------------------------------------------------------------------------------------

    /** The wire status of an engine status (0 = completed). */
    public static int toWireStatus(AtpStatus status) {
        return status == null || status == AtpStatus.OK ? 0 : status.code();
    }

    /** The engine status of a wire status (unknown values map to {@link AtpStatus#UNKNOWN}). */
    public static AtpStatus toAtpStatus(int wireStatus) {
        return AtpStatus.of(wireStatus);
    }

    /**
     * engine -> control group report. Needs a <em>receiver</em> group report: only the receiver lists message ids.
     */
    public static io.netapprox.core.control.GroupReport toControl(io.netapprox.core.engine.GroupReport g) {
        Objects.requireNonNull(g, "group");
        if (g.deliveredIdCount() != g.delivered()) {
            throw new IllegalArgumentException("group " + g.groupId() + " reports " + g.delivered()
                    + " delivered messages but lists " + g.deliveredIdCount()
                    + " ids: only a receiver's report can be converted (the sender's has no ids)");
        }
        return new io.netapprox.core.control.GroupReport(g.groupId(), g.size(), IdSet.of(g.deliveredIds()),
                IdSet.of(g.lostIds()));
    }

    /**
     * engine -> control job report (JOB_REPORT): the receiver's authoritative per-group delivered / lost ids, its
     * status, JCT, measured loss and time per priority class.
     *
     * @throws IllegalArgumentException for a sender's report (it has no message ids)
     */
    public static io.netapprox.core.control.JobReport toControl(io.netapprox.core.engine.JobReport r) {
        Objects.requireNonNull(r, "report");
        if (r.isSender()) {
            throw new IllegalArgumentException("job " + r.jobId() + ": only the receiver's report lists delivered /"
                    + " lost message ids; the sender's report cannot be sent as JOB_REPORT");
        }
        List<io.netapprox.core.control.GroupReport> groups = new ArrayList<>(r.groups().size());
        for (io.netapprox.core.engine.GroupReport g : r.groups()) {
            groups.add(toControl(g));
        }
        double loss = r.measuredLoss();
        if (!(loss >= 0)) {
            loss = 0;
        } else if (loss > 1) {
            loss = 1;
        }
        return new io.netapprox.core.control.JobReport(r.jobId(), toWireStatus(r.status()),
                Math.max(0, r.jct().toNanos()), Math.max(0, r.packetsRetransmitted()), loss,
                nonNegative(r.timeInClassNanos()), groups);
    }

    private static long[] nonNegative(long[] v) {
        long[] out = v.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.max(0, out[i]);
        }
        return out;
    }
}
