package io.netapprox.flink;

import io.netapprox.core.job.Target;

/**
 * One stratum of an epoch as its manifest describes it: the (window, group) and the sender's share
 * of it, N messages holding M records, sampled at least at MSR.
 */
record StratumInfo<K>(
        long windowStart, long windowEnd, K group, int messages, long records, double msr) {

    /** ATP's guarantee for this stratum: {@code ceil(MSR * N)} messages (approx-core's formula). */
    int target() {
        return Target.of(msr, messages);
    }
}
