package io.netapprox.spark;

import io.netapprox.core.sampling.ExactSum;
import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratumAccumulator;
import io.netapprox.core.sampling.TopKAccumulator;
import java.io.DataInput;
import java.io.IOException;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What a reducer of an approximate shuffle took from one map output for one group - a stratum - as
 * accumulators, never the records: the delivered messages are a simple random sample (without
 * replacement) of the stratum's {@code population} (N_g) messages: the map side wrote a uniform
 * pre-sample of the share's records (all of them for a small share; then {@code messages ==
 * population}), permuted, in {@code messages} messages; ATP's losses do not depend on content, and
 * a simple random sample of a simple random sample is one of the whole. The reducer stops at {@code
 * target = min(messages, ceil(msr * population))} of them. {@code records} and the non-finite
 * counts are the stratum's exact numbers from the map side's group table.
 *
 * <p>Per value column, as the query's aggregates need: a {@link StratumAccumulator} of the
 * messages' totals (averages, sums), an {@link ExactSum} when the stratum is taken whole, the
 * sampled values of a quantile column - at most {@link #QUANTILE_VALUES} of them, a uniform
 * subsample (reservoir) beyond, so that the interval, computed from what is kept, accounts for it -
 * and a {@link TopKAccumulator} of the top-k column.
 */
public final class StratumSample implements Serializable {
    private static final long serialVersionUID = 4L;

    /** Sampled values kept per quantile column and stratum (8 bytes each). */
    static final int QUANTILE_VALUES = 1 << 18;

    public final String group;
    public final int mapIndex;
    public final int messages;

    /** N_g: the share's messages, were every record written (the estimators' population). */
    public final long population;

    public final long records;
    public final double msr;
    public final double errorBound;

    /** Messages the reducer takes: {@code min(messages, ceil(msr * population))}. */
    public final int target;

    /** True when the plan asked more messages than the map output's pre-sample holds. */
    public final boolean shortOfPlan;

    /**
     * Per value column of the stratum (all its records, not only the delivered ones): NaN, +Inf,
     * -Inf counts.
     */
    final long[] nonFinite;

    /**
     * Per value column: the share's exact partial from the group table (the exact sum of its finite
     * values over every record), or null where none came.
     */
    final ExactSum[] partials;

    private final int numValues;
    private final boolean withKey;
    private int delivered;
    private long sampledRecords;
    private long keyBytes; // the delivered records' keys as encoded (top-k)
    final StratumAccumulator[] totals;
    final ExactSum[] exact;
    private final double[][] quantileValues;
    private final int[] quantileKept;
    private final long[] quantileSeen;
    private long quantileDropped;
    final TopKAccumulator<String> topK;
    private final SplittableRandom rnd;

    StratumSample(
            ApproxSpec spec,
            MapOutputFormat.Group g,
            int mapIndex,
            int numValues,
            boolean withKey) {
        this.group = g.key();
        this.mapIndex = mapIndex;
        this.messages = g.messages();
        this.population = g.population();
        this.records = g.records();
        this.msr = g.msr();
        this.errorBound = g.errorBound();
        this.nonFinite = g.nonFinite();
        this.partials = g.partials();
        this.target = g.target();
        this.shortOfPlan = g.shortOfPlan();
        this.numValues = numValues;
        this.withKey = withKey;
        this.totals = new StratumAccumulator[numValues];
        this.exact = new ExactSum[numValues];
        this.quantileValues = new double[numValues][];
        this.quantileKept = new int[numValues];
        this.quantileSeen = new long[numValues];
        TopKAccumulator<String> top = null;
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            int v = a.valueIndex();
            switch (a.kind()) {
                case AVG, SUM -> {
                    if (v < numValues && totals[v] == null) {
                        totals[v] = new StratumAccumulator();
                        if (target == population) {
                            exact[v] = new ExactSum();
                        }
                    }
                }
                case QUANTILE -> {
                    if (v < numValues && quantileValues[v] == null) {
                        quantileValues[v] = new double[16];
                    }
                }
                case TOPK -> top = withKey ? new TopKAccumulator<>() : null;
                default -> {}
            }
        }
        this.topK = top;
        this.rnd = new SplittableRandom(spec.seed() ^ (31L * mapIndex + group.hashCode()));
    }

    /** Adds one delivered message (read from {@code in}: {@code int records}, then the records). */
    void addMessage(DataInput in) throws IOException {
        double[] sums = new double[numValues];
        Map<String, Long> keys = topK != null ? new HashMap<>() : null;
        int n =
                MapOutputFormat.readMessage(
                        in,
                        numValues,
                        withKey,
                        row -> {
                            for (int v = 0; v < numValues; v++) {
                                double x = row.values[v];
                                if (totals[v] != null) {
                                    sums[v] += x;
                                    if (exact[v] != null) {
                                        exact[v].add(x);
                                    }
                                }
                                if (quantileValues[v] != null && !Double.isNaN(x)) {
                                    keep(v, x);
                                }
                            }
                            if (keys != null) {
                                keys.merge(row.key == null ? "" : row.key, 1L, Long::sum);
                            }
                            if (withKey) {
                                keyBytes += encodedLength(row.key);
                            }
                        });
        for (int v = 0; v < numValues; v++) {
            // a column with NaN or infinities has a known result (the group tables count them)
            if (totals[v] != null && Double.isFinite(sums[v])) {
                totals[v].add(sums[v], n);
            }
        }
        if (keys != null) {
            topK.addMessage(keys);
        }
        delivered++;
        sampledRecords += n;
    }

    private void keep(int v, double x) {
        long seen = ++quantileSeen[v];
        if (quantileKept[v] < QUANTILE_VALUES) {
            if (quantileKept[v] == quantileValues[v].length) {
                quantileValues[v] =
                        java.util.Arrays.copyOf(
                                quantileValues[v],
                                Math.min(QUANTILE_VALUES, 2 * quantileValues[v].length));
            }
            quantileValues[v][quantileKept[v]++] = x;
            return;
        }
        // reservoir: every value seen so far is kept with probability QUANTILE_VALUES / seen
        quantileDropped++;
        long j = rnd.nextLong(seen);
        if (j < QUANTILE_VALUES) {
            quantileValues[v][(int) j] = x;
        }
    }

    /** Messages taken (delivered and used). */
    public int deliveredMessages() {
        return delivered;
    }

    /** Records in the messages taken. */
    public long sampledRecords() {
        return sampledRecords;
    }

    /**
     * Bytes an exact shuffle would write of this share in this encoding: every one of its {@code
     * records} (the census), framed as {@code population} messages; with top-k keys, each key at
     * the delivered records' mean encoded length (2 bytes, an empty key's, when none arrived).
     */
    public long exactBytes() {
        double perKey = 0;
        if (withKey) {
            perKey = sampledRecords > 0 ? (double) keyBytes / sampledRecords : 2;
        }
        return Integer.BYTES * population
                + records * (long) Double.BYTES * numValues
                + Math.round(records * perKey);
    }

    /** {@link java.io.DataOutputStream#writeUTF}'s length of a key (null is written as ""). */
    static int encodedLength(String key) {
        int n = 2;
        if (key != null) {
            for (int i = 0; i < key.length(); i++) {
                char c = key.charAt(i);
                n += c >= 0x0001 && c <= 0x007F ? 1 : c <= 0x07FF ? 2 : 3;
            }
        }
        return n;
    }

    /** True when every record of the stratum was taken (every message, no pre-sample). */
    public boolean isComplete() {
        return delivered == population;
    }

    /** The kept sampled values of quantile column v (a uniform subsample beyond the cap). */
    QuantileAccumulator quantileSample(int v) {
        QuantileAccumulator acc = new QuantileAccumulator();
        for (int i = 0; i < quantileKept[v]; i++) {
            acc.add(quantileValues[v][i]);
        }
        return acc;
    }

    /** Sampled quantile values not kept (beyond {@link #QUANTILE_VALUES}). */
    long quantileValuesDropped() {
        return quantileDropped;
    }

    /**
     * @return how many of the stratum's values of column v are NaN, +Infinity, -Infinity
     */
    long[] nonFinite(int v) {
        if (nonFinite == null || nonFinite.length < 3 * (v + 1)) {
            return new long[3];
        }
        return new long[] {nonFinite[3 * v], nonFinite[3 * v + 1], nonFinite[3 * v + 2]};
    }

    @Override
    public String toString() {
        return "StratumSample{"
                + group
                + ", map "
                + mapIndex
                + ", "
                + delivered
                + "/"
                + messages
                + " messages of "
                + population
                + " (target "
                + target
                + "), msr "
                + msr
                + "}";
    }
}
