package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.job.Target;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The receiving side of one job on the TCP data plane: the group table from START, which messages
 * were delivered, the targets (updated by UPDATE) and the completion rule of the engine's receiver
 * (protocol.md section 5): the job is complete when every group has {@code delivered >= target} (or
 * every message). Exact groups (MSR 1 at the start) are delivered in message order; the connection
 * is in order, so a message is held only when the sender submitted out of order. Its report is
 * built like the engine's: delivered ids are what reached the listener, every other id is reported
 * lost (never sent, or still in flight when the receiver completed the job). Event loop only.
 */
final class TcpIncomingJob {
    final int id;
    final JobSpec spec;

    /** Bytes of the group table and bitmaps, charged to the session's receive budget. */
    final long tableCharge;

    private final int groups;
    private final int[] base;
    private final int[] target;
    private final int[] delivered;
    private final long[][] bits;
    private final boolean[] ordered;
    private final int[] nextInOrder;
    private final long startedNanos;
    private final Map<Integer, AtpMessage> held = new HashMap<>();

    TcpIncomingJob(JobSpec spec, long startedNanos) {
        this.id = spec.jobId();
        this.spec = spec;
        List<GroupSpec> gs = spec.groups();
        this.groups = gs.size();
        this.base = new int[groups];
        this.target = new int[groups];
        this.delivered = new int[groups];
        this.bits = new long[groups][];
        this.ordered = new boolean[groups];
        this.nextInOrder = new int[groups];
        int b = 0;
        for (int g = 0; g < groups; g++) {
            GroupSpec s = gs.get(g);
            base[g] = b;
            b += s.size();
            target[g] = s.target();
            ordered[g] = s.msr() >= 1.0;
            bits[g] = new long[(s.size() + 63) / 64];
        }
        this.tableCharge = tableCharge(spec);
        this.startedNanos = startedNanos;
    }

    /** The bookkeeping a job costs the receiver (table and bitmaps), before it is created. */
    static long tableCharge(JobSpec spec) {
        long charge = 256;
        for (GroupSpec s : spec.groups()) {
            charge += 48 + 8L * ((s.size() + 63) / 64);
        }
        return charge;
    }

    int groupCount() {
        return groups;
    }

    int size(int g) {
        return spec.groups().get(g).size();
    }

    long groupId(int g) {
        return spec.groups().get(g).groupId();
    }

    /** The job-wide message id of message {@code index} of group {@code g}. */
    int messageId(int g, int index) {
        return base[g] + index;
    }

    /** True when message {@code index} of group {@code g} arrived already (delivered or held). */
    boolean arrived(int g, int index) {
        return (bits[g][index >>> 6] & (1L << index)) != 0 || held.containsKey(messageId(g, index));
    }

    /** Exact group: the message to deliver now or hold until its turn. */
    boolean mustHold(int g, int index) {
        return ordered[g] && index != nextInOrder[g];
    }

    void hold(AtpMessage m) {
        held.put(m.messageId(), m);
    }

    /** Counts {@code index} of group {@code g} delivered. */
    void delivered(int g, int index) {
        bits[g][index >>> 6] |= 1L << index;
        delivered[g]++;
        if (ordered[g]) {
            nextInOrder[g] = index + 1;
        }
    }

    /** The held message that is now next in order in group {@code g}, or null. */
    AtpMessage nextHeld(int g) {
        if (!ordered[g] || nextInOrder[g] >= size(g)) {
            return null;
        }
        return held.remove(messageId(g, nextInOrder[g]));
    }

    /** UPDATE: a group's new target ({@code ceil(msr * N_g)}; nothing is lost on TCP). */
    void updateMsr(int g, double msr) {
        target[g] = Target.of(msr, size(g));
    }

    boolean complete() {
        for (int g = 0; g < groups; g++) {
            if (delivered[g] < target[g] && delivered[g] < size(g)) {
                return false;
            }
        }
        return true;
    }

    /** Per group, what was delivered (what DONE carries back to the sender). */
    int[] deliveredCounts() {
        return delivered.clone();
    }

    /** Messages held for order, for release when the job ends. */
    List<AtpMessage> takeHeld() {
        List<AtpMessage> out = new ArrayList<>(held.values());
        held.clear();
        return out;
    }

    /** The receiver's report, as the engine makes it (ids listed, per-group targets). */
    JobReport report(AtpStatus status, long sessionId, long nowNanos) {
        List<GroupReport> gr = new ArrayList<>(groups);
        long n = 0;
        long d = 0;
        for (int g = 0; g < groups; g++) {
            int size = size(g);
            long[] got = bits[g];
            long[] missing = new long[got.length];
            for (int w = 0; w < got.length; w++) {
                missing[w] = ~got[w];
            }
            int tail = size & 63;
            if (tail != 0) {
                missing[missing.length - 1] &= (1L << tail) - 1;
            }
            IdSet deliveredIds =
                    delivered[g] == 0 ? IdSet.empty() : IdSet.ofBitmap(base[g], size, got);
            IdSet lostIds =
                    delivered[g] == size ? IdSet.empty() : IdSet.ofBitmap(base[g], size, missing);
            gr.add(
                    new GroupReport(
                            groupId(g),
                            size,
                            Math.min(target[g], size),
                            false,
                            delivered[g],
                            size - delivered[g],
                            deliveredIds,
                            lostIds));
            n += size;
            d += delivered[g];
        }
        return JobReport.builder()
                .sessionId(sessionId)
                .jobId(id)
                .sender(false)
                .status(status)
                .messages((int) n)
                .delivered((int) d)
                .lost((int) (n - d))
                .measuredLoss(n == 0 ? 0.0 : (double) (n - d) / n)
                .startedNanos(startedNanos)
                .finishedNanos(nowNanos)
                .jctNanos(Math.max(0, nowNanos - startedNanos))
                .groups(gr)
                .build();
    }
}
