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

    /** Per value index: (message total, message records) of the delivered messages, or null. */
    StratumAccumulator[] ratio;

    /** Per value index: the delivered values (quantile aggregates only), or null. */
    QuantileAccumulator[] quantiles;

    /** Per-message key counts (top-k queries only), or null. */
    TopKAccumulator<String> topK;

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
                                totals[v] += values[v];
                                if (quantiles[v] != null) {
                                    quantiles[v].add(values[v]);
                                }
                            }
                        },
                        keys == null
                                ? null
                                : (key, records) -> keys.merge(key, (long) records, Long::sum));
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
