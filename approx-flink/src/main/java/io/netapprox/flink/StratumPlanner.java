package io.netapprox.flink;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sampling.AggregatePlanner;
import io.netapprox.core.sampling.ShareMoments;
import io.netapprox.core.sampling.SharePlanner;
import io.netapprox.core.sampling.StratumAccumulator;
import io.netapprox.core.sampling.ValueSketch;
import java.util.ArrayList;
import java.util.List;

/**
 * The MSR of one stratum (one sender's share of a (window, group) in one epoch) from its records:
 * approx-core's {@link AggregatePlanner} over the query's aggregates, the stratum being the group's
 * one share as this sender sees it (its records are in random order, so its messages are a simple
 * random sample of them). Quantiles are planned at the rank the answer reads ({@code ceil(q n)},
 * NaN values sorting last); a column with a NaN or an infinity needs no sample for its sum or mean
 * (the answer is known exactly from the counts, {@link NonFinite}). {@code scale} widens the bound
 * for {@code approx.planning=balanced} ({@code sqrt(P)}; 1 for the default, conservative, see
 * docs/flink.md).
 */
final class StratumPlanner {
    private StratumPlanner() {}

    /** The query's aggregates as the planner reads them (not serializable: build per task). */
    static List<AggregatePlanner.Aggregate> aggregates(QuerySpec<?, ?> spec) {
        List<AggregatePlanner.Aggregate> out = new ArrayList<>();
        for (int i = 0; i < spec.aggregates().size(); i++) {
            Aggregate<?> a = spec.aggregates().get(i);
            double q = a.kind() == AggregateKind.QUANTILE ? a.q() : Double.NaN;
            out.add(
                    new AggregatePlanner.Aggregate(
                            a.kind(),
                            spec.valueIndex(i),
                            a.kind() == AggregateKind.QUANTILE
                                    ? n -> new long[] {(long) Math.max(1, Math.ceil(q * n - 1e-9))}
                                    : null));
        }
        return out;
    }

    static double msr(
            StratumBuffer buf,
            int messages,
            List<AggregatePlanner.Aggregate> aggregates,
            double eMax,
            double confidence,
            double scale) {
        if (messages <= 1) {
            return 1.0;
        }
        SharePlanner planner = SharePlanner.of(Math.min(0.99, eMax * scale), confidence);
        return Math.min(
                1.0,
                AggregatePlanner.plan(planner, aggregates, false, new Stratum(buf, messages))
                        .rate(0));
    }

    /** The stratum as the planner's one share. */
    private record Stratum(StratumBuffer buf, int messages) implements AggregatePlanner.Shares {
        @Override
        public long[] units() {
            return new long[] {messages};
        }

        @Override
        public long records() {
            return buf.records();
        }

        @Override
        public List<ShareMoments> moments(int v) {
            NonFinite nf = buf.nonFinite();
            if (nf.nan(v) + nf.positive(v) + nf.negative(v) > 0) {
                return null; // the answer is NaN or an infinity, exactly
            }
            StratumAccumulator acc = new StratumAccumulator();
            for (int r = 0; r < buf.records(); r++) {
                acc.add(buf.value(r, v));
            }
            return List.of(ShareMoments.of(acc, messages));
        }

        @Override
        public List<ValueSketch> sketches(int v) {
            double[] values = new double[buf.records()];
            int n = 0;
            for (int r = 0; r < buf.records(); r++) {
                double x = buf.value(r, v);
                if (!Double.isNaN(x)) {
                    values[n++] = x;
                }
            }
            return List.of(ValueSketch.of(values, n, ValueSketch.DEFAULT_POINTS));
        }

        @Override
        public long nan(int v) {
            return buf.nonFinite().nan(v);
        }
    }
}
