package io.netapprox.core.sampling;

import java.util.List;
import java.util.function.LongFunction;

/**
 * The plan of one group over the query's aggregates: the messages each of the group's shares must
 * deliver so that every aggregate answered from the sample meets the group's e_max, i.e. per share
 * the largest of the aggregates' {@link SharePlanner} allocations (each aggregate's variance only
 * shrinks when a share delivers more), at least the planner's minimum. Used by Spark's driver plan
 * (a group's shares are its map outputs) and by a Flink sender (one share: its stratum).
 *
 * <ul>
 *   <li>{@link AggregateKind#AVG AVG}, {@link AggregateKind#SUM SUM}: {@link SharePlanner#mean} on
 *       the shares' census moments (a total's relative error is its mean's, the record count being
 *       known). Nothing when the column holds a NaN or an infinity (the answer is NaN or that
 *       infinity, exactly, from the counts) or when the answers come from exact partials.
 *   <li>{@link AggregateKind#QUANTILE QUANTILE}: {@link SharePlanner#quantileAtRank} at each rank
 *       the framework's definition reads (one, or two it interpolates between), on the shares'
 *       sketches of their non-NaN values. Nothing when a rank falls among the NaN values (they sort
 *       above every number: the answer is NaN, exactly) or the group is empty.
 *   <li>{@link AggregateKind#COUNT COUNT}: exact from the shares' record counts.
 *   <li>{@link AggregateKind#TOPK TOPK}: not planned; its counts get the sample the others need
 *       (e_max bounding each top-k count would sample long-tailed keys nearly whole; {@link
 *       SharePlanner#topK} plans that where it is wanted) and carry their own intervals.
 * </ul>
 */
public final class AggregatePlanner {
    /**
     * One aggregate of the query.
     *
     * @param kind what it computes
     * @param valueIndex the value column it reads (ignored for COUNT and TOPK)
     * @param ranks for a quantile: from the group's record count (NaN values included), the
     *     ascending 1-based ranks its answer reads; null for the other kinds
     */
    public record Aggregate(AggregateKind kind, int valueIndex, LongFunction<long[]> ranks) {
        /** Validates. */
        public Aggregate {
            if (kind == AggregateKind.QUANTILE && ranks == null) {
                throw new IllegalArgumentException("a quantile needs the ranks it reads");
            }
        }
    }

    /** What the planner reads of a group's shares (in a fixed share order). */
    public interface Shares {
        /** Messages of each share. */
        long[] units();

        /** Records of the group over all shares, NaN values included. */
        long records();

        /**
         * Per share the census moments of column {@code v}, or null when the column holds a NaN or
         * an infinity.
         */
        List<ShareMoments> moments(int v);

        /** Per share the sketch of column {@code v}'s non-NaN values. */
        List<ValueSketch> sketches(int v);

        /** NaN values of column {@code v} over all shares. */
        long nan(int v);
    }

    private AggregatePlanner() {}

    /**
     * @param planner the group's e_max and confidence
     * @param aggregates the query's aggregates
     * @param exactPartials whether AVG and SUM are answered from exact partials (not the sample)
     * @param shares the group's shares
     * @return messages per share: the largest allocation over the aggregates
     */
    public static ShareAllocation plan(
            SharePlanner planner,
            List<Aggregate> aggregates,
            boolean exactPartials,
            Shares shares) {
        long[] units = shares.units();
        ShareAllocation plan = planner.minimum(units);
        for (Aggregate a : aggregates) {
            int v = a.valueIndex();
            switch (a.kind()) {
                case AVG, SUM -> {
                    List<ShareMoments> moments = exactPartials ? null : shares.moments(v);
                    if (moments != null) {
                        plan = plan.max(planner.mean(moments));
                    }
                }
                case QUANTILE -> {
                    long records = shares.records();
                    if (records == 0) {
                        continue;
                    }
                    long[] ranks = a.ranks().apply(records);
                    long numbers = records - shares.nan(v);
                    boolean amongNaN = false;
                    for (long r : ranks) {
                        amongNaN |= r > numbers;
                    }
                    if (amongNaN) {
                        continue;
                    }
                    List<ValueSketch> sketches = shares.sketches(v);
                    for (long r : ranks) {
                        plan = plan.max(planner.quantileAtRank(sketches, units, r));
                    }
                }
                default -> {
                    // COUNT exact, TOPK not planned (see the class comment)
                }
            }
        }
        return plan;
    }
}
