package io.netapprox.core.transport;

import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.Target;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How long each group of one incoming transfer went without a delivery while it was short of its
 * target: from the announcement to the first message, between two messages, and from the last one
 * to the end of a transfer that ended short. A group starved by a busier priority class (the
 * approximate classes behind class 0 on a strict-priority switch, issue 32) shows here as a long
 * wait; a group that has its target waits for nothing, so its later gaps do not count. The same on
 * both data planes (it sees the messages the listener sees). Thread-safe: messages arrive on the
 * data plane's event thread, MSR updates on the application's.
 */
final class GroupWaits {
    private final Map<Long, Integer> indexOf = new HashMap<>();
    private final int[] size;
    private final int[] target;
    private final int[] delivered;
    private final long[] last;
    private final long[] longest;

    GroupWaits(List<GroupSpec> groups, long startNanos) {
        int n = groups.size();
        size = new int[n];
        target = new int[n];
        delivered = new int[n];
        last = new long[n];
        longest = new long[n];
        for (int g = 0; g < n; g++) {
            GroupSpec s = groups.get(g);
            indexOf.put(s.groupId(), g);
            size[g] = s.size();
            target[g] = s.target();
            last[g] = startNanos;
        }
    }

    /** A message of {@code groupId} arrived at {@code now}; unknown groups are ignored. */
    synchronized void delivered(long groupId, long now) {
        Integer g = indexOf.get(groupId);
        if (g == null) {
            return;
        }
        if (delivered[g] < target[g]) {
            longest[g] = Math.max(longest[g], now - last[g]);
        }
        last[g] = now;
        delivered[g]++;
    }

    /** The receiver asked a new MSR of group index {@code g} (its target from then on). */
    synchronized void msrChanged(int g, double msr) {
        if (g >= 0 && g < target.length) {
            target[g] = Target.of(msr, size[g]);
        }
    }

    /**
     * Per group (index order) the longest wait in nanoseconds, counting up to {@code now} for a
     * group still short of its target.
     */
    synchronized long[] longestNanos(long now) {
        long[] out = longest.clone();
        for (int g = 0; g < out.length; g++) {
            if (delivered[g] < target[g]) {
                out[g] = Math.max(out[g], now - last[g]);
            }
        }
        return out;
    }
}
