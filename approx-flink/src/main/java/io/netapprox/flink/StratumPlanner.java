package io.netapprox.flink;

import io.netapprox.core.sampling.AggregatePlanner;
import io.netapprox.core.sampling.SharePlanner;
import io.netapprox.core.sampling.StratumAccumulator;
import java.util.ArrayList;
import java.util.List;

/**
 * The MSR of one stratum (one sender's share of a (window, group) in one epoch): approx-core's
 * {@link AggregatePlanner} over the query's aggregates, the stratum being the group's one share as
 * this sender sees it, with the statistics of its messages. Sums are planned on the message totals
 * {@code y_i}, means (and quantiles, as a proxy) on the ratio-estimator residuals {@code y_i - R
 * m_i} (with Cochran's rule on their skewness); counts are exact from the manifest and top-k takes
 * what the others need. Only finite values are planned for (a column without any needs only the
 * minimum, {@link NonFinite}). {@code scale} widens the bound for {@code approx.planning=balanced}
 * ({@code sqrt(P)}; 1 for the default, conservative, see docs/flink.md).
 */
final class StratumPlanner {
    private StratumPlanner() {}

    static double msr(
            StratumBuffer buf,
            int messages,
            QuerySpec<?, ?> spec,
            double eMax,
            double confidence,
            double scale) {
        if (messages <= 1) {
            return 1.0;
        }
        SharePlanner planner = SharePlanner.of(Math.min(0.99, eMax * scale), confidence);
        List<AggregatePlanner.Statistic> statistics = new ArrayList<>();
        for (int i = 0; i < spec.aggregates().size(); i++) {
            Aggregate<?> a = spec.aggregates().get(i);
            int v = spec.valueIndex(i);
            statistics.add(
                    switch (a.kind()) {
                        case SUM -> totals(buf, messages, v, scale, false);
                        case AVG -> totals(buf, messages, v, scale, true);
                        case QUANTILE -> quantile(buf, messages, v, scale);
                        default -> AggregatePlanner.Statistic.MINIMUM;
                    });
        }
        return Math.min(
                1.0, AggregatePlanner.plan(planner, new long[] {messages}, statistics).rate(0));
    }

    /**
     * The messages' totals of column {@code v} (a sum), or their ratio-estimator residuals (a
     * mean), over its finite values; nothing beyond the minimum when it has none. A column with
     * some NaN or infinity is still planned on its finite values: the group's answer is then NaN or
     * an infinity exactly, but the same sample serves the query's other aggregates (a top-k, which
     * is not planned, took a bare minimum sample and ranked its keys wrongly otherwise:
     * NonFiniteValuesTest under load).
     */
    private static AggregatePlanner.Statistic totals(
            StratumBuffer buf, int messages, int v, double scale, boolean residuals) {
        NonFinite nf = buf.nonFinite();
        if (nf.nan(v) + nf.positive(v) + nf.negative(v) == buf.records()) {
            return AggregatePlanner.Statistic.MINIMUM; // no finite value to estimate
        }
        return messages(buf, messages, v, scale, residuals);
    }

    /**
     * A quantile through the mean's plan of its finite values (a proxy, not a bound of its own:
     * planning it at its own rank, {@code SharePlanner.quantileAtRank}, raised {@code
     * UnequalSplitTest}'s sample from 39.7% to 45.5% of the records); nothing beyond the minimum
     * when no value is finite. (A rank among this stratum's NaN values does not make the group's
     * answer NaN: the other senders' strata may hold fewer.)
     */
    private static AggregatePlanner.Statistic quantile(
            StratumBuffer buf, int messages, int v, double scale) {
        NonFinite nf = buf.nonFinite();
        if (nf.nan(v) + nf.positive(v) + nf.negative(v) == buf.records()) {
            return AggregatePlanner.Statistic.MINIMUM;
        }
        return messages(buf, messages, v, scale, true);
    }

    /**
     * The statistics of the messages' totals (or ratio residuals) of column {@code v}'s finite
     * values, non-finite values counting as absent (they are counted apart, {@link NonFinite}).
     */
    private static AggregatePlanner.Statistic messages(
            StratumBuffer buf, int messages, int v, double scale, boolean residuals) {
        int n = buf.records();
        double total = 0;
        long count = 0;
        for (int r = 0; r < n; r++) {
            double x = buf.value(r, v);
            if (Double.isFinite(x)) {
                total += x;
                count++;
            }
        }
        double ratio = residuals ? total / count : 0.0;
        StratumAccumulator acc = new StratumAccumulator();
        for (int m = 0; m < messages; m++) {
            double y = 0;
            for (int r = StratumBuffer.start(m, n, messages);
                    r < StratumBuffer.start(m + 1, n, messages);
                    r++) {
                double x = buf.value(r, v);
                y += Double.isFinite(x) ? x - ratio : 0.0;
            }
            acc.add(y);
        }
        // the residuals' mean is 0: the mean's bound is relative to the mean per-message total
        double mean = residuals ? total / messages : acc.meanTotal();
        return AggregatePlanner.Statistic.messages(
                mean, Math.sqrt(acc.varianceTotal()), acc.skewnessTotal() / scale);
    }
}
