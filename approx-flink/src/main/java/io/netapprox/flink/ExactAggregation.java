package io.netapprox.flink;

import io.netapprox.core.sampling.AggregateKind;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * The exact window aggregation (flag off): {@code keyBy(group).window(assigner).aggregate(this, new
 * ExactResults(..))} is the plain Flink topology an approximate query replaces. Every record
 * counts; NaN and infinite values go into the sums as Java's double arithmetic adds them (a NaN
 * makes the sum NaN), and a null top-k key is a key of its own, as in the approximate topology.
 */
final class ExactAggregation<T, K>
        implements AggregateFunction<T, ExactAccumulator, ExactAccumulator> {
    private static final long serialVersionUID = 1L;

    private final QuerySpec<T, K> spec;
    private final boolean[] keepValues;
    private final KeySelector<T, String> topKey;

    ExactAggregation(QuerySpec<T, K> spec) {
        this.spec = spec;
        this.keepValues = new boolean[spec.valueCount()];
        for (int i = 0; i < spec.aggregates().size(); i++) {
            if (spec.aggregates().get(i).kind() == AggregateKind.QUANTILE) {
                keepValues[spec.valueIndex(i)] = true;
            }
        }
        this.topKey = spec.topKeySelector();
    }

    @Override
    public ExactAccumulator createAccumulator() {
        return ExactAccumulator.create(keepValues.length, keepValues, topKey != null);
    }

    @Override
    public ExactAccumulator add(T record, ExactAccumulator acc) {
        try {
            double[] v = spec.values(record);
            acc.add(v, keepValues, topKey == null ? null : topKey.getKey(record));
            return acc;
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("NetApprox: a value or key selector failed", e);
        }
    }

    @Override
    public ExactAccumulator getResult(ExactAccumulator acc) {
        return acc;
    }

    @Override
    public ExactAccumulator merge(ExactAccumulator a, ExactAccumulator b) {
        a.merge(b);
        return a;
    }
}
