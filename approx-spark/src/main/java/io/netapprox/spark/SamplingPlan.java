package io.netapprox.spark;

import io.netapprox.core.sampling.AggregateKind;
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
     * Messages each share of the group must deliver: approx-core's {@link AggregatePlanner} over
     * the query's aggregates (the per-share maximum; aggregates known from the shares' counts or
     * exact partials need nothing beyond the minimum), quantiles at the ranks Spark's definition
     * reads ({@link SparkPercentile}).
     */
    static ShareAllocation allocate(ApproxSpec spec, String group, List<ShareStatistics> shares) {
        SharePlanner planner = SharePlanner.of(spec.errorBound(group), spec.confidence());
        List<AggregatePlanner.Aggregate> aggregates = new ArrayList<>();
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            aggregates.add(
                    new AggregatePlanner.Aggregate(
                            a.kind(),
                            a.valueIndex(),
                            a.kind() == AggregateKind.QUANTILE ? n -> ranks(a, n) : null));
        }
        return AggregatePlanner.plan(planner, aggregates, spec.exactPartials(), new Shares(shares));
    }

    /** The one or two ranks Spark's definition of the quantile reads among n records. */
    private static long[] ranks(ApproxSpec.Aggregate a, long n) {
        SparkPercentile.Ranks r = SparkPercentile.ranks(a, n);
        return r.single() ? new long[] {r.first()} : new long[] {r.first(), r.second()};
    }

    /** The map tasks' statistics of a group's shares, as the planner reads them. */
    private record Shares(List<ShareStatistics> shares) implements AggregatePlanner.Shares {
        @Override
        public long[] units() {
            return shares.stream().mapToLong(s -> s.units).toArray();
        }

        @Override
        public long records() {
            return shares.stream().mapToLong(s -> s.records).sum();
        }

        @Override
        public List<ShareMoments> moments(int v) {
            List<ShareMoments> out = new ArrayList<>();
            for (ShareStatistics s : shares) {
                if (s.moments[v] == null) {
                    return null; // non-finite values: the result is NaN or infinite, exactly
                }
                out.add(s.moments[v]);
            }
            return out;
        }

        @Override
        public List<ValueSketch> sketches(int v) {
            return shares.stream().map(s -> s.sketches[v]).toList();
        }

        @Override
        public long nan(int v) {
            return shares.stream().mapToLong(s -> s.nonFinite[v][0]).sum();
        }
    }
}
