package io.netapprox.core.control;

import java.util.Arrays;
import java.util.List;

/**
 * JOB_REPORT: the final outcome of a job, per group.
 *
 * @param jobId                the job (unsigned 32-bit)
 * @param status               0 = completed; any other value is the engine's error status
 * @param jctNanos             job completion time, nanoseconds, {@code >= 0}
 * @param retransmissions      retransmitted data packets, {@code >= 0}
 * @param measuredLoss         measured loss rate in [0, 1]
 * @param priorityTimeNanos    time spent in each priority class (index = class, at most
 *                             {@value #MAX_PRIORITY_CLASSES} entries), each {@code >= 0}
 * @param groups               one report per group, in announcement order
 */
public record JobReport(int jobId, int status, long jctNanos, long retransmissions, double measuredLoss,
                        long[] priorityTimeNanos, List<GroupReport> groups) {
    public static final int MAX_PRIORITY_CLASSES = 8;

    public JobReport {
        if (jctNanos < 0 || retransmissions < 0) {
            throw new IllegalArgumentException("jctNanos and retransmissions must be >= 0");
        }
        if (!(measuredLoss >= 0.0 && measuredLoss <= 1.0)) {
            throw new IllegalArgumentException("measuredLoss must be in [0, 1], got " + measuredLoss);
        }
        priorityTimeNanos = priorityTimeNanos == null ? new long[0] : priorityTimeNanos.clone();
        if (priorityTimeNanos.length > MAX_PRIORITY_CLASSES) {
            throw new IllegalArgumentException("at most " + MAX_PRIORITY_CLASSES + " priority classes, got "
                    + priorityTimeNanos.length);
        }
        for (long t : priorityTimeNanos) {
            if (t < 0) {
                throw new IllegalArgumentException("priority class times must be >= 0");
            }
        }
        groups = List.copyOf(groups == null ? List.of() : groups);
    }

    @Override
    public long[] priorityTimeNanos() {
        return priorityTimeNanos.clone();
    }

    long[] priorityTimeNanosUnsafe() {
        return priorityTimeNanos;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof JobReport r && r.jobId == jobId && r.status == status && r.jctNanos == jctNanos
                && r.retransmissions == retransmissions
                && Double.compare(r.measuredLoss, measuredLoss) == 0
                && Arrays.equals(r.priorityTimeNanos, priorityTimeNanos) && r.groups.equals(groups);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * jobId + groups.hashCode()) + Arrays.hashCode(priorityTimeNanos);
    }

    @Override
    public String toString() {
        return "JobReport{job=" + Integer.toUnsignedString(jobId) + ", status=" + status + ", jct="
                + jctNanos + "ns, retx=" + retransmissions + ", loss=" + measuredLoss + ", groups="
                + groups.size() + "}";
    }
}
