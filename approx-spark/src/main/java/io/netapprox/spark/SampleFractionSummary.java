package io.netapprox.spark;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Locale;
import org.apache.spark.util.AccumulatorV2;

/**
 * A Spark accumulator summarising the sample fraction of every group of an approximate shuffle
 * (rows that reached the estimate / rows of the group): how many groups, the smallest, the mean and
 * the largest fraction, and a histogram of 20 bins of width 0.05 from which quantiles are read to
 * within a bin. Shown in the Spark UI as its {@link Summary#toString()}.
 */
public final class SampleFractionSummary
        extends AccumulatorV2<Double, SampleFractionSummary.Summary> {
    private static final long serialVersionUID = 1L;
    static final int BINS = 20;

    private Summary summary = Summary.EMPTY;

    /** The summary of a set of fractions (immutable). */
    public record Summary(long groups, double min, double max, double sum, long[] bins)
            implements Serializable {
        static final Summary EMPTY =
                new Summary(
                        0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, 0, new long[BINS]);

        Summary plus(double f) {
            long[] b = bins.clone();
            b[Math.min(BINS - 1, (int) Math.floor(f * BINS))]++;
            return new Summary(groups + 1, Math.min(min, f), Math.max(max, f), sum + f, b);
        }

        Summary plus(Summary o) {
            long[] b = bins.clone();
            for (int i = 0; i < BINS; i++) {
                b[i] += o.bins[i];
            }
            return new Summary(
                    groups + o.groups, Math.min(min, o.min), Math.max(max, o.max), sum + o.sum, b);
        }

        public double mean() {
            return groups == 0 ? Double.NaN : sum / groups;
        }

        /** The upper edge of the bin holding the q-quantile of the fractions (to within 0.05). */
        public double quantileUpperBound(double q) {
            long rank = (long) Math.max(1, Math.ceil(q * groups));
            long seen = 0;
            for (int i = 0; i < BINS; i++) {
                seen += bins[i];
                if (seen >= rank) {
                    return Math.min(max, (i + 1.0) / BINS);
                }
            }
            return max;
        }

        @Override
        public String toString() {
            if (groups == 0) {
                return "no groups";
            }
            return String.format(
                    Locale.ROOT,
                    "%d groups: min %.4f, mean %.4f, median <= %.2f, max %.4f",
                    groups,
                    min,
                    mean(),
                    quantileUpperBound(0.5),
                    max);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Summary s
                    && s.groups == groups
                    && s.min == min
                    && s.max == max
                    && s.sum == sum
                    && Arrays.equals(s.bins, bins);
        }

        @Override
        public int hashCode() {
            return Long.hashCode(groups) * 31 + Arrays.hashCode(bins);
        }
    }

    @Override
    public boolean isZero() {
        return summary.groups() == 0;
    }

    @Override
    public SampleFractionSummary copy() {
        SampleFractionSummary c = new SampleFractionSummary();
        c.summary = summary;
        return c;
    }

    @Override
    public void reset() {
        summary = Summary.EMPTY;
    }

    @Override
    public void add(Double fraction) {
        if (fraction == null || !(fraction >= 0 && fraction <= 1)) {
            throw new IllegalArgumentException("a sample fraction in [0, 1], got " + fraction);
        }
        summary = summary.plus(fraction);
    }

    @Override
    public void merge(AccumulatorV2<Double, Summary> other) {
        summary = summary.plus(other.value());
    }

    @Override
    public Summary value() {
        return summary;
    }
}
