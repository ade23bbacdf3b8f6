package io.netapprox.core.sampling;

import java.util.List;

/**
 * The plan of one group over the query's aggregates: the messages each of the group's shares must
 * deliver so that every aggregate answered from the sample meets the group's e_max, i.e. per share
 * the largest of the aggregates' allocations (each aggregate's variance only shrinks when a share
 * delivers more), at least the planner's minimum. Each framework passes, per aggregate, the {@link
 * Statistic} it measured: Spark's driver the census moments and sketches of a group's map outputs,
 * a Flink sender the statistics of its stratum's messages (the group's one share as it sees it).
 */
public final class AggregatePlanner {

    /** What one aggregate's sample is planned from. */
    public sealed interface Statistic {
        /**
         * Nothing beyond the minimum: the answer is exact from the shares' counts (a count; a sum
         * or mean over a column holding a NaN or an infinity, which is that value exactly; exact
         * partials), or the aggregate is not planned (top-k counts get the sample the others need:
         * e_max bounding each top-k count would sample long-tailed keys nearly whole, {@link
         * SharePlanner#topK} plans that where it is wanted; they carry their own intervals).
         */
        Statistic MINIMUM = new Minimum();

        /**
         * A mean or sum from the census moments of each share's records ({@link SharePlanner#mean};
         * a total's relative error is its mean's, the record count being known).
         *
         * @param shares one per share, in the planner's share order
         */
        static Statistic moments(List<ShareMoments> shares) {
            return new Moments(List.copyOf(shares));
        }

        /**
         * A mean or sum of a group of one share from its messages as the sampling units ({@link
         * MsrPlanner}, Cochran's rule on the messages' skewness): for a sum the message totals, for
         * a mean the ratio-estimator residuals {@code y_i - R m_i} with {@code mean} the mean
         * per-message total.
         *
         * @param mean mean per-message total
         * @param standardDeviation of the message totals (or residuals)
         * @param skewness of the message totals (or residuals); NaN when unknown
         */
        static Statistic messages(double mean, double standardDeviation, double skewness) {
            return new Messages(mean, standardDeviation, skewness);
        }

        /**
         * A quantile read at the given ranks ({@link SharePlanner#quantileAtRank}, one rank, or two
         * it interpolates between). Nothing beyond the minimum when the group is empty or a rank
         * falls among the NaN values (they sort above every number: the answer is NaN, exactly).
         *
         * @param sketches per share the sketch of the column's non-NaN values
         * @param nan NaN values of the column over all shares
         * @param ranks 1-based ranks among all the group's values, NaN included
         */
        static Statistic quantile(List<ValueSketch> sketches, long nan, long... ranks) {
            return new Quantile(List.copyOf(sketches), nan, ranks.clone());
        }
    }

    private record Minimum() implements Statistic {}

    private record Moments(List<ShareMoments> shares) implements Statistic {}

    private record Messages(double mean, double standardDeviation, double skewness)
            implements Statistic {}

    private record Quantile(List<ValueSketch> sketches, long nan, long[] ranks)
            implements Statistic {}

    private AggregatePlanner() {}

    /**
     * @param planner the group's e_max, confidence and minimum messages per share
     * @param units messages of each share
     * @param statistics one per aggregate of the query
     * @return messages per share: the largest allocation over the aggregates
     */
    public static ShareAllocation plan(
            SharePlanner planner, long[] units, List<Statistic> statistics) {
        ShareAllocation plan = planner.minimum(units);
        for (Statistic s : statistics) {
            plan = plan.max(allocation(planner, units, s));
        }
        return plan;
    }

    private static ShareAllocation allocation(SharePlanner planner, long[] units, Statistic s) {
        if (s instanceof Moments m) {
            return planner.mean(m.shares());
        }
        if (s instanceof Messages m) {
            return messages(planner, units, m);
        }
        if (s instanceof Quantile q) {
            return quantile(planner, units, q);
        }
        return planner.minimum(units);
    }

    private static ShareAllocation messages(SharePlanner planner, long[] units, Messages m) {
        if (units.length != 1) {
            throw new IllegalArgumentException(
                    "message statistics plan a group of one share, got " + units.length);
        }
        if (!Double.isFinite(m.mean()) || !Double.isFinite(m.standardDeviation())) {
            return ShareAllocation.census(units);
        }
        MsrPlanner p =
                MsrPlanner.builder(planner.relativeErrorBound())
                        .confidence(planner.confidence())
                        .minSampleSize(planner.minUnits())
                        .build();
        MsrPlan plan =
                Double.isFinite(m.skewness())
                        ? p.plan(units[0], m.mean(), m.standardDeviation(), m.skewness())
                        : p.plan(units[0], m.mean(), m.standardDeviation());
        return new ShareAllocation(
                new long[] {Math.min(units[0], plan.sampleSize())}, units, plan.criticalValue());
    }

    private static ShareAllocation quantile(SharePlanner planner, long[] units, Quantile q) {
        long numbers = 0;
        for (ValueSketch s : q.sketches()) {
            numbers += s.count();
        }
        if (numbers + q.nan() == 0) {
            return planner.minimum(units);
        }
        for (long r : q.ranks()) {
            if (r > numbers) {
                return planner.minimum(units);
            }
        }
        ShareAllocation plan = planner.minimum(units);
        for (long r : q.ranks()) {
            plan = plan.max(planner.quantileAtRank(q.sketches(), units, r));
        }
        return plan;
    }
}
