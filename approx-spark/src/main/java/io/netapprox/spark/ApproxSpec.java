package io.netapprox.spark;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sql.ApproxClause;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What an approximate shuffle must guarantee, frozen into its {@link ApproxShuffleHandle}: the
 * aggregates (which value columns feed the MSR plan), the relative error bound per group (default
 * and overrides), the confidence, and a seed for the map side's random framing. Built by {@link
 * ApproxQuery}.
 */
public final class ApproxSpec implements Serializable {
    private static final long serialVersionUID = 1L;

    /**
     * How a quantile aggregate defines a group's q-quantile: Spark SQL's functions of the same
     * names ({@link SparkPercentile} computes both exactly as Spark does).
     */
    public enum QuantileMethod {
        /**
         * Spark's {@code percentile}, {@code median} and {@code percentile_cont}: position {@code
         * (N - 1) q} in the sorted values (NaN largest), interpolated linearly between the two
         * closest ranks.
         */
        INTERPOLATED,
        /**
         * Spark's {@code percentile_disc} (and what {@code approx_percentile} approximates): the
         * {@code max(1, ceil(N q))}-th smallest value, no interpolation.
         */
        DISCRETE
    }

    /**
     * One requested aggregate; {@code valueIndex} is the position of its column in {@link
     * ApproxRow#values}. A quantile has its {@code method} and {@code descending} (Spark's {@code
     * WITHIN GROUP (ORDER BY x DESC)}: q counts from the largest value); both are unused otherwise.
     */
    public record Aggregate(
            AggregateKind kind,
            String column,
            int valueIndex,
            double q,
            int k,
            QuantileMethod method,
            boolean descending)
            implements Serializable {

        /** An aggregate; a quantile is {@link QuantileMethod#DISCRETE}, ascending. */
        public Aggregate(AggregateKind kind, String column, int valueIndex, double q, int k) {
            this(kind, column, valueIndex, q, k, QuantileMethod.DISCRETE, false);
        }

        public Aggregate {
            if (method == null) {
                method = QuantileMethod.DISCRETE;
            }
        }

        public String label() {
            return switch (kind) {
                case AVG -> "avg(" + column + ")";
                case SUM -> "sum(" + column + ")";
                case COUNT -> "count";
                case QUANTILE -> quantileLabel();
                case TOPK -> "top" + k + "(" + column + ")";
            };
        }

        /**
         * {@code median(c)} (interpolated, q = 0.5, ascending), {@code percentile(c,q)}
         * (interpolated), {@code quantile(c,q)} (discrete); {@code ,desc} for a descending order.
         */
        private String quantileLabel() {
            boolean interpolated = method == QuantileMethod.INTERPOLATED;
            if (interpolated && q == 0.5 && !descending) {
                return "median(" + column + ")";
            }
            return (interpolated ? "percentile(" : "quantile(")
                    + column
                    + ","
                    + q
                    + (descending ? ",desc" : "")
                    + ")";
        }
    }

    private final List<String> groupColumns;
    private final List<Aggregate> aggregates;
    private final int numValues;
    private final double defaultErrorBound;
    private final Map<String, Double> errorBounds;
    private final double confidence;
    private final long seed;
    private final boolean exactPartials;

    /** The time bound in nanoseconds ({@code WITHIN}), 0 for none. */
    private final long withinNanos;

    /** What the query does with groups that miss their bound ({@code BEHAVIOR}). */
    private final ApproxClause.Behavior behavior;

    /** Accumulators and plan the driver attaches (null for a spec not run as a query). */
    private final QueryState state;

    ApproxSpec(
            List<String> groupColumns,
            List<Aggregate> aggregates,
            int numValues,
            double defaultErrorBound,
            Map<String, Double> errorBounds,
            double confidence,
            long seed,
            boolean exactPartials) {
        this(
                groupColumns,
                aggregates,
                numValues,
                defaultErrorBound,
                errorBounds,
                confidence,
                seed,
                exactPartials,
                0,
                ApproxClause.Behavior.ANSWER,
                null);
    }

    private ApproxSpec(
            List<String> groupColumns,
            List<Aggregate> aggregates,
            int numValues,
            double defaultErrorBound,
            Map<String, Double> errorBounds,
            double confidence,
            long seed,
            boolean exactPartials,
            long withinNanos,
            ApproxClause.Behavior behavior,
            QueryState state) {
        this.groupColumns = List.copyOf(groupColumns);
        this.aggregates = List.copyOf(aggregates);
        this.numValues = numValues;
        this.defaultErrorBound = defaultErrorBound;
        this.errorBounds = Collections.unmodifiableMap(new LinkedHashMap<>(errorBounds));
        this.confidence = confidence;
        this.seed = seed;
        this.exactPartials = exactPartials;
        this.withinNanos = withinNanos;
        this.behavior = behavior;
        this.state = state;
    }

    /** This spec with a state to attach accumulators and the plan to. */
    ApproxSpec withState(QueryState st) {
        return new ApproxSpec(
                groupColumns,
                aggregates,
                numValues,
                defaultErrorBound,
                errorBounds,
                confidence,
                seed,
                exactPartials,
                withinNanos,
                behavior,
                st);
    }

    /** This spec with a time bound (nanoseconds, 0 for none) and a behavior for missed bounds. */
    ApproxSpec withTimeBound(long within, ApproxClause.Behavior b) {
        return new ApproxSpec(
                groupColumns,
                aggregates,
                numValues,
                defaultErrorBound,
                errorBounds,
                confidence,
                seed,
                exactPartials,
                within,
                b,
                state);
    }

    /**
     * The time bound ({@code WITHIN}) in nanoseconds, 0 for none: each reduce task stops waiting
     * for the transport this long after it starts fetching and answers from what arrived.
     */
    public long withinNanos() {
        return withinNanos;
    }

    /** {@code BEHAVIOR}: answer and flag (the default), or fail, when a group misses its bound. */
    public ApproxClause.Behavior behavior() {
        return behavior;
    }

    /**
     * The per-(group, map output) MSRs planned over all map outputs (planning=shares), or null
     * (planning=local, or before the map stage).
     */
    SamplingPlan plan() {
        return state == null ? null : state.plan();
    }

    /**
     * What each map output writes of each group when the map stage is re-run sized by the plan
     * ({@code spark.approx.mapSampleRepair}), or null.
     */
    WritePlan writePlan() {
        return state == null ? null : state.writePlan();
    }

    /** True when this query's map side sizes every share as its whole group (see QueryState). */
    boolean wholeGroupSizing() {
        return state != null && state.wholeGroupSizing();
    }

    /** Where map tasks put their share statistics (planning=shares), or null. */
    ShareStatisticsAccumulator statistics() {
        return state == null ? null : state.statistics();
    }

    /** The shuffle's metrics, or null. */
    ApproxShuffleMetrics metrics() {
        return state == null ? null : state.metrics();
    }

    public List<String> groupColumns() {
        return groupColumns;
    }

    public List<Aggregate> aggregates() {
        return aggregates;
    }

    public int numValues() {
        return numValues;
    }

    public double defaultErrorBound() {
        return defaultErrorBound;
    }

    public Map<String, Double> errorBounds() {
        return errorBounds;
    }

    public double confidence() {
        return confidence;
    }

    public long seed() {
        return seed;
    }

    /**
     * True (the default, {@code spark.approx.exactPartials}): avg and sum are answered from every
     * share's exact partial (its exact sum, summed by the map task over every record) where it
     * arrived, the sample only estimates the shares without one ({@link
     * io.netapprox.core.sampling.GroupEstimator}); false: from the sample alone, as the query
     * asked.
     */
    public boolean exactPartials() {
        return exactPartials;
    }

    /**
     * True when some aggregate is answered from the sample: a quantile, top-k, or avg/sum without
     * exact partials. Otherwise the plan asks no message of any share (counts and exact partials
     * come with the group tables).
     */
    public boolean needsSample() {
        for (Aggregate a : aggregates) {
            switch (a.kind()) {
                case QUANTILE, TOPK -> {
                    return true;
                }
                case AVG, SUM -> {
                    if (!exactPartials) {
                        return true;
                    }
                }
                default -> {}
            }
        }
        return false;
    }

    public boolean hasTopK() {
        return aggregates.stream().anyMatch(a -> a.kind() == AggregateKind.TOPK);
    }

    /** e_max of {@code group} (a group key such as {@code "hour=17"}). */
    public double errorBound(String group) {
        return errorBounds.getOrDefault(group, defaultErrorBound);
    }

    /** Value indices whose totals the MSR plan must bound (avg/sum/quantile columns). */
    public List<Integer> plannedValueIndices() {
        List<Integer> r = new ArrayList<>();
        for (Aggregate a : aggregates) {
            if ((a.kind() == AggregateKind.AVG
                            || a.kind() == AggregateKind.SUM
                            || a.kind() == AggregateKind.QUANTILE)
                    && !r.contains(a.valueIndex())) {
                r.add(a.valueIndex());
            }
        }
        return r;
    }

    @Override
    public String toString() {
        return "ApproxSpec{groupBy="
                + groupColumns
                + ", aggregates="
                + aggregates.stream().map(Aggregate::label).toList()
                + ", e_max="
                + defaultErrorBound
                + ", overrides="
                + errorBounds
                + ", confidence="
                + confidence
                + ", exactPartials="
                + exactPartials
                + (withinNanos > 0 ? ", within=" + java.time.Duration.ofNanos(withinNanos) : "")
                + ", behavior="
                + behavior
                + "}";
    }
}
