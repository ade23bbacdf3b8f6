package io.netapprox.flink;

import java.util.Arrays;

/**
 * How many values of each value column of a stratum are NaN, +infinity and -infinity, counted by
 * the sender over every record (not only the sampled ones), so that the window's answers are what
 * plain Java double arithmetic gives over all the records: a sum or an average with a NaN (or with
 * both infinities) is NaN, with one kind of infinity that infinity; a quantile's rank that falls
 * among the NaN values (which sort above every number, as {@code Arrays.sort} orders them) is NaN.
 */
final class NonFinite {
    /** No non-finite value (shared, never modified). */
    static final NonFinite NONE = new NonFinite(0);

    /** Per value column: NaN, +infinity, -infinity counts. */
    private long[] counts;

    private NonFinite() {} // Kryo

    NonFinite(int width) {
        this.counts = new long[3 * width];
    }

    /** Counts value {@code x} of column {@code v} if it is not finite; returns whether it was. */
    boolean add(int v, double x) {
        if (Double.isFinite(x)) {
            return false;
        }
        counts[3 * v + (Double.isNaN(x) ? 0 : x > 0 ? 1 : 2)]++;
        return true;
    }

    long nan(int v) {
        return counts.length == 0 ? 0 : counts[3 * v];
    }

    long positive(int v) {
        return counts.length == 0 ? 0 : counts[3 * v + 1];
    }

    long negative(int v) {
        return counts.length == 0 ? 0 : counts[3 * v + 2];
    }

    boolean isEmpty() {
        for (long c : counts) {
            if (c != 0) {
                return false;
            }
        }
        return true;
    }

    /** The raw counts (3 per column), for the stratum table. */
    long[] counts() {
        return counts;
    }

    static NonFinite of(long[] counts) {
        NonFinite n = new NonFinite();
        n.counts = counts.clone();
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NonFinite n
                && (isEmpty() && n.isEmpty() || Arrays.equals(counts, n.counts));
    }

    @Override
    public int hashCode() {
        return isEmpty() ? 0 : Arrays.hashCode(counts);
    }

    @Override
    public String toString() {
        return isEmpty() ? "none" : Arrays.toString(counts);
    }
}
