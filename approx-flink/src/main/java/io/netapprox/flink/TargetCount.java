package io.netapprox.flink;

import java.util.concurrent.CompletableFuture;

/**
 * Counts one pull's delivered messages per ATP group against the groups' targets (the receiver's
 * view of the engine's completion criterion); {@link #reached()} completes when every group has its
 * target. Group ids out of range (untrusted) are ignored. Thread-safe.
 */
final class TargetCount {
    private final int[] missing;
    private int groupsBelow;
    private final CompletableFuture<Void> reached = new CompletableFuture<>();

    TargetCount(int[] targets) {
        this.missing = targets.clone();
        for (int t : missing) {
            if (t > 0) {
                groupsBelow++;
            }
        }
        if (groupsBelow == 0) {
            reached.complete(null);
        }
    }

    /** A message of group {@code g} was delivered. */
    void delivered(long g) {
        synchronized (this) {
            if (g < 0 || g >= missing.length || missing[(int) g] <= 0) {
                return;
            }
            if (--missing[(int) g] > 0 || --groupsBelow > 0) {
                return;
            }
        }
        reached.complete(null);
    }

    CompletableFuture<Void> reached() {
        return reached;
    }
}
