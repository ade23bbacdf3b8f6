package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import java.util.ArrayList;
import java.util.List;

/** Reads a native {@code na_report} into a {@link JobReport}. */
final class NativeReports {
    private NativeReports() {}

    /** {@code na_report_info}, slot by slot (checked against the library when it loads). */
    static final NativeRecord<JobReport.Builder> REPORT =
            new NativeRecord<>(
                    NativeEngine.RECORD_REPORT,
                    "job report (na_report_info)",
                    List.of(
                            NativeRecord.in("session", JobReport.Builder::sessionId),
                            NativeRecord.in("job", (b, v) -> b.jobId((int) v)),
                            NativeRecord.in("is_sender", (b, v) -> b.sender(v != 0)),
                            NativeRecord.in("status", (b, v) -> b.status(AtpStatus.of((int) v))),
                            NativeRecord.in("messages", (b, v) -> b.messages((int) v)),
                            NativeRecord.in("delivered", (b, v) -> b.delivered((int) v)),
                            NativeRecord.in("lost", (b, v) -> b.lost((int) v)),
                            NativeRecord.in(
                                    "measured_loss",
                                    (b, v) -> b.measuredLoss(Double.longBitsToDouble(v))),
                            NativeRecord.in("packets_sent", JobReport.Builder::packetsSent),
                            NativeRecord.in(
                                    "packets_retransmitted",
                                    JobReport.Builder::packetsRetransmitted),
                            NativeRecord.in("bytes_sent", JobReport.Builder::bytesSent),
                            NativeRecord.in("epochs", JobReport.Builder::epochs),
                            NativeRecord.in("started_ns", JobReport.Builder::startedNanos),
                            NativeRecord.in("finished_ns", JobReport.Builder::finishedNanos),
                            NativeRecord.in("jct_ns", JobReport.Builder::jctNanos),
                            NativeRecord.in(
                                    "time_in_class_ns[0]", (b, v) -> b.timeInClassNanos(0, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[1]", (b, v) -> b.timeInClassNanos(1, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[2]", (b, v) -> b.timeInClassNanos(2, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[3]", (b, v) -> b.timeInClassNanos(3, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[4]", (b, v) -> b.timeInClassNanos(4, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[5]", (b, v) -> b.timeInClassNanos(5, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[6]", (b, v) -> b.timeInClassNanos(6, v)),
                            NativeRecord.in(
                                    "time_in_class_ns[7]", (b, v) -> b.timeInClassNanos(7, v)),
                            NativeRecord.named("n_groups"),
                            NativeRecord.in("announces_sent", (b, v) -> b.announcesSent((int) v)),
                            NativeRecord.in("updates_sent", (b, v) -> b.updatesSent((int) v)),
                            NativeRecord.in("dones_sent", (b, v) -> b.donesSent((int) v)),
                            NativeRecord.in(
                                    "start_to_running_ns", JobReport.Builder::startToRunningNanos),
                            NativeRecord.in(
                                    "last_data_to_done_ns", JobReport.Builder::lastDataToDoneNanos),
                            NativeRecord.in("announce_probes", (b, v) -> b.announceProbes((int) v)),
                            NativeRecord.in(
                                    "acks_while_starting", (b, v) -> b.acksWhileStarting((int) v)),
                            NativeRecord.in(
                                    "announces_received", (b, v) -> b.announcesReceived((int) v)),
                            NativeRecord.in(
                                    "announces_duplicate", (b, v) -> b.announcesDuplicate((int) v)),
                            NativeRecord.in("announces_acked", (b, v) -> b.announcesAcked((int) v)),
                            NativeRecord.in(
                                    "early_data_packets", JobReport.Builder::earlyDataPackets)));

    /** {@code na_group_report} without its range pointers (read by {@code reportGroupRanges}). */
    static final NativeRecord<Void> GROUP =
            new NativeRecord<>(
                    NativeEngine.RECORD_GROUP,
                    "group report (na_group_report)",
                    List.of(
                            NativeRecord.named("group_id"),
                            NativeRecord.named("size"),
                            NativeRecord.named("target"),
                            NativeRecord.named("delivered"),
                            NativeRecord.named("lost"),
                            NativeRecord.named("target_unreachable"),
                            NativeRecord.named("n_delivered_ranges"),
                            NativeRecord.named("n_lost_ranges")));

    private static final int N_GROUPS = REPORT.slot("n_groups");
    private static final int G_ID = GROUP.slot("group_id");
    private static final int G_SIZE = GROUP.slot("size");
    private static final int G_TARGET = GROUP.slot("target");
    private static final int G_DELIVERED = GROUP.slot("delivered");
    private static final int G_LOST = GROUP.slot("lost");
    private static final int G_UNREACHABLE = GROUP.slot("target_unreachable");
    private static final int G_N_DELIVERED_RANGES = GROUP.slot("n_delivered_ranges");
    private static final int G_N_LOST_RANGES = GROUP.slot("n_lost_ranges");

    /** Reads the report (does not free it). Returns null when the pointer is not a live report. */
    static JobReport read(long report) {
        long[] info = new long[REPORT.size()];
        if (NativeEngine.reportInfo(report, info) != 0) {
            return null;
        }
        int n = (int) info[N_GROUPS];
        List<GroupReport> groups = new ArrayList<>(n);
        long[] g = new long[GROUP.size()];
        for (int i = 0; i < n; i++) {
            if (NativeEngine.reportGroup(report, i, g) != 0) {
                return null;
            }
            // Ids travel as ranges: a report costs its range count, not the job's size.
            int[] df = new int[(int) g[G_N_DELIVERED_RANGES]];
            int[] dl = new int[df.length];
            int[] lf = new int[(int) g[G_N_LOST_RANGES]];
            int[] ll = new int[lf.length];
            if (df.length + lf.length > 0
                    && NativeEngine.reportGroupRanges(report, i, df, dl, lf, ll) != 0) {
                return null;
            }
            groups.add(
                    new GroupReport(
                            g[G_ID],
                            (int) g[G_SIZE],
                            (int) g[G_TARGET],
                            g[G_UNREACHABLE] != 0,
                            (int) g[G_DELIVERED],
                            (int) g[G_LOST],
                            IdSet.ofRanges(df, dl),
                            IdSet.ofRanges(lf, ll)));
        }
        JobReport.Builder b = JobReport.builder();
        REPORT.read(info, b);
        return b.groups(groups).build();
    }
}
