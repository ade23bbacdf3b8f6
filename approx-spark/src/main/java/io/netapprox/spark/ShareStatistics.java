package io.netapprox.spark;

import io.netapprox.core.sampling.ExactSum;
import io.netapprox.core.sampling.ShareMoments;
import io.netapprox.core.sampling.ValueSketch;
import java.io.Serializable;

/**
 * What planning needs to know about one share of a group (the group's records in one map output),
 * computed from the records themselves: per value column the census moments of its finite values
 * ({@link ShareMoments}) and its NaN / +Infinity / -Infinity counts, and a {@link ValueSketch} of
 * the columns a quantile is asked of. Built by the map task's writer for each of its shares while
 * it writes them ({@link ApproxShuffleWriter}); sent to the driver for planning ({@link
 * ShareStatisticsAccumulator}) or planned on the spot ({@code spark.approx.planning=local}).
 */
final class ShareStatistics implements Serializable {
    private static final long serialVersionUID = 2L;

    final long units;
    final long records;

    /**
     * Messages the map output wrote of the share (its pre-sample, framed), or -1 when not written
     * (a share planned before writing): the most its target can be.
     */
    final long written;

    /**
     * Per value column (null where no aggregate needs the moments, or the column has non-finite
     * values).
     */
    final ShareMoments[] moments;

    /** Per value column: NaN, +Infinity, -Infinity counts. */
    final long[][] nonFinite;

    /** Per value column (null where no quantile is asked). */
    final ValueSketch[] sketches;

    private ShareStatistics(
            long units,
            long records,
            long written,
            ShareMoments[] moments,
            long[][] nonFinite,
            ValueSketch[] sketches) {
        this.units = units;
        this.records = records;
        this.written = written;
        this.moments = moments;
        this.nonFinite = nonFinite;
        this.sketches = sketches;
    }

    /**
     * Values a quantile column's sketch is built from, at most: a share with more is sketched from
     * the first this many values of its pre-sample, which the writer reads in random order (a
     * simple random sample; see {@link ValueSketch#ofSample}). Bounds the builder's memory (512 KB
     * per quantile column).
     */
    static final int SKETCH_SAMPLE = 1 << 16;

    /**
     * Accumulates one share: every record's values into the moments and non-finite counts ({@link
     * #add}, as the map task reads its input), and a uniform sample of them, in random order, into
     * the quantile columns' sketches ({@link #sample}: the map output's pre-sample as it is
     * written, see {@link #SKETCH_SAMPLE}).
     */
    static final class Builder {
        private final CensusMoments[] accumulators;
        private final ExactSum[] partials;
        private final long[][] nonFinite;
        private final double[][] sketchValues;
        private final int[] sketchSizes;
        private final long[] sketchCounts;
        private long records;

        Builder(ApproxSpec spec) {
            this.sketchCounts = new long[spec.numValues()];
            int nv = spec.numValues();
            accumulators = new CensusMoments[nv];
            partials = new ExactSum[nv];
            nonFinite = new long[nv][3];
            sketchValues = new double[nv][];
            sketchSizes = new int[nv];
            for (ApproxSpec.Aggregate a : spec.aggregates()) {
                switch (a.kind()) {
                    case AVG, SUM -> {
                        accumulators[a.valueIndex()] = new CensusMoments();
                        if (spec.exactPartials()) {
                            partials[a.valueIndex()] = new ExactSum();
                        }
                    }
                    case QUANTILE -> sketchValues[a.valueIndex()] = new double[16];
                    default -> {}
                }
            }
        }

        Builder add(ApproxRow row) {
            return add(row.values);
        }

        /** Adds one record's values (read now, not kept). */
        Builder add(double[] values) {
            records++;
            for (int v = 0; v < values.length; v++) {
                double x = values[v];
                if (Double.isNaN(x)) {
                    nonFinite[v][0]++;
                    continue;
                }
                if (Double.isInfinite(x)) {
                    nonFinite[v][x > 0 ? 1 : 2]++;
                } else if (accumulators[v] != null) {
                    accumulators[v].add(x);
                    if (partials[v] != null) {
                        partials[v].add(x);
                    }
                }
                sketchCounts[v]++;
            }
            return this;
        }

        /**
         * Adds a record of the share's uniform sample (in random order) to the sketches: the
         * record's {@code len} bytes in {@link ApproxRow}'s serialized form, read in place (the
         * writer calls this for up to {@link #SKETCH_SAMPLE} records per share; nothing is
         * allocated per record, and nothing is read when the query has no quantile).
         */
        Builder sample(byte[] record, int len) {
            for (int v = 0; v < sketchValues.length; v++) {
                if (sketchValues[v] == null || sketchSizes[v] >= SKETCH_SAMPLE) {
                    continue;
                }
                double x = ApproxRow.value(record, len, v);
                if (Double.isNaN(x)) {
                    continue;
                }
                if (sketchSizes[v] == sketchValues[v].length) {
                    sketchValues[v] = java.util.Arrays.copyOf(sketchValues[v], sketchSizes[v] * 2);
                }
                sketchValues[v][sketchSizes[v]++] = x;
            }
            return this;
        }

        /**
         * Per value column, the exact sum of the share's finite values (every record, not a
         * sample); null where the query has no avg/sum of the column or asked for sampling ({@link
         * ApproxSpec#exactPartials()}).
         */
        ExactSum[] partials() {
            return partials.clone();
        }

        /**
         * True when the query asks a quantile of some column: then {@link #sample} builds sketches
         * and the writer must feed it before planning the share (else nothing needs the
         * pre-sample's records before the plan).
         */
        boolean sketching() {
            for (double[] v : sketchValues) {
                if (v != null) {
                    return true;
                }
            }
            return false;
        }

        /** Records added so far. */
        long records() {
            return records;
        }

        /**
         * @param units the share's messages, whole (the planner's unit; see {@link
         *     MapOutputFormat.Group#population})
         */
        ShareStatistics build(long units) {
            return build(units, -1);
        }

        /**
         * @param units the share's messages, whole
         * @param written the messages the map output wrote of the share (-1: not written)
         */
        ShareStatistics build(long units, long written) {
            int nv = accumulators.length;
            ShareMoments[] moments = new ShareMoments[nv];
            ValueSketch[] sketches = new ValueSketch[nv];
            for (int v = 0; v < nv; v++) {
                boolean finite = nonFinite[v][0] + nonFinite[v][1] + nonFinite[v][2] == 0;
                if (accumulators[v] != null && finite) {
                    // (a column with NaN or infinities has a known, non-finite sum and mean:
                    // nothing to plan)
                    moments[v] = accumulators[v].moments(units);
                }
                if (sketchValues[v] != null) {
                    sketches[v] =
                            ValueSketch.ofSample(
                                    sketchValues[v],
                                    sketchSizes[v],
                                    sketchCounts[v],
                                    ValueSketch.DEFAULT_POINTS);
                }
            }
            return new ShareStatistics(units, records, written, moments, nonFinite, sketches);
        }
    }

    /**
     * @return the share's NaN / +Infinity / -Infinity counts of value column v
     */
    long[] nonFinite(int v) {
        return nonFinite[v].clone();
    }

    /**
     * The census moments planning needs of one value column of a share - count, mean, variance
     * (denominator n - 1) and third central moment (denominator n) - updated per record as {@link
     * io.netapprox.core.sampling.StratumAccumulator#add(double)} updates them (Welford/Pebay, the
     * same operations in the same order, so {@link ShareMoments} come out bit for bit as {@link
     * ShareMoments#of} makes them), without what the map side never reads: the fourth-order and
     * record-count co-moments, the exact total (the exact partials have their own {@code ExactSum})
     * and the extremes. Every record goes through this on the map side.
     */
    static final class CensusMoments {
        private long n;
        private double mean;
        private double s20;
        private double s30;

        /** Adds one finite value. */
        void add(double x) {
            long nA = n;
            n = nA + 1;
            double dy = x - mean;
            double inv = 1.0 / n;
            double na = nA;
            double u = -dy * inv;
            double bu = dy + u;
            double uu = u * u;
            double bu2 = bu * bu;
            s30 += 3 * u * s20 + na * uu * u + bu2 * bu;
            s20 += na * uu + bu2;
            mean -= u;
        }

        long count() {
            return n;
        }

        ShareMoments moments(long units) {
            if (n == 0) {
                return new ShareMoments(units, 0, 0.0, 0.0, 0.0);
            }
            double variance = n < 2 ? 0.0 : Math.max(0.0, s20 / (n - 1));
            double third = n >= 3 ? (1.0 / n) * s30 : 0.0;
            return new ShareMoments(units, n, mean, variance, third);
        }
    }
}
