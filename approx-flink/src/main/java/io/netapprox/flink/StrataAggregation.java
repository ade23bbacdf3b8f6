package io.netapprox.flink;

import org.apache.flink.api.common.functions.AggregateFunction;

/** Collects a (window, group)'s stratum samples; {@link ApproxResults} turns them into answers. */
final class StrataAggregation<K>
        implements AggregateFunction<WindowShare<K>, StrataAccumulator<K>, StrataAccumulator<K>> {
    private static final long serialVersionUID = 1L;

    @Override
    public StrataAccumulator<K> createAccumulator() {
        return new StrataAccumulator<>();
    }

    @Override
    public StrataAccumulator<K> add(WindowShare<K> sample, StrataAccumulator<K> acc) {
        acc.strata.add(sample);
        return acc;
    }

    @Override
    public StrataAccumulator<K> getResult(StrataAccumulator<K> acc) {
        return acc;
    }

    @Override
    public StrataAccumulator<K> merge(StrataAccumulator<K> a, StrataAccumulator<K> b) {
        a.strata.addAll(b.strata);
        return a;
    }
}
