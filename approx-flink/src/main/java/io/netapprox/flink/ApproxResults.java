package io.netapprox.flink;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratifiedEstimator;
import io.netapprox.core.sampling.StratifiedQuantile;
import io.netapprox.core.sampling.StratifiedTopK;
import io.netapprox.core.sampling.StratumSummary;
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
 *   <li>quantile: the weighted empirical quantile with each stratum's own inclusion weight and
 *       Woodruff's interval ({@link StratifiedQuantile}; one sampled stratum: the hypergeometric
 *       order-statistic interval);
 *   <li>top-k: per-key stratified Horvitz-Thompson counts ({@link StratifiedTopK}).
 * </ul>
 *
 * Every aggregate is estimated per stratum: a group's shares at the senders are sampled at
 * different fractions (a small share at a larger one), so pooling them as one sample would be
 * biased whenever the shares differ. NaN and infinite values count as records and give what Java's
 * double arithmetic gives over all the records ({@link NonFinite}).
 *
 * <p>A stratum of which nothing arrived (its epoch hit the deadline) leaves the estimate to the
 * other strata and makes the interval infinite: the answer is still produced, but promises nothing
 * (when nothing of the group arrived at all, the estimate is NaN).
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
        boolean missing = false;
        for (StratumSample<K> s : strata) {
            population += s.records;
            sampled += s.deliveredRecords;
            missing |= s.deliveredMessages == 0;
        }
        for (int i = 0; i < spec.aggregates().size(); i++) {
            Aggregate<T> a = spec.aggregates().get(i);
            int v = spec.valueIndex(i);
            switch (a.kind()) {
                case AVG, SUM -> {
                    ApproxResult known = nonFinite(strata, v, conf, sampled, population);
                    if (known != null) {
                        out.collect(
                                result(w, group, a, known, 1.0, false, eMax, sampled, population));
                        break;
                    }
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
                case QUANTILE -> quantile(group, w, a, strata, v, eMax, sampled, population, out);
                case TOPK -> topK(group, w, a, strata, missing, eMax, sampled, population, out);
            }
        }
    }

    /**
     * The known answer of an avg or sum over a value column with NaN or infinite values (counted by
     * the senders over every record), as Java's double arithmetic sums them: NaN for a NaN or for
     * both infinities, else the infinity; null when every value is finite.
     */
    private static <K> ApproxResult nonFinite(
            List<StratumSample<K>> strata, int v, double conf, long sampled, long population) {
        long nan = 0;
        long pos = 0;
        long neg = 0;
        for (StratumSample<K> s : strata) {
            nan += s.nonFinite.nan(v);
            pos += s.nonFinite.positive(v);
            neg += s.nonFinite.negative(v);
        }
        if (nan > 0 || (pos > 0 && neg > 0)) {
            return ApproxResult.undefined(conf, sampled, population);
        }
        if (pos > 0 || neg > 0) {
            double inf = pos > 0 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
            return new ApproxResult(inf, inf, inf, conf, sampled, population);
        }
        return null;
    }

    /**
     * The q-quantile ({@code ceil(q M)}-th smallest of the group's M values, NaN above every number
     * as {@code Arrays.sort} orders them) over the strata, each weighted by its own inclusion
     * fraction ({@link StratifiedQuantile}): the strata of one (window, group) are the senders'
     * shares (and epochs), sampled at different fractions, so pooling their samples as one would
     * over-represent the shares sampled at the larger fraction. A rank among the NaN values (known
     * by count) is NaN exactly; a stratum of which no number arrived leaves the estimate to the
     * others and the interval infinite.
     */
    private void quantile(
            K group,
            TimeWindow w,
            Aggregate<T> a,
            List<StratumSample<K>> strata,
            int v,
            double eMax,
            long sampled,
            long population,
            Collector<WindowEstimate> out) {
        double conf = spec.confidence();
        long nan = 0;
        for (StratumSample<K> s : strata) {
            nan += s.nonFinite.nan(v);
        }
        long rank = (long) Math.max(1, Math.ceil(a.q() * population - 1e-9));
        if (rank > population - nan) {
            out.collect(
                    result(
                            w,
                            group,
                            a,
                            ApproxResult.undefined(conf, sampled, population),
                            1.0,
                            false,
                            eMax,
                            sampled,
                            population));
            return;
        }
        StratifiedQuantile est = new StratifiedQuantile();
        long arrived = 0;
        boolean missing = false;
        for (StratumSample<K> s : strata) {
            QuantileAccumulator acc = s.quantiles[v];
            long numbers = s.records - s.nonFinite.nan(v);
            if (numbers > 0 && acc.count() == 0) {
                missing = true; // nothing (or only NaN) of this stratum arrived
                continue;
            }
            arrived += acc.count();
            est.addShare(acc, numbers);
        }
        ApproxResult r;
        if (arrived == 0) {
            r = UNKNOWN;
        } else if (missing) {
            // the point from the strata that arrived, at the same relative rank among their
            // numbers; no bound (result() makes the interval infinite)
            r = est.quantile(Math.min(1.0, (double) rank / (population - nan)), conf);
        } else {
            r = est.quantileAtRank(rank, conf);
        }
        out.collect(result(w, group, a, r, 1.0, missing, eMax, sampled, population));
    }

    /**
     * The top-k keys by record count over the strata, each key's count the stratified
     * Horvitz-Thompson total with each stratum's own inclusion weight {@code N_s/n_s} ({@link
     * StratifiedTopK}). A null key is a key of its own (answered with {@code key = null}), as a
     * plain Flink aggregation counting keys in a map would count it.
     */
    private void topK(
            K group,
            TimeWindow w,
            Aggregate<T> a,
            List<StratumSample<K>> strata,
            boolean missing,
            double eMax,
            long sampled,
            long population,
            Collector<WindowEstimate> out) {
        StratifiedTopK<String> est = new StratifiedTopK<>();
        boolean any = false;
        for (StratumSample<K> s : strata) {
            if (s.deliveredMessages > 0) {
                est.addShare(s.topK, s.messages);
                any = true;
            }
        }
        if (!any) {
            return;
        }
        TopKResult<String> top = est.topK(a.k(), spec.confidence());
        int rank = 1;
        for (TopKResult.KeyCount<String> kc : top.top()) {
            WindowEstimate e =
                    result(w, group, a, kc.count(), 1.0, missing, eMax, sampled, population);
            e.key = StratumSample.NULL_KEY.equals(kc.key()) ? null : kc.key();
            e.rank = rank++;
            out.collect(e);
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
