package io.netapprox.flink;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sampling.ShareSample;
import java.io.Serializable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * A frozen approximate query: how records are stratified, the aggregates, the error bound of every
 * group (default and overrides) and the confidence. Built by {@link ApproxWindowedStream}; shared
 * by the exact and the approximate topology.
 */
public final class QuerySpec<T, K> implements Serializable {
    private static final long serialVersionUID = 1L;

    private final KeySelector<T, K> groupSelector;
    private final List<Aggregate<T>> aggregates;
    private final double defaultErrorBound;
    private final HashMap<K, Double> errorBounds;
    private final double confidence;

    /** Per value slot: the first aggregate reading it; per aggregate: its slot or -1. */
    private final int[] slots;

    private final int[] slotOf;

    QuerySpec(
            KeySelector<T, K> groupSelector,
            List<Aggregate<T>> aggregates,
            double defaultErrorBound,
            Map<K, Double> errorBounds,
            double confidence) {
        this.groupSelector = groupSelector;
        this.aggregates = List.copyOf(aggregates);
        this.defaultErrorBound = defaultErrorBound;
        this.errorBounds = new HashMap<>(errorBounds);
        this.confidence = confidence;
        this.slotOf = new int[this.aggregates.size()];
        List<String> names = new java.util.ArrayList<>();
        List<Integer> first = new java.util.ArrayList<>();
        for (int i = 0; i < this.aggregates.size(); i++) {
            Aggregate<T> a = this.aggregates.get(i);
            if (!a.readsValue()) {
                slotOf[i] = -1;
                continue;
            }
            int slot = names.indexOf(a.name());
            if (slot < 0) {
                slot = names.size();
                names.add(a.name());
                first.add(i);
            }
            slotOf[i] = slot;
        }
        this.slots = first.stream().mapToInt(Integer::intValue).toArray();
    }

    public KeySelector<T, K> groupSelector() {
        return groupSelector;
    }

    public List<Aggregate<T>> aggregates() {
        return aggregates;
    }

    /** e_max of {@code group}: its override, else the query's default. */
    public double errorBound(K group) {
        Double e = errorBounds.get(group);
        return e != null ? e : defaultErrorBound;
    }

    public double confidence() {
        return confidence;
    }

    /**
     * Number of values a record carries: one per distinct name among the aggregates that read a
     * value (avg, sum, quantile), so {@code avg("fare")} and {@code median("fare")} share one
     * value.
     */
    public int valueCount() {
        return slots.length;
    }

    /** Index of aggregate {@code i}'s value among the values a record carries, or -1. */
    public int valueIndex(int i) {
        return slotOf[i];
    }

    /** What each share of this query keeps per value column ({@link ShareSample}). */
    ShareSample.Columns shareColumns() {
        boolean[] totals = new boolean[valueCount()];
        boolean[] quantiles = new boolean[valueCount()];
        boolean topK = false;
        for (int i = 0; i < aggregates.size(); i++) {
            switch (aggregates.get(i).kind()) {
                case AVG, SUM -> totals[valueIndex(i)] = true;
                case QUANTILE -> quantiles[valueIndex(i)] = true;
                case TOPK -> topK = true;
                default -> {}
            }
        }
        return new ShareSample.Columns(totals, quantiles, topK);
    }

    /** The topK aggregate's key selector, or null (a query has at most one topK). */
    public KeySelector<T, String> topKeySelector() {
        for (Aggregate<T> a : aggregates) {
            if (a.kind() == AggregateKind.TOPK) {
                return a.keySelector();
            }
        }
        return null;
    }

    /** The values a record contributes, in {@link #valueIndex} order. */
    public double[] values(T record) throws Exception {
        double[] v = new double[slots.length];
        for (int s = 0; s < slots.length; s++) {
            v[s] = aggregates.get(slots[s]).valueSelector().value(record);
        }
        return v;
    }
}
