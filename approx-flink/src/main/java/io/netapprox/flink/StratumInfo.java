package io.netapprox.flink;

import io.netapprox.core.job.Target;

/**
 * One stratum of an epoch as its manifest describes it: the (window, group) and the sender's share
 * of it, N messages holding M records, sampled at least at MSR, and the NaN and infinite values of
 * its M records per value column ({@link NonFinite}).
 */
record StratumInfo<K>(
        long windowStart,
        long windowEnd,
        K group,
        int messages,
        long records,
        double msr,
        NonFinite nonFinite) {

    /** A stratum whose values are all finite. */
    StratumInfo(long windowStart, long windowEnd, K group, int messages, long records, double msr) {
        this(windowStart, windowEnd, group, messages, records, msr, NonFinite.NONE);
    }

    /** ATP's guarantee for this stratum: {@code ceil(MSR * N)} messages (approx-core's formula). */
    int target() {
        return Target.of(msr, messages);
    }
}
