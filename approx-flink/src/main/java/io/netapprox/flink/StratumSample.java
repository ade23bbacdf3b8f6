package io.netapprox.flink;

import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratumAccumulator;
import io.netapprox.core.sampling.TopKAccumulator;
import io.netty.buffer.ByteBuf;
import java.util.HashMap;
import java.util.Map;

/**
 * What a receiver hands the window operator for one stratum (one sender's share of a (window,
 * group) in one epoch): the stratum's size from the manifest (N messages, M records, MSR) and what
 * arrived of it, already accumulated per aggregate: per message {@code (y_i, m_i)} for means and
 * sums, the values for quantiles, the per-message key counts for top-k. The window's estimates
 * weight each stratum by {@code N/n} ({@link ApproxResults}).
 */
final class StratumSample<K> {
    K group;
    long windowStart;
    long windowEnd;
    int messages;
    long records;
    double msr;
    int target;
    int deliveredMessages;
    long deliveredRecords;

    /** NaN and infinite values among the stratum's records (all of them, from the manifest). */
    NonFinite nonFinite = NonFinite.NONE;

    /** Per value index: (message total, message records) of the delivered messages, or null. */
    StratumAccumulator[] ratio;

    /**
     * Per value index: the delivered values other than NaN (quantile aggregates only), or null. The
     * NaN values are known by count ({@link #nonFinite}); the numbers among a random sample of the
     * records are a random sample of the stratum's numbers.
     */
    QuantileAccumulator[] quantiles;

    /**
     * Per-message key counts (top-k queries only), or null; a null key is counted as {@link
     * #NULL_KEY}.
     */
    TopKAccumulator<String> topK;

    /**
     * Stands for the null top-k key in {@link #topK} (which takes no null): a lone surrogate, which
     * no decoded key can be (UTF-8 decoding never yields one, and encoding turns one into '?').
     */
    static final String NULL_KEY = "\uD800";

    StratumSample() {} // Kryo

    StratumSample(
            StratumInfo<K> info, boolean[] ratioValues, boolean[] quantileValues, boolean topK) {
        this.group = info.group();
        this.windowStart = info.windowStart();
        this.windowEnd = info.windowEnd();
        this.messages = info.messages();
        this.records = info.records();
        this.msr = info.msr();
        this.target = info.target();
        this.nonFinite = info.nonFinite();
        this.ratio = new StratumAccumulator[ratioValues.length];
        this.quantiles = new QuantileAccumulator[quantileValues.length];
        for (int v = 0; v < ratioValues.length; v++) {
            ratio[v] = ratioValues[v] ? new StratumAccumulator() : null;
            quantiles[v] = quantileValues[v] ? new QuantileAccumulator() : null;
        }
        this.topK = topK ? new TopKAccumulator<>() : null;
    }

    /**
     * Adds one delivered message.
     *
     * @throws IllegalArgumentException the bytes are not a well-formed message of this query
     */
    void addMessage(ByteBuf content) {
        int width = ratio.length;
        double[] totals = new double[width];
        Map<String, Long> keys = topK == null ? null : new HashMap<>();
        int n =
                MessageCodec.decode(
                        content,
                        width,
                        values -> {
                            for (int v = 0; v < width; v++) {
                                if (Double.isFinite(values[v])) {
                                    // a column with a non-finite value has its answer from the
                                    // counts (NonFinite); its ratio sums are then not used
                                    totals[v] += values[v];
                                }
                                if (quantiles[v] != null && !Double.isNaN(values[v])) {
                                    quantiles[v].add(values[v]);
                                }
                            }
                        },
                        keys == null
                                ? null
                                : (key, records) ->
                                        keys.merge(
                                                key == null ? NULL_KEY : key,
                                                (long) records,
                                                Long::sum));
        for (int v = 0; v < width; v++) {
            if (ratio[v] != null) {
                ratio[v].add(totals[v], n);
            }
        }
        if (topK != null) {
            topK.addMessage(keys);
        }
        deliveredMessages++;
        deliveredRecords += n;
    }

    boolean belowTarget() {
        return deliveredMessages < target;
    }

    boolean complete() {
        return deliveredMessages == messages;
    }
}
