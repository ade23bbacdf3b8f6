package io.netapprox.spark;

/**
 * Spark SQL's definitions of a group's q-quantile over its {@code N} values sorted ascending (NaN
 * above every number, as Spark orders doubles), as the 1-based ranks of the values they read and
 * how they combine them - the same double arithmetic as Spark's {@code PercentileBase} and {@code
 * PercentileDisc} (checked against Spark 3.5.8 and 4.1.3), so a complete group's answer is bitwise
 * Spark's:
 *
 * <ul>
 *   <li>{@link ApproxSpec.QuantileMethod#INTERPOLATED} ({@code percentile}, {@code median}, {@code
 *       percentile_cont}): {@code position = (N - 1) q}; the values at 0-based positions {@code
 *       floor(position)} and {@code ceil(position)}, {@code a} and {@code b}; the answer is {@code
 *       a} when the two positions or values are equal, else {@code (ceil - position) a + (position
 *       - floor) b} (NaN when either is NaN);
 *   <li>{@link ApproxSpec.QuantileMethod#DISCRETE} ({@code percentile_disc}): the {@code max(1,
 *       ceil(N q))}-th value ({@code N q} in doubles, no tolerance: {@code 0.07 * 100} is just
 *       above 7, so it is the 8th of 100, as in Spark).
 * </ul>
 *
 * A descending order ({@code WITHIN GROUP (ORDER BY x DESC)}) counts the same positions from the
 * largest value.
 */
final class SparkPercentile {
    private SparkPercentile() {}

    /**
     * What an answer reads: the values at ascending ranks {@code first} and {@code second} ({@code
     * first == second} when it reads one value), combined by {@link #combine}.
     *
     * @param first 1-based ascending rank of the value Spark calls the lower key
     * @param second 1-based ascending rank of the higher key
     * @param lower {@code floor(position)} (interpolated), else 0
     * @param higher {@code ceil(position)} (interpolated), else 0
     * @param position {@code (N - 1) q} (interpolated), else 0
     */
    record Ranks(long first, long second, long lower, long higher, double position) {

        /** True when the answer is one value (no interpolation). */
        boolean single() {
            return first == second;
        }

        /**
         * The answer from the values at {@link #first} ({@code a}) and {@link #second} ({@code b}),
         * as Spark computes it.
         */
        double combine(double a, double b) {
            if (single() || lower == higher || a == b) {
                return a;
            }
            return ((double) higher - position) * a + (position - (double) lower) * b;
        }
    }

    /**
     * @param a a quantile aggregate
     * @param n the group's values (NaN included), {@code >= 1}
     */
    static Ranks ranks(ApproxSpec.Aggregate a, long n) {
        return ranks(a.method(), a.q(), a.descending(), n);
    }

    static Ranks ranks(ApproxSpec.QuantileMethod method, double q, boolean descending, long n) {
        if (n < 1) {
            throw new IllegalArgumentException("a quantile of no values");
        }
        if (!(q >= 0 && q <= 1)) {
            throw new IllegalArgumentException("percentage must be in [0, 1], got " + q);
        }
        if (method == ApproxSpec.QuantileMethod.DISCRETE) {
            long r = Math.max(1, Math.min(n, (long) Math.ceil((double) n * q)));
            long asc = descending ? n + 1 - r : r;
            return new Ranks(asc, asc, 0, 0, 0);
        }
        double position = (double) (n - 1) * q;
        long lower = (long) Math.floor(position);
        long higher = (long) Math.ceil(position);
        return descending
                ? new Ranks(n - lower, n - higher, lower, higher, position)
                : new Ranks(lower + 1, higher + 1, lower, higher, position);
    }
}
