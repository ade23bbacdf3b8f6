package io.netapprox.spark;

import io.netapprox.core.sampling.AggregatePlanner;
import io.netapprox.core.sampling.ShareAllocation;
import io.netapprox.core.sampling.ShareMoments;
import io.netapprox.core.sampling.SharePlanner;
import io.netapprox.core.sampling.ValueSketch;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The MSR of every (group, map output) of an approximate query, planned on the driver between the
 * map and the reduce stage from the statistics every map task computed of its shares while writing
 * them ({@code spark.approx.planning=shares}): each group's shares are allocated together by
 * approx-core's {@link SharePlanner}, so a group's e_max holds however its records are spread over
 * the map outputs. Broadcast to the reduce tasks inside the {@link ApproxSpec}; each reducer sends
 * the MSRs of a block's groups with its request. {@link #allocate} is also what a map task uses
 * alone for its own share (the MSR in its group table, applied under {@code planning=local}).
 */
final class SamplingPlan implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Per group: the map indices holding it and their MSRs (same order). */
    private final Map<String, int[]> maps = new HashMap<>();

    private final Map<String, double[]> rates = new HashMap<>();

    /**
     * @param spec the query
     * @param shares per group, per map index, its statistics
     * @return the plan
     */
    static SamplingPlan of(ApproxSpec spec, Map<String, Map<Integer, ShareStatistics>> shares) {
        SamplingPlan plan = new SamplingPlan();
        for (Map.Entry<String, Map<Integer, ShareStatistics>> g : shares.entrySet()) {
            int[] idx =
                    g.getValue().keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
            List<ShareStatistics> list = new ArrayList<>(idx.length);
            for (int i : idx) {
                list.add(g.getValue().get(i));
            }
            double[] r = rates(spec, g.getKey(), list);
            plan.maps.put(g.getKey(), idx);
            plan.rates.put(g.getKey(), r);
        }
        return plan;
    }

    /**
     * @return the MSR planned for the group's share in map output {@code mapIndex}, or NaN if not
     *     planned.
     */
    double rate(String group, int mapIndex) {
        int[] idx = maps.get(group);
        if (idx == null) {
            return Double.NaN;
        }
        int i = Arrays.binarySearch(idx, mapIndex);
        return i < 0 ? Double.NaN : rates.get(group)[i];
    }

    /** Receives one planned share. */
    @FunctionalInterface
    interface ShareConsumer {
        void accept(String group, int mapIndex, double msr);
    }

    /** Calls {@code c} for every planned (group, map output) share of the groups {@code want}s. */
    void forEachShare(java.util.function.Predicate<String> want, ShareConsumer c) {
        for (Map.Entry<String, int[]> e : maps.entrySet()) {
            if (!want.test(e.getKey())) {
                continue;
            }
            double[] r = rates.get(e.getKey());
            for (int i = 0; i < e.getValue().length; i++) {
                c.accept(e.getKey(), e.getValue()[i], r[i]);
            }
        }
    }

    /**
     * @return the groups of the query (as the map tasks' statistics saw them).
     */
    Set<String> groups() {
        return maps.keySet();
    }

    /**
     * The MSR of each of the group's shares: 0 for every share when no aggregate is answered from
     * the sample ({@link ApproxSpec#needsSample()}: counts and exact partials come with the group
     * tables), else {@link #allocate}'s rates.
     */
    static double[] rates(ApproxSpec spec, String group, List<ShareStatistics> shares) {
        double[] r = new double[shares.size()];
        if (!spec.needsSample()) {
            return r;
        }
        ShareAllocation a = allocate(spec, group, shares);
        for (int m = 0; m < r.length; m++) {
            r[m] = a.rate(m);
        }
        return r;
    }

    /**
     * Messages each share of the group must deliver: approx-core's {@link AggregatePlanner} (the
     * per-share maximum over the query's aggregates) on each aggregate's statistics of the shares.
     * Aggregates whose value is already known from the shares' counts (a column with NaN or
     * infinities, counts, avg and sum with exact partials) need nothing beyond the minimum; a
     * quantile is planned at the ranks Spark's definition reads ({@link SparkPercentile}).
     */
    static ShareAllocation allocate(ApproxSpec spec, String group, List<ShareStatistics> shares) {
        SharePlanner planner = SharePlanner.of(spec.errorBound(group), spec.confidence());
        long[] units = new long[shares.size()];
        for (int m = 0; m < units.length; m++) {
            units[m] = shares.get(m).units;
        }
        List<AggregatePlanner.Statistic> statistics = new ArrayList<>();
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            statistics.add(statistic(spec, a, shares));
        }
        return AggregatePlanner.plan(planner, units, statistics);
    }

    private static AggregatePlanner.Statistic statistic(
            ApproxSpec spec, ApproxSpec.Aggregate a, List<ShareStatistics> shares) {
        int v = a.valueIndex();
        switch (a.kind()) {
            case AVG, SUM -> {
                if (spec.exactPartials()) {
                    return AggregatePlanner.Statistic.MINIMUM; // exact from the shares' partials
                }
                List<ShareMoments> moments = new ArrayList<>();
                for (ShareStatistics s : shares) {
                    if (s.moments[v] == null) {
                        // non-finite values: the result is NaN or infinite, exactly
                        return AggregatePlanner.Statistic.MINIMUM;
                    }
                    moments.add(s.moments[v]);
                }
                return AggregatePlanner.Statistic.moments(moments);
            }
            case QUANTILE -> {
                long records = 0;
                long nan = 0;
                List<ValueSketch> sketches = new ArrayList<>();
                for (ShareStatistics s : shares) {
                    records += s.records;
                    nan += s.nonFinite[v][0];
                    sketches.add(s.sketches[v]);
                }
                if (records == 0) {
                    return AggregatePlanner.Statistic.MINIMUM;
                }
                SparkPercentile.Ranks r = SparkPercentile.ranks(a, records);
                return r.single()
                        ? AggregatePlanner.Statistic.quantile(sketches, nan, r.first())
                        : AggregatePlanner.Statistic.quantile(sketches, nan, r.first(), r.second());
            }
            default -> {
                // COUNT: exact from the group tables; TOPK: not planned (AggregatePlanner)
                return AggregatePlanner.Statistic.MINIMUM;
            }
        }
    }
}
