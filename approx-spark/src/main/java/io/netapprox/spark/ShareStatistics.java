package io.netapprox.spark;

import io.netapprox.core.sampling.ShareMoments;
import io.netapprox.core.sampling.SharePlanner;
import io.netapprox.core.sampling.StratumAccumulator;
import io.netapprox.core.sampling.ValueSketch;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What planning needs to know about one share of a group (the group's records in one map output), computed from
 * the records themselves: per value column the census moments of its finite values ({@link ShareMoments}) and its
 * NaN / +Infinity / -Infinity counts, a {@link ValueSketch} of the columns a quantile is asked of, and for top-k the
 * most frequent keys with their counts. Built by the statistics pass of {@link ApproxQuery} for every (map output,
 * group), or by the writer for its own share ({@code spark.approx.planning=local}).
 */
final class ShareStatistics implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Keys kept per share for top-k planning: at least this many, and 4k. */
    static final int MIN_KEYS_KEPT = 64;

    final long units;
    final long records;
    /** Per value column (null where no aggregate needs the moments, or the column has non-finite values). */
    final ShareMoments[] moments;
    /** Per value column: NaN, +Infinity, -Infinity counts. */
    final long[][] nonFinite;
    /** Per value column (null where no quantile is asked). */
    final ValueSketch[] sketches;
    /** Top-k key counts (null without a top-k aggregate). */
    final SharePlanner.KeyCounts<String> keys;

    private ShareStatistics(long units, long records, ShareMoments[] moments, long[][] nonFinite,
                            ValueSketch[] sketches, SharePlanner.KeyCounts<String> keys) {
        this.units = units;
        this.records = records;
        this.moments = moments;
        this.nonFinite = nonFinite;
        this.sketches = sketches;
        this.keys = keys;
    }

    /** Accumulates one share's records. */
    static final class Builder {
        private final ApproxSpec spec;
        private final int recordsPerMessage;
        private final StratumAccumulator[] accumulators;
        private final long[][] nonFinite;
        private final double[][] sketchValues;
        private final int[] sketchSizes;
        private final Map<String, Long> keyCounts;
        private long records;

        Builder(ApproxSpec spec, int recordsPerMessage) {
            this.spec = spec;
            this.recordsPerMessage = recordsPerMessage;
            int nv = spec.numValues();
            accumulators = new StratumAccumulator[nv];
            nonFinite = new long[nv][3];
            sketchValues = new double[nv][];
            sketchSizes = new int[nv];
            boolean topK = false;
            for (ApproxSpec.Aggregate a : spec.aggregates()) {
                switch (a.kind()) {
                    case AVG, SUM -> accumulators[a.valueIndex()] = new StratumAccumulator();
                    case QUANTILE -> sketchValues[a.valueIndex()] = new double[16];
                    case TOPK -> topK = true;
                    default -> {
                    }
                }
            }
            keyCounts = topK ? new HashMap<>() : null;
        }

        Builder add(ApproxRow row) {
            records++;
            for (int v = 0; v < row.values.length; v++) {
                double x = row.values[v];
                if (Double.isNaN(x)) {
                    nonFinite[v][0]++;
                    continue;
                }
                if (Double.isInfinite(x)) {
                    nonFinite[v][x > 0 ? 1 : 2]++;
                } else if (accumulators[v] != null) {
                    accumulators[v].add(x);
                }
                if (sketchValues[v] != null) {
                    if (sketchSizes[v] == sketchValues[v].length) {
                        sketchValues[v] = java.util.Arrays.copyOf(sketchValues[v], sketchSizes[v] * 2);
                    }
                    sketchValues[v][sketchSizes[v]++] = x;
                }
            }
            if (keyCounts != null) {
                keyCounts.merge(row.key == null ? "" : row.key, 1L, Long::sum);
            }
            return this;
        }

        ShareStatistics build() {
            long units = (records + recordsPerMessage - 1) / recordsPerMessage;
            int nv = accumulators.length;
            ShareMoments[] moments = new ShareMoments[nv];
            ValueSketch[] sketches = new ValueSketch[nv];
            for (int v = 0; v < nv; v++) {
                boolean finite = nonFinite[v][0] + nonFinite[v][1] + nonFinite[v][2] == 0;
                if (accumulators[v] != null && finite) {
                    // (a column with NaN or infinities has a known, non-finite sum and mean: nothing to plan)
                    moments[v] = ShareMoments.of(accumulators[v], units);
                }
                if (sketchValues[v] != null) {
                    sketches[v] = ValueSketch.of(sketchValues[v], sketchSizes[v], ValueSketch.DEFAULT_POINTS);
                }
            }
            SharePlanner.KeyCounts<String> keys = null;
            if (keyCounts != null) {
                int k = 0;
                for (ApproxSpec.Aggregate a : spec.aggregates()) {
                    if (a.kind() == ApproxSpec.Kind.TOPK) {
                        k = Math.max(k, a.k());
                    }
                }
                keys = truncated(keyCounts, Math.max(MIN_KEYS_KEPT, 4 * k), units, records);
            }
            return new ShareStatistics(units, records, moments, nonFinite, sketches, keys);
        }
    }

    /** The most frequent {@code keep} keys, and the largest count left out. */
    private static SharePlanner.KeyCounts<String> truncated(Map<String, Long> counts, int keep, long units,
                                                           long records) {
        if (counts.size() <= keep) {
            return new SharePlanner.KeyCounts<>(units, records, counts, 0);
        }
        List<Map.Entry<String, Long>> all = new ArrayList<>(counts.entrySet());
        all.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        Map<String, Long> kept = new HashMap<>();
        for (Map.Entry<String, Long> e : all.subList(0, keep)) {
            kept.put(e.getKey(), e.getValue());
        }
        return new SharePlanner.KeyCounts<>(units, records, kept, all.get(keep).getValue());
    }

    /** @return the share's NaN / +Infinity / -Infinity counts of value column v */
    long[] nonFinite(int v) {
        return nonFinite[v].clone();
    }
}
