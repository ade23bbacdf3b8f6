package io.netapprox.flink;

import io.netapprox.core.sampling.MsrPlan;
import io.netapprox.core.sampling.MsrPlanner;
import io.netapprox.core.sampling.StratumAccumulator;

/**
 * The MSR of one stratum (one sender's share of a (window, group) in one epoch) from the statistics
 * of its messages, with approx-core's {@link MsrPlanner} (Cochran's skewness rule included): the
 * largest plan over the query's aggregates. Sums are planned on the message totals {@code y_i};
 * means (and quantiles, as a proxy) on the ratio-estimator residuals {@code y_i - R m_i}; counts
 * are exact from the manifest and top-k takes what the others need (at least the planner's minimum
 * sample). Only finite values are planned for. {@code scale} widens the bound for {@code
 * approx.planning=balanced} ({@code sqrt(P)}; 1 for the default, conservative, see docs/flink.md).
 */
final class StratumPlanner {
    private StratumPlanner() {}

    static double msr(
            StratumBuffer buf,
            int messages,
            int[] sumValues,
            int[] meanValues,
            double eMax,
            double confidence,
            double scale) {
        if (messages <= 1) {
            return 1.0;
        }
        MsrPlanner planner = MsrPlanner.of(Math.min(0.99, eMax * scale), confidence);
        double msr = planner.plan(messages, 1.0, 0.0).msr(); // the minimum sample
        int n = buf.records();
        for (int v : sumValues) {
            StratumAccumulator acc = new StratumAccumulator();
            for (int m = 0; m < messages; m++) {
                double y = 0;
                for (int r = StratumBuffer.start(m, n, messages);
                        r < StratumBuffer.start(m + 1, n, messages);
                        r++) {
                    y += finite(buf.value(r, v));
                }
                acc.add(y);
            }
            msr = Math.max(msr, plan(planner, messages, acc.meanTotal(), acc, scale));
        }
        for (int v : meanValues) {
            double total = 0;
            long count = 0;
            for (int r = 0; r < n; r++) {
                double x = buf.value(r, v);
                if (Double.isFinite(x)) {
                    total += x;
                    count++;
                }
            }
            if (count == 0) {
                continue; // no number to estimate: the answer is NaN or an infinity, exactly
            }
            double ratio = total / count;
            StratumAccumulator acc = new StratumAccumulator();
            for (int m = 0; m < messages; m++) {
                int from = StratumBuffer.start(m, n, messages);
                int to = StratumBuffer.start(m + 1, n, messages);
                double y = 0;
                for (int r = from; r < to; r++) {
                    double x = buf.value(r, v);
                    y += Double.isFinite(x) ? x - ratio : 0.0;
                }
                acc.add(y);
            }
            msr = Math.max(msr, plan(planner, messages, total / messages, acc, scale));
        }
        return Math.min(1.0, msr);
    }

    /**
     * NaN and infinite values do not enter the plan: an answer over them is known exactly from the
     * stratum's counts ({@link NonFinite}), the sample serves the finite values.
     */
    private static double finite(double x) {
        return Double.isFinite(x) ? x : 0.0;
    }

    private static double plan(
            MsrPlanner planner, int n, double mean, StratumAccumulator acc, double scale) {
        double sd = Math.sqrt(acc.varianceTotal());
        double skew = acc.skewnessTotal() / scale;
        if (!Double.isFinite(mean) || !Double.isFinite(sd)) {
            return 1.0;
        }
        MsrPlan p =
                Double.isFinite(skew) ? planner.plan(n, mean, sd, skew) : planner.plan(n, mean, sd);
        return p.msr();
    }
}
