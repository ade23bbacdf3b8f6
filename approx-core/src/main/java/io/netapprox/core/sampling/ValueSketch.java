package io.netapprox.core.sampling;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A compact picture of one share's value distribution for planning quantiles: the values at (about)
 * {@code points} equally spaced ranks, including the smallest and the largest, so that the number
 * of values at most (or below) any {@code x} is known to within one gap between kept ranks and is
 * interpolated linearly inside the gap. Shares with at most {@code points} values are kept whole
 * (exact).
 *
 * <p>Used by {@link SharePlanner#quantile}: merged over the shares of a group it locates the
 * group's quantile and how much of each share lies below {@code q (1 - e_max)} and at most {@code q
 * (1 + e_max)}. With 256 points the rank error is at most 0.4% of the share, and much less for
 * smooth distributions (interpolation).
 *
 * <p>Values must not be NaN (an integration counts NaN values separately; they sort above every
 * number, as in Spark); infinities are ordinary values. Immutable and serializable.
 */
public final class ValueSketch implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Default number of kept points per share. */
    public static final int DEFAULT_POINTS = 256;

    private final long count;

    /** Kept values, non-decreasing. */
    private final double[] values;

    /** 1-based rank of each kept value in the share, increasing; first 1, last {@code count}. */
    private final long[] ranks;

    private ValueSketch(long count, double[] values, long[] ranks) {
        this.count = count;
        this.values = values;
        this.ranks = ranks;
    }

    /**
     * @param data the share's values (not modified), none NaN
     * @param length how many of {@code data} to use (the first {@code length})
     * @param points how many values to keep at most, {@code >= 2}
     * @return the sketch
     */
    public static ValueSketch of(double[] data, int length, int points) {
        if (points < 2) {
            throw new IllegalArgumentException("a sketch keeps at least 2 points, got " + points);
        }
        if (length < 0 || length > data.length) {
            throw new IllegalArgumentException(
                    "length " + length + " outside [0, " + data.length + "]");
        }
        double[] sorted = Arrays.copyOf(data, length);
        for (double v : sorted) {
            if (Double.isNaN(v)) {
                throw new IllegalArgumentException(
                        "a value sketch takes no NaN (count NaN values separately)");
            }
        }
        Arrays.sort(sorted);
        if (length <= points) {
            long[] ranks = new long[length];
            for (int i = 0; i < length; i++) {
                ranks[i] = i + 1;
            }
            return new ValueSketch(length, sorted, ranks);
        }
        double[] kept = new double[points];
        long[] ranks = new long[points];
        for (int j = 0; j < points; j++) {
            long r = 1 + Math.round((double) j * (length - 1) / (points - 1));
            ranks[j] = r;
            kept[j] = sorted[(int) (r - 1)];
        }
        return new ValueSketch(length, kept, ranks);
    }

    /**
     * A sketch of a share of {@code count} values from a simple random sample of {@code length} of
     * them (e.g. the first values of a share kept in random order): the sample's values at equally
     * spaced ranks, each rank scaled to the share ({@code count / length}). Not exact (unless the
     * sample is the whole share); the relative rank error adds the sample's, about {@code sqrt(p (1
     * - p) / length)} of the share at fraction p.
     *
     * @param sample the sampled values (not modified), none NaN
     * @param length how many of {@code sample} to use
     * @param count the share's number of values, {@code >= length}
     * @param points how many values to keep at most, {@code >= 2}
     * @return the sketch
     */
    public static ValueSketch ofSample(double[] sample, int length, long count, int points) {
        if (count < length) {
            throw new IllegalArgumentException(
                    "a sample of " + length + " values from a share of " + count);
        }
        ValueSketch s = of(sample, length, points);
        if (count == length || length == 0) {
            return s;
        }
        double scale = (double) count / length;
        long[] ranks = new long[s.ranks.length];
        for (int j = 0; j < ranks.length; j++) {
            // rank r of the sample stands for the share's ranks ((r - 1) * scale, r * scale]
            ranks[j] = Math.max(1, Math.round(s.ranks[j] * scale));
            if (j > 0 && ranks[j] <= ranks[j - 1]) {
                ranks[j] = ranks[j - 1] + 1;
            }
        }
        ranks[0] = 1;
        ranks[ranks.length - 1] = count;
        for (int j = ranks.length - 2; j > 0 && ranks[j] >= ranks[j + 1]; j--) {
            ranks[j] = ranks[j + 1] - 1;
        }
        return new ValueSketch(count, s.values, ranks);
    }

    /**
     * @param data all values of the share @return a sketch with {@link #DEFAULT_POINTS} points
     */
    public static ValueSketch of(double[] data) {
        return of(data, data.length, DEFAULT_POINTS);
    }

    /**
     * @return the number of values the share has.
     */
    public long count() {
        return count;
    }

    /**
     * @return whether every value is kept (so counts are exact).
     */
    public boolean isExact() {
        return values.length == count;
    }

    /**
     * @return the kept values (a copy), non-decreasing.
     */
    public double[] points() {
        return values.clone();
    }

    /**
     * @return the number of values {@code <= x}, estimated (exact at kept values' ranks and for
     *     exact sketches).
     */
    public double atMost(double x) {
        if (count == 0 || x < values[0]) {
            return 0;
        }
        int j = lastIndexAtMost(x);
        if (j == values.length - 1) {
            return count;
        }
        return interpolate(j, x);
    }

    /**
     * @return the number of values {@code < x}, estimated.
     */
    public double below(double x) {
        if (count == 0 || x <= values[0]) {
            return 0;
        }
        int j = lastIndexBelow(x);
        if (j == values.length - 1) {
            return count;
        }
        if (values[j + 1] == x) {
            return ranks[j + 1]
                    - 1; // everything up to the first kept copy of x (a gap may hold more copies)
        }
        return interpolate(j, x);
    }

    /**
     * Ranks {@code ranks[j] .. ranks[j+1] - 1} hold values in {@code [values[j], values[j+1])}:
     * linear in x.
     */
    private double interpolate(int j, double x) {
        double v0 = values[j];
        double v1 = values[j + 1];
        double gap = ranks[j + 1] - 1 - ranks[j];
        if (gap <= 0 || !(v1 > v0) || Double.isInfinite(v0) || Double.isInfinite(v1)) {
            return ranks[j];
        }
        return ranks[j] + gap * Math.min(1.0, (x - v0) / (v1 - v0));
    }

    private int lastIndexAtMost(double x) {
        int lo = 0;
        int hi = values.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (values[mid] <= x) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    private int lastIndexBelow(double x) {
        int lo = 0;
        int hi = values.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (values[mid] < x) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo;
    }

    @Override
    public String toString() {
        return "ValueSketch{count="
                + count
                + ", points="
                + values.length
                + (count > 0 ? ", min=" + values[0] + ", max=" + values[values.length - 1] : "")
                + "}";
    }
}
