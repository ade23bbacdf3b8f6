package io.netapprox.core.sampling;

/**
 * What an aggregate of an approximate query computes, the same five in every integration (Spark's
 * builder and SQL, Flink's {@code Aggregate}): the mean, sum or count of the records, a quantile of
 * a value, or the most frequent keys.
 */
public enum AggregateKind {
    AVG,
    SUM,
    COUNT,
    QUANTILE,
    TOPK;

    /** True for the kinds that read a numeric value per record (avg, sum, quantile). */
    public boolean readsValue() {
        return this == AVG || this == SUM || this == QUANTILE;
    }
}
