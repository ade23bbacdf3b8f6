package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.IdSet;
import java.util.ArrayList;
import java.util.List;

/** Reads a native {@code na_report} into a {@link JobReport}. */
final class NativeReports {
    private NativeReports() {}

    /** Reads the report (does not free it). Returns null when the pointer is not a live report. */
    static JobReport read(long report) {
        long[] info = new long[NativeEngine.REPORT_INFO_LONGS];
        if (NativeEngine.reportInfo(report, info) != 0) {
            return null;
        }
        int n = (int) info[NativeEngine.REPORT_INFO_LONGS - 1];
        List<GroupReport> groups = new ArrayList<>(n);
        long[] g = new long[NativeEngine.GROUP_INFO_LONGS];
        for (int i = 0; i < n; i++) {
            if (NativeEngine.reportGroup(report, i, g) != 0) {
                return null;
            }
            int[] d = new int[(int) g[6]];
            int[] l = new int[(int) g[7]];
            if (d.length + l.length > 0 && NativeEngine.reportGroupIds(report, i, d, l) != 0) {
                return null;
            }
            groups.add(
                    new GroupReport(
                            g[0], (int) g[1], (int) g[2], g[5] != 0, (int) g[3], (int) g[4], IdSet.of(d),
                            IdSet.of(l)));
        }
        int k = 0;
        JobReport.Builder b = JobReport.builder();
        b.sessionId(info[k++]);
        b.jobId((int) info[k++]);
        b.sender(info[k++] != 0);
        b.status(AtpStatus.of((int) info[k++]));
        b.messages((int) info[k++]);
        b.delivered((int) info[k++]);
        b.lost((int) info[k++]);
        b.measuredLoss(Double.longBitsToDouble(info[k++]));
        b.packetsSent(info[k++]);
        b.packetsRetransmitted(info[k++]);
        b.bytesSent(info[k++]);
        b.epochs(info[k++]);
        b.startedNanos(info[k++]);
        b.finishedNanos(info[k++]);
        b.jctNanos(info[k++]);
        long[] timeInClass = new long[JobReport.PRIORITY_CLASSES];
        System.arraycopy(info, k, timeInClass, 0, timeInClass.length);
        return b.timeInClassNanos(timeInClass).groups(groups).build();
    }
}
