package io.netapprox.flink;

import io.netapprox.core.sampling.AggregateKind;
import java.io.Serializable;
import java.util.Objects;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * One aggregate of an approximate query: {@link #avg}, {@link #sum}, {@link #count}, {@link
 * #quantile} (and {@link #median}) of a value, or the {@link #topK} most frequent keys. Its {@link
 * #label()} names it in every result, e.g. {@code avg(fare)}, {@code count}, {@code
 * quantile(fare,0.9)}, {@code top5(dropoff)}. The name names the value: aggregates with the same
 * name read it once (their selectors must agree), so {@code avg("fare", ..)} and {@code
 * median("fare", ..)} send one number per record.
 */
public final class Aggregate<T> implements Serializable {
    private static final long serialVersionUID = 1L;

    private final AggregateKind kind;
    private final String name;
    private final ValueSelector<T> value;
    private final KeySelector<T, String> key;
    private final double q;
    private final int k;

    private Aggregate(
            AggregateKind kind,
            String name,
            ValueSelector<T> value,
            KeySelector<T, String> key,
            double q,
            int k) {
        this.kind = kind;
        this.name = name;
        this.value = value;
        this.key = key;
        this.q = q;
        this.k = k;
    }

    /** Mean of {@code value} per record. */
    public static <T> Aggregate<T> avg(String name, ValueSelector<T> value) {
        return new Aggregate<>(
                AggregateKind.AVG, checkName(name), Objects.requireNonNull(value), null, 0, 0);
    }

    /** Sum of {@code value}. */
    public static <T> Aggregate<T> sum(String name, ValueSelector<T> value) {
        return new Aggregate<>(
                AggregateKind.SUM, checkName(name), Objects.requireNonNull(value), null, 0, 0);
    }

    /** Number of records (exact in approximate mode too: senders count every record). */
    public static <T> Aggregate<T> count() {
        return new Aggregate<>(AggregateKind.COUNT, "count", null, null, 0, 0);
    }

    /** The {@code q}-quantile of {@code value} (the {@code ceil(q n)}-th smallest), q in (0, 1). */
    public static <T> Aggregate<T> quantile(String name, double q, ValueSelector<T> value) {
        if (!(q > 0 && q < 1)) {
            throw new IllegalArgumentException("quantile q must be in (0, 1), got " + q);
        }
        return new Aggregate<>(
                AggregateKind.QUANTILE, checkName(name), Objects.requireNonNull(value), null, q, 0);
    }

    /** The median of {@code value}. */
    public static <T> Aggregate<T> median(String name, ValueSelector<T> value) {
        return quantile(name, 0.5, value);
    }

    /**
     * The {@code k} most frequent keys, with their estimated record counts (one result per rank).
     */
    public static <T> Aggregate<T> topK(String name, int k, KeySelector<T, String> key) {
        if (k < 1 || k > 10_000) {
            throw new IllegalArgumentException("topK k must be in [1, 10000], got " + k);
        }
        return new Aggregate<>(
                AggregateKind.TOPK, checkName(name), null, Objects.requireNonNull(key), 0, k);
    }

    private static String checkName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException(
                    "an aggregate needs a name, e.g. avg(\"fare\", ...)");
        }
        return name;
    }

    public AggregateKind kind() {
        return kind;
    }

    public String name() {
        return name;
    }

    /** The value this aggregate reads, or null for count and topK. */
    public ValueSelector<T> valueSelector() {
        return value;
    }

    /** The key topK counts, or null. */
    public KeySelector<T, String> keySelector() {
        return key;
    }

    public double q() {
        return q;
    }

    public int k() {
        return k;
    }

    /** True for the aggregates that read a value (avg, sum, quantile). */
    public boolean readsValue() {
        return value != null;
    }

    /** The name results carry in their {@code aggregate} field. */
    public String label() {
        return switch (kind) {
            case AVG -> "avg(" + name + ")";
            case SUM -> "sum(" + name + ")";
            case COUNT -> "count";
            case QUANTILE -> q == 0.5 ? "median(" + name + ")" : "quantile(" + name + "," + q + ")";
            case TOPK -> "top" + k + "(" + name + ")";
        };
    }

    @Override
    public String toString() {
        return label();
    }
}
