package io.netapprox.flink;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/** Turns one group's exact window state into answers with {@code approximate=false}. */
final class ExactResults<T, K>
        extends ProcessWindowFunction<ExactAccumulator, WindowEstimate, K, TimeWindow> {
    private static final long serialVersionUID = 1L;

    private final QuerySpec<T, K> spec;

    ExactResults(QuerySpec<T, K> spec) {
        this.spec = spec;
    }

    @Override
    public void process(
            K group, Context ctx, Iterable<ExactAccumulator> in, Collector<WindowEstimate> out) {
        for (ExactAccumulator acc : in) {
            emit(group, ctx.window(), acc, out);
        }
    }

    private void emit(K group, TimeWindow w, ExactAccumulator acc, Collector<WindowEstimate> out) {
        double eMax = spec.errorBound(group);
        long n = acc.count;
        for (int i = 0; i < spec.aggregates().size(); i++) {
            Aggregate<T> a = spec.aggregates().get(i);
            int v = spec.valueIndex(i);
            switch (a.kind()) {
                case AVG -> out.collect(exact(w, group, a, acc.sums[v] / n, eMax, n));
                case SUM -> out.collect(exact(w, group, a, acc.sums[v], eMax, n));
                case COUNT -> out.collect(exact(w, group, a, n, eMax, n));
                case QUANTILE -> {
                    double[] sorted = Arrays.copyOf(acc.values[v], acc.valueCounts[v]);
                    Arrays.sort(sorted); // NaN last, -0.0 before 0.0 (Double.compare)
                    // the ceil(q n)-th smallest, as the approximate topology ranks it
                    int rank = (int) Math.max(1, Math.ceil(a.q() * sorted.length - 1e-9));
                    out.collect(exact(w, group, a, sorted[rank - 1], eMax, n));
                }
                case TOPK -> {
                    List<Map.Entry<String, Long>> es = new ArrayList<>(acc.keyCounts.entrySet());
                    es.sort(BY_COUNT);
                    for (int r = 0; r < Math.min(a.k(), es.size()); r++) {
                        WindowEstimate e = exact(w, group, a, es.get(r).getValue(), eMax, n);
                        e.key = es.get(r).getKey();
                        e.rank = r + 1;
                        out.collect(e);
                    }
                }
            }
        }
    }

    /** By count descending, ties by key ascending (the null key first). */
    static final Comparator<Map.Entry<String, Long>> BY_COUNT =
            Comparator.<Map.Entry<String, Long>>comparingLong(e -> -e.getValue())
                    .thenComparing(
                            Map.Entry::getKey, Comparator.nullsFirst(Comparator.naturalOrder()));

    private WindowEstimate exact(
            TimeWindow w, K group, Aggregate<T> a, double value, double eMax, long n) {
        WindowEstimate e = new WindowEstimate();
        e.windowStart = w.getStart();
        e.windowEnd = w.getEnd();
        e.group = String.valueOf(group);
        e.aggregate = a.label();
        e.estimate = value;
        e.low = value;
        e.high = value;
        e.confidence = spec.confidence();
        e.eMax = eMax;
        e.sampleRecords = n;
        e.populationRecords = n;
        e.approximate = false;
        return e;
    }
}
