package io.netapprox.spark;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.ExactSum;
import io.netapprox.core.sampling.GroupEstimator;
import io.netapprox.core.sampling.ShareSample;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * Reduce side of {@link ApproxQuery}: turns what one reduce partition received into per-group
 * estimates.
 *
 * <ul>
 *   <li>Approximate shuffle: values are {@link StratumSample}s; each (group, map output) is a
 *       stratum whose delivered messages are a simple random sample of its messages. The group's
 *       answers are approx-core's {@link GroupEstimator}'s (every aggregate estimated per stratum;
 *       with exact partials, the default, every share's avg/sum contribution is its exact sum from
 *       the group table; a group whose messages all arrived is exact), quantiles as Spark defines
 *       them ({@link SparkPercentile}). A value column with NaN or infinities (the group tables
 *       count them) gives what Spark gives: NaN (an undefined result, interval NaN) for NaN or for
 *       both infinities, else the infinity.
 *   <li>Sort shuffle: values are {@link ApproxRow}s, every group is complete, every answer exact.
 * </ul>
 */
final class GroupAggregator {
    private static final Logger LOG = LoggerFactory.getLogger(GroupAggregator.class);

    private GroupAggregator() {}

    private static final class State {
        final List<StratumSample> strata = new ArrayList<>();

        /** The exact (sort shuffle) input, aggregated as it arrives; null until a row arrives. */
        Exact exact;
    }

    /**
     * One group's exact aggregates, folded in one row at a time (the rows are never held: a sort
     * shuffle's reducer at any input size keeps per group one count, one exact sum per value
     * column, the key counts of top-k and, for a quantile, its column's values as primitives).
     */
    static final class Exact {
        private final ApproxSpec spec;
        long n;
        private final ExactSum[] sums;
        private final double[][] values; // per value column that has a quantile, else null
        private final int[] sizes;
        private final Map<String, Long> keyCounts;

        Exact(ApproxSpec spec) {
            this.spec = spec;
            int nv = spec.numValues();
            sums = new ExactSum[nv];
            values = new double[nv][];
            sizes = new int[nv];
            boolean topK = false;
            for (ApproxSpec.Aggregate a : spec.aggregates()) {
                switch (a.kind()) {
                    case AVG, SUM -> sums[a.valueIndex()] = new ExactSum();
                    case QUANTILE -> values[a.valueIndex()] = new double[16];
                    case TOPK -> topK = true;
                    default -> {}
                }
            }
            keyCounts = topK ? new HashMap<>() : null;
        }

        /** Folds one row in; nothing of the row is kept. */
        void add(ApproxRow r) {
            n++;
            for (int i = 0; i < sums.length; i++) {
                if (sums[i] != null) {
                    sums[i].add(r.values[i]);
                }
                if (values[i] != null) {
                    if (sizes[i] == values[i].length) {
                        values[i] = Arrays.copyOf(values[i], Math.multiplyExact(sizes[i], 2));
                    }
                    values[i][sizes[i]++] = r.values[i];
                }
            }
            if (keyCounts != null) {
                keyCounts.merge(r.key, 1L, Long::sum);
            }
        }
    }

    /**
     * What a reducer yields for a share that did not arrive at all by the deadline (its map
     * output's table never came): the share's group, or null when the reducer cannot tell which
     * groups the map output held (no plan, {@code planning=local}) - then every group of the
     * partition.
     */
    record MissingShare(String group) {}

    static List<Row> aggregate(ApproxSpec spec, Iterator<Object> it) {
        Map<String, State> groups = new TreeMap<>();
        java.util.Set<String> missing = new java.util.HashSet<>();
        boolean allMissing = false;
        while (it.hasNext()) {
            Tuple2<?, ?> t = (Tuple2<?, ?>) it.next();
            if (t._2() instanceof MissingShare ms) {
                if (ms.group() == null) {
                    allMissing = true;
                } else {
                    missing.add(ms.group());
                }
                continue;
            }
            State s = groups.computeIfAbsent((String) t._1(), k -> new State());
            Object v = t._2();
            if (v instanceof StratumSample ss) {
                s.strata.add(ss);
            } else {
                if (s.exact == null) {
                    s.exact = new Exact(spec);
                }
                s.exact.add((ApproxRow) v);
            }
        }
        List<Row> out = new ArrayList<>();
        for (Map.Entry<String, State> e : groups.entrySet()) {
            State s = e.getValue();
            if (!s.strata.isEmpty() && s.exact != null) {
                throw new IllegalStateException(
                        "group " + e.getKey() + " got sampled and exact input");
            }
            if (s.strata.isEmpty()) {
                exact(spec, e.getKey(), s.exact, out);
            } else {
                approximate(
                        spec,
                        e.getKey(),
                        s.strata,
                        allMissing || missing.contains(e.getKey()),
                        out);
                count(spec.metrics(), s.strata);
            }
        }
        return out;
    }

    /**
     * Adds a group to its shuffle's metrics: its sample fraction, and whether it met its targets.
     */
    private static void count(ApproxShuffleMetrics m, List<StratumSample> strata) {
        if (m == null) {
            return;
        }
        long population = 0;
        long sampled = 0;
        boolean below = false;
        boolean shortOfPlan = false;
        for (StratumSample s : strata) {
            population += s.records;
            sampled += s.sampledRecords();
            below |= s.deliveredMessages() < s.target;
            shortOfPlan |= s.shortOfPlan;
        }
        m.groups.add(1);
        m.rows.add(population);
        m.rowsSampled.add(sampled);
        m.sampleFraction.add(population == 0 ? 1.0 : (double) sampled / population);
        if (below) {
            m.groupsBelowTarget.add(1);
        }
        if (shortOfPlan) {
            m.groupsShortOfPlan.add(1);
        }
    }

    private static Row row(
            String group,
            String agg,
            String key,
            Integer rank,
            ApproxResult r,
            double eMax,
            long sampleRows,
            long populationRows,
            boolean approximate,
            boolean complete) {
        double relative = relativeError(r);
        return RowFactory.create(
                group,
                agg,
                key,
                rank,
                r.mean(),
                r.low(),
                r.high(),
                r.confidence(),
                eMax,
                sampleRows,
                populationRows,
                approximate,
                relative,
                complete || relative <= eMax);
    }

    /**
     * The interval's half-width over |estimate| (0 for a zero-width interval, NaN for an undefined
     * one, infinite for an unbounded one or an estimate of 0 with a non-zero width).
     */
    static double relativeError(ApproxResult r) {
        double half = (r.high() - r.low()) / 2;
        if (half == 0) {
            return 0;
        }
        return half / Math.abs(r.mean());
    }

    static void approximate(
            ApproxSpec spec,
            String group,
            List<StratumSample> strata,
            boolean missingShare,
            List<Row> out) {
        double conf = spec.confidence();
        double eMax = spec.errorBound(group);
        List<ShareSample> shares = new ArrayList<>();
        for (StratumSample s : strata) {
            shares.add(s.share);
        }
        GroupEstimator est = new GroupEstimator(shares, conf, spec.exactPartials());
        // the plan's guarantee holds when every share's planned sample arrived; otherwise (a
        // deadline, a share short of plan, a share that never arrived) the flag is the interval's
        boolean complete = !missingShare;
        for (StratumSample s : strata) {
            complete &= s.deliveredMessages() >= s.target && !s.shortOfPlan;
        }
        long sampled = est.sampledRecords();
        long population = est.records();
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            int v = a.valueIndex();
            ApproxResult r =
                    switch (a.kind()) {
                        case AVG -> est.mean(v);
                        case SUM -> est.sum(v);
                        case COUNT -> est.count();
                        case QUANTILE -> quantile(est, a, population);
                        case TOPK -> null; // one row per key, below
                    };
            if (a.kind() != AggregateKind.TOPK) {
                if (r == null) { // nothing of the group arrived
                    r = ApproxResult.undefined(conf, sampled, population);
                }
                if (missingShare) { // a share of the group did not arrive at all by the deadline
                    r = r.unbounded();
                }
                out.add(
                        row(
                                group,
                                a.label(),
                                null,
                                null,
                                r,
                                eMax,
                                sampled,
                                population,
                                true,
                                complete));
                continue;
            }
            List<GroupEstimator.KeyEstimate> top = est.topK(a.k());
            int rank = 1;
            for (GroupEstimator.KeyEstimate ke :
                    top == null ? List.<GroupEstimator.KeyEstimate>of() : top) {
                out.add(
                        row(
                                group,
                                a.label(),
                                ke.key(),
                                rank++,
                                missingShare ? ke.count().unbounded() : ke.count(),
                                eMax,
                                sampled,
                                population,
                                true,
                                complete));
            }
        }
    }

    /**
     * A quantile aggregate as Spark defines it ({@link SparkPercentile}): the value at one rank, or
     * the interpolation of the values at two neighbouring ranks, over the group's values with NaN
     * above every number (as Spark orders them).
     */
    private static ApproxResult quantile(
            GroupEstimator est, ApproxSpec.Aggregate a, long population) {
        SparkPercentile.Ranks ranks = SparkPercentile.ranks(a, population);
        ApproxResult r =
                est.quantile(a.valueIndex(), ranks.first(), ranks.second(), ranks::combine);
        if (r == null) {
            LOG.warn(
                    "NetApprox: every sampled value of a quantile's column was NaN while the group has numbers;"
                            + " no estimate");
        }
        return r;
    }

    /** Spark's quantile of {@code sorted} (ascending, NaN last: every value of the group). */
    static double exactQuantile(ApproxSpec.Aggregate a, double[] sorted) {
        SparkPercentile.Ranks r = SparkPercentile.ranks(a, sorted.length);
        return r.combine(sorted[(int) r.first() - 1], sorted[(int) r.second() - 1]);
    }

    static void exact(ApproxSpec spec, String group, Exact g, List<Row> out) {
        double conf = spec.confidence();
        double eMax = spec.errorBound(group);
        long n = g.n;
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            switch (a.kind()) {
                case AVG, SUM -> {
                    // summed exactly (the same value as a complete approximate group, whatever the
                    // row order)
                    ExactSum sum = g.sums[a.valueIndex()];
                    double v = a.kind() == AggregateKind.SUM ? sum.value() : sum.value() / n;
                    out.add(
                            row(
                                    group,
                                    a.label(),
                                    null,
                                    null,
                                    ApproxResult.exact(v, conf, n),
                                    eMax,
                                    n,
                                    n,
                                    false,
                                    true));
                }
                case COUNT ->
                        out.add(
                                row(
                                        group,
                                        a.label(),
                                        null,
                                        null,
                                        ApproxResult.exact(n, conf, n),
                                        eMax,
                                        n,
                                        n,
                                        false,
                                        true));
                case QUANTILE -> {
                    double[] v = Arrays.copyOf(g.values[a.valueIndex()], g.sizes[a.valueIndex()]);
                    Arrays.sort(v); // NaN last, as Spark orders it
                    out.add(
                            row(
                                    group,
                                    a.label(),
                                    null,
                                    null,
                                    ApproxResult.exact(exactQuantile(a, v), conf, n),
                                    eMax,
                                    n,
                                    n,
                                    false,
                                    true));
                }
                case TOPK -> {
                    List<Map.Entry<String, Long>> es = new ArrayList<>(g.keyCounts.entrySet());
                    es.sort(
                            (x, y) ->
                                    y.getValue().equals(x.getValue())
                                            ? x.getKey().compareTo(y.getKey())
                                            : Long.compare(y.getValue(), x.getValue()));
                    for (int i = 0; i < Math.min(a.k(), es.size()); i++) {
                        out.add(
                                row(
                                        group,
                                        a.label(),
                                        es.get(i).getKey(),
                                        i + 1,
                                        ApproxResult.exact(es.get(i).getValue(), conf, n),
                                        eMax,
                                        n,
                                        n,
                                        false,
                                        true));
                    }
                }
            }
        }
    }
}
