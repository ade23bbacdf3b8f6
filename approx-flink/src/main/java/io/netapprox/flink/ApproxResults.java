package io.netapprox.flink;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratifiedEstimator;
import io.netapprox.core.sampling.StratumSummary;
import io.netapprox.core.sampling.TopKAccumulator;
import io.netapprox.core.sampling.TopKResult;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * A (window, group)'s answers from its strata (one per sender and epoch), with approx-core's
 * estimators:
 *
 * <ul>
 *   <li>avg: the combined ratio estimator over the strata with inclusion weights {@code N_s/n_s}
 *       ({@link StratifiedEstimator#mean}, skewness-corrected t interval);
 *   <li>sum: that ratio times the group's record count M (known exactly from the manifests);
 *   <li>count: M, exact;
 *   <li>quantile: the hypergeometric order-statistic interval over the pooled sample;
 *   <li>top-k: per-key Horvitz-Thompson counts over the pooled messages.
 * </ul>
 *
 * A stratum of which nothing arrived (its epoch hit the deadline) leaves the estimate to the other
 * strata and makes the interval infinite: the answer is still produced, but promises nothing (when
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
        List<StratumSample<K>> strata = new ArrayList<>();
        for (StrataAccumulator<K> acc : in) {
            strata.addAll(acc.strata);
        }
        if (!strata.isEmpty()) {
            emit(group, ctx.window(), strata, out);
        }
    }

    void emit(K group, TimeWindow w, List<StratumSample<K>> strata, Collector<WindowEstimate> out) {
        double conf = spec.confidence();
        double eMax = spec.errorBound(group);
        long population = 0;
        long sampled = 0;
        long messages = 0;
        boolean missing = false;
        for (StratumSample<K> s : strata) {
            population += s.records;
            sampled += s.deliveredRecords;
            messages += s.messages;
            missing |= s.deliveredMessages == 0;
        }
        for (int i = 0; i < spec.aggregates().size(); i++) {
            Aggregate<T> a = spec.aggregates().get(i);
            int v = spec.valueIndex(i);
            switch (a.kind()) {
                case AVG, SUM -> {
                    List<StratumSummary> sums = new ArrayList<>();
                    for (StratumSample<K> s : strata) {
                        if (s.deliveredMessages > 0) {
                            sums.add(s.ratio[v].summarize(s.messages));
                        }
                    }
                    ApproxResult r =
                            sums.isEmpty() ? UNKNOWN : StratifiedEstimator.mean(sums, conf);
                    double scale = a.kind() == Aggregate.Kind.SUM ? population : 1.0;
                    out.collect(result(w, group, a, r, scale, missing, eMax, sampled, population));
                }
                case COUNT ->
                        out.collect(
                                result(
                                        w,
                                        group,
                                        a,
                                        new ApproxResult(
                                                population,
                                                population,
                                                population,
                                                conf,
                                                sampled,
                                                population),
                                        1.0,
                                        false,
                                        eMax,
                                        sampled,
                                        population));
                case QUANTILE -> {
                    QuantileAccumulator q = new QuantileAccumulator();
                    for (StratumSample<K> s : strata) {
                        q.merge(s.quantiles[v]);
                    }
                    ApproxResult r = q.count() == 0 ? UNKNOWN : q.quantile(a.q(), conf, population);
                    out.collect(result(w, group, a, r, 1.0, missing, eMax, sampled, population));
                }
                case TOPK -> {
                    TopKAccumulator<String> acc = new TopKAccumulator<>();
                    for (StratumSample<K> s : strata) {
                        acc.merge(s.topK);
                    }
                    if (acc.messageCount() == 0) {
                        break;
                    }
                    TopKResult<String> top = acc.topK(a.k(), conf, messages);
                    int rank = 1;
                    for (TopKResult.KeyCount<String> kc : top.top()) {
                        WindowEstimate e =
                                result(
                                        w,
                                        group,
                                        a,
                                        kc.count(),
                                        1.0,
                                        missing,
                                        eMax,
                                        sampled,
                                        population);
                        e.key = kc.key();
                        e.rank = rank++;
                        out.collect(e);
                    }
                }
            }
        }
    }

    /** Nothing of the group arrived (every stratum hit its deadline): no estimate, no bound. */
    private static final ApproxResult UNKNOWN = null;

    private WindowEstimate result(
            TimeWindow w,
            K group,
            Aggregate<T> a,
            ApproxResult r,
            double scale,
            boolean missing,
            double eMax,
            long sampled,
            long population) {
        WindowEstimate e = new WindowEstimate();
        e.windowStart = w.getStart();
        e.windowEnd = w.getEnd();
        e.group = String.valueOf(group);
        e.aggregate = a.label();
        boolean unbounded = missing || r == UNKNOWN;
        e.estimate = r == UNKNOWN ? Double.NaN : scale * r.mean();
        e.low = unbounded ? Double.NEGATIVE_INFINITY : scale * r.low();
        e.high = unbounded ? Double.POSITIVE_INFINITY : scale * r.high();
        e.confidence = spec.confidence();
        e.eMax = eMax;
        e.sampleRecords = sampled;
        e.populationRecords = population;
        e.approximate = true;
        return e;
    }
}
