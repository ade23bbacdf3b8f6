package io.netapprox.flink;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.GroupEstimator;
import io.netapprox.core.sampling.ShareSample;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * A (window, group)'s answers from its shares (one per sender and epoch), by approx-core's {@link
 * GroupEstimator}: every aggregate estimated per share, each with its own inclusion weight; count
 * exact; NaN and infinite values as Java's double arithmetic gives them over all the records
 * ({@link NonFinite}). The quantile is the {@code ceil(q M)}-th smallest of the group's M values
 * (NaN above every number, as {@code Arrays.sort} orders them); a null top-k key is a key of its
 * own (answered with {@code key = null}), as a plain Flink aggregation counting keys in a map would
 * count it.
 *
 * <p>A share of which nothing arrived (its epoch hit the deadline) leaves the estimate to the other
 * shares and makes the interval infinite: the answer is still produced, but promises nothing (when
 * nothing of the group arrived at all, the estimate is NaN).
 */
final class ApproxResults<T, K>
        extends ProcessWindowFunction<StrataAccumulator<K>, WindowEstimate, K, TimeWindow> {
    private static final long serialVersionUID = 1L;

    private final QuerySpec<T, K> spec;

    ApproxResults(QuerySpec<T, K> spec) {
        this.spec = spec;
    }

    @Override
    public void process(
            K group,
            Context ctx,
            Iterable<StrataAccumulator<K>> in,
            Collector<WindowEstimate> out) {
        List<WindowShare<K>> strata = new ArrayList<>();
        for (StrataAccumulator<K> acc : in) {
            strata.addAll(acc.strata);
        }
        if (!strata.isEmpty()) {
            emit(group, ctx.window(), strata, out);
        }
    }

    void emit(K group, TimeWindow w, List<WindowShare<K>> strata, Collector<WindowEstimate> out) {
        List<ShareSample> shares = new ArrayList<>();
        for (WindowShare<K> s : strata) {
            shares.add(s.share);
        }
        GroupEstimator est = new GroupEstimator(shares, spec.confidence(), false);
        double eMax = spec.errorBound(group);
        for (int i = 0; i < spec.aggregates().size(); i++) {
            Aggregate<T> a = spec.aggregates().get(i);
            int v = spec.valueIndex(i);
            switch (a.kind()) {
                case AVG -> out.collect(result(w, group, a, est.mean(v), eMax, est));
                case SUM -> out.collect(result(w, group, a, est.sum(v), eMax, est));
                case COUNT -> out.collect(result(w, group, a, est.count(), eMax, est));
                case QUANTILE -> {
                    long rank = (long) Math.max(1, Math.ceil(a.q() * est.records() - 1e-9));
                    out.collect(
                            result(
                                    w,
                                    group,
                                    a,
                                    est.quantile(v, rank, rank, (x, y) -> x),
                                    eMax,
                                    est));
                }
                case TOPK -> {
                    List<GroupEstimator.KeyEstimate> top = est.topK(a.k());
                    int rank = 1;
                    for (GroupEstimator.KeyEstimate ke :
                            top == null ? List.<GroupEstimator.KeyEstimate>of() : top) {
                        WindowEstimate e = result(w, group, a, ke.count(), eMax, est);
                        e.key = ke.key();
                        e.rank = rank++;
                        out.collect(e);
                    }
                }
            }
        }
    }

    /** {@code r} null: nothing of the group arrived, no estimate and no bound. */
    private WindowEstimate result(
            TimeWindow w,
            K group,
            Aggregate<T> a,
            ApproxResult r,
            double eMax,
            GroupEstimator est) {
        WindowEstimate e = new WindowEstimate();
        e.windowStart = w.getStart();
        e.windowEnd = w.getEnd();
        e.group = String.valueOf(group);
        e.aggregate = a.label();
        e.estimate = r == null ? Double.NaN : r.mean();
        e.low = r == null ? Double.NEGATIVE_INFINITY : r.low();
        e.high = r == null ? Double.POSITIVE_INFINITY : r.high();
        e.confidence = spec.confidence();
        e.eMax = eMax;
        e.sampleRecords = est.sampledRecords();
        e.populationRecords = est.records();
        e.approximate = true;
        return e;
    }
}
