package io.netapprox.spark;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.ExactSum;
import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratifiedEstimator;
import io.netapprox.core.sampling.StratifiedQuantile;
import io.netapprox.core.sampling.StratifiedTopK;
import io.netapprox.core.sampling.StratumAccumulator;
import io.netapprox.core.sampling.StratumSummary;
import io.netapprox.core.sampling.TopKResult;
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
 *       stratum whose delivered messages are a simple random sample of its messages. Averages use
 *       the combined ratio estimator over the strata with inclusion weights {@code N_g/n_g} ({@link
 *       StratifiedEstimator#mean}, approx-core's skewness-corrected t interval); sums are that
 *       ratio times the known record count. With exact partials (the default) every share's avg/sum
 *       contribution is its exact sum from the group table, and only shares without one are
 *       estimated ({@link CombinedEstimate}). Counts are exact (every map output's group table
 *       carries its record count). Quantiles ({@link StratifiedQuantile}) and top-k ({@link
 *       StratifiedTopK}) weight each map output's sample by its own inclusion fraction. A group
 *       whose messages all arrived is answered exactly, the same way as the exact path ({@link
 *       ExactSum}), with an interval as wide as a floating-point summation's rounding (so it
 *       contains Spark's own sum and avg). A value column with NaN or infinities (the group tables
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

    static List<Row> aggregate(ApproxSpec spec, Iterator<Object> it) {
        Map<String, State> groups = new TreeMap<>();
        while (it.hasNext()) {
            Tuple2<?, ?> t = (Tuple2<?, ?>) it.next();
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
                approximate(spec, e.getKey(), s.strata, out);
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
            boolean approximate) {
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
                approximate);
    }

    static void approximate(
            ApproxSpec spec, String group, List<StratumSample> strata, List<Row> out) {
        double conf = spec.confidence();
        double eMax = spec.errorBound(group);
        long population = 0;
        long sampled = 0;
        for (StratumSample s : strata) {
            population += s.records;
            sampled += s.sampledRecords();
        }
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            int v = a.valueIndex();
            switch (a.kind()) {
                case AVG, SUM -> {
                    boolean sum = a.kind() == ApproxSpec.Kind.SUM;
                    ApproxResult r = nonFinite(strata, v, conf, sampled, population);
                    if (r == null) {
                        r = combined(spec, group, strata, v, conf, sum, population);
                    }
                    out.add(row(group, a.label(), null, null, r, eMax, sampled, population, true));
                }
                case COUNT ->
                        out.add(
                                row(
                                        group,
                                        a.label(),
                                        null,
                                        null,
                                        new ApproxResult(
                                                population,
                                                population,
                                                population,
                                                conf,
                                                sampled,
                                                population),
                                        eMax,
                                        sampled,
                                        population,
                                        true));
                case QUANTILE ->
                        out.add(
                                row(
                                        group,
                                        a.label(),
                                        null,
                                        null,
                                        quantile(strata, a, conf, sampled, population),
                                        eMax,
                                        sampled,
                                        population,
                                        true));
                case TOPK -> {
                    StratifiedTopK<String> est = new StratifiedTopK<>();
                    for (StratumSample s : strata) {
                        est.addShare(s.topK, s.population);
                    }
                    int rank = 1;
                    for (TopKResult.KeyCount<String> kc : est.topK(a.k(), conf).top()) {
                        out.add(
                                row(
                                        group,
                                        a.label(),
                                        kc.key(),
                                        rank++,
                                        kc.count(),
                                        eMax,
                                        sampled,
                                        population,
                                        true));
                    }
                }
            }
        }
    }

    /**
     * The known result of a column with non-finite values (counted in the group tables over all
     * records), as Spark computes sum and avg: NaN for a NaN or for both infinities, else the
     * infinity; null when every value is finite.
     */
    private static ApproxResult nonFinite(
            List<StratumSample> strata, int v, double conf, long sampled, long population) {
        long nan = 0;
        long pos = 0;
        long neg = 0;
        for (StratumSample s : strata) {
            long[] c = s.nonFinite(v);
            nan += c[0];
            pos += c[1];
            neg += c[2];
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
     * The exactly summed total, with an interval covering any floating-point summation of the same
     * values.
     */
    static ApproxResult exactSum(ExactSum sum, double conf, long n) {
        double value = sum.value();
        double bound = sum.isFinite() ? sum.roundingBound() : 0.0;
        if (!sum.isFinite()) {
            return Double.isNaN(value)
                    ? ApproxResult.undefined(conf, n, n)
                    : ApproxResult.exact(value, conf, n);
        }
        return new ApproxResult(value, value - bound, value + bound, conf, n, n);
    }

    /**
     * The exact total over n, rounded once (as the exact path and Spark's avg divide), the same
     * interval over n.
     */
    static ApproxResult exactMean(ExactSum sum, double conf, long n) {
        double value = sum.value() / n;
        if (!sum.isFinite()) {
            return Double.isNaN(value)
                    ? ApproxResult.undefined(conf, n, n)
                    : ApproxResult.exact(value, conf, n);
        }
        double bound = sum.roundingBound();
        double half = bound > 0 ? bound / n + Math.ulp(value) : 0.0;
        return new ApproxResult(value, value - half, value + half, conf, n, n);
    }

    /**
     * Sum or average of value column v: the exact part from the shares whose exact sum is known
     * (their partial from the group table, under {@link ApproxSpec#exactPartials()}, or every
     * message taken), the rest estimated from the other shares' samples ({@link CombinedEstimate}).
     */
    private static ApproxResult combined(
            ApproxSpec spec,
            String group,
            List<StratumSample> strata,
            int v,
            double conf,
            boolean sum,
            long population) {
        ExactSum exact = new ExactSum();
        List<StratumSample> estimated = new ArrayList<>();
        long estimatedRecords = 0;
        for (StratumSample s : strata) {
            ExactSum known =
                    spec.exactPartials() && s.partials[v] != null
                            ? s.partials[v]
                            : s.isComplete() ? s.exact[v] : null;
            if (known != null) {
                exact.merge(known);
            } else {
                estimated.add(s);
                estimatedRecords += s.records;
            }
        }
        ApproxResult mean = estimated.isEmpty() ? null : ratio(group, estimated, v, conf, 0);
        return sum
                ? CombinedEstimate.total(exact, estimatedRecords, mean, conf, population)
                : CombinedEstimate.mean(exact, estimatedRecords, mean, conf, population);
    }

    /** The combined ratio estimator over the strata; times {@code records} (> 0) for the total. */
    private static ApproxResult ratio(
            String group, List<StratumSample> strata, int v, double conf, long records) {
        List<StratumSummary> sums = new ArrayList<>();
        for (StratumSample s : strata) {
            StratumAccumulator acc = s.totals[v];
            if (acc.count() == 0) {
                throw new IllegalStateException(
                        "group "
                                + group
                                + ": no message of map "
                                + s.mapIndex
                                + " delivered (MSR "
                                + s.msr
                                + ")");
            }
            sums.add(acc.summarize(s.population));
        }
        ApproxResult r = StratifiedEstimator.mean(sums, conf);
        if (records > 0) {
            // ratio estimator of the total with the known record count M (every map output's group
            // table carries
            // it): M * R_hat, interval M * [low, high]. Unlike the plain HT total N_g * ybar_g it
            // does not depend on
            // how records were cut into messages (the last, shorter message of a stratum, favoured
            // by MRDF, would
            // bias it).
            r =
                    new ApproxResult(
                            records * r.mean(),
                            records * r.low(),
                            records * r.high(),
                            r.confidence(),
                            r.sampleSize(),
                            r.populationSize());
        }
        return r;
    }

    /**
     * A quantile aggregate over the strata, each weighted by its own inclusion fraction, as Spark
     * defines it ({@link SparkPercentile}): the value at one rank, or the interpolation of the
     * values at two neighbouring ranks. NaN values sort above every number (as in Spark): the group
     * tables count them, so a rank among them reads NaN exactly (and an interpolation with it is
     * NaN, as Spark's), and a rank among the numbers is the same rank of the numbers.
     *
     * <p>The interval of an interpolated answer spans the two ranks' intervals: the answer lies
     * between the two values it interpolates, and each rank's interval misses its value on either
     * side with probability at most (1 - confidence) / 2, so {@code [min low, max high]} misses the
     * answer below (above) only if the lower (upper) of the two values is missed below (above):
     * coverage at least the confidence. A group whose every value was sampled is exact.
     */
    private static ApproxResult quantile(
            List<StratumSample> strata,
            ApproxSpec.Aggregate a,
            double conf,
            long sampled,
            long population) {
        int v = a.valueIndex();
        long nan = 0;
        for (StratumSample s : strata) {
            nan += s.nonFinite(v)[0];
        }
        long numbers = population - nan;
        SparkPercentile.Ranks ranks = SparkPercentile.ranks(a, population);
        if (Math.max(ranks.first(), ranks.second()) > numbers) {
            return ApproxResult.undefined(conf, sampled, population);
        }
        StratifiedQuantile est = new StratifiedQuantile();
        QuantileAccumulator pooled = new QuantileAccumulator();
        boolean missing = false;
        long kept = 0;
        for (StratumSample s : strata) {
            QuantileAccumulator acc = s.quantileSample(v);
            pooled.merge(acc);
            kept += acc.count();
            long shareNumbers = s.records - s.nonFinite(v)[0];
            if (shareNumbers > 0 && acc.count() == 0) {
                missing =
                        true; // every delivered value of this share was NaN: its numbers are unseen
                continue;
            }
            est.addShare(acc, shareNumbers);
        }
        if (missing) {
            if (pooled.count() == 0) {
                LOG.warn(
                        "NetApprox: every sampled value of a quantile's column was NaN while the group has numbers;"
                                + " no estimate");
                return ApproxResult.undefined(conf, sampled, population);
            }
            long size = Math.max(pooled.count(), numbers);
            double x =
                    pooled.quantile(Math.min(1.0, (double) ranks.first() / numbers), conf, size)
                            .mean();
            double y =
                    ranks.single()
                            ? x
                            : pooled.quantile(
                                            Math.min(1.0, (double) ranks.second() / numbers),
                                            conf,
                                            size)
                                    .mean();
            return new ApproxResult(
                    ranks.combine(x, y),
                    Double.NEGATIVE_INFINITY,
                    Double.POSITIVE_INFINITY,
                    conf,
                    sampled,
                    population);
        }
        ApproxResult first = est.quantileAtRank(ranks.first(), conf);
        if (ranks.single()) {
            return new ApproxResult(
                    first.mean(), first.low(), first.high(), conf, sampled, population);
        }
        ApproxResult second = est.quantileAtRank(ranks.second(), conf);
        return interpolated(ranks, first, second, kept == numbers, conf, sampled, population);
    }

    /**
     * An interpolated answer from its two ranks' estimates: Spark's interpolation of the two point
     * estimates, the interval spanning both intervals; exact ({@code low = estimate = high}) when
     * {@code everyValue} was sampled (both estimates are then the values).
     */
    static ApproxResult interpolated(
            SparkPercentile.Ranks ranks,
            ApproxResult first,
            ApproxResult second,
            boolean everyValue,
            double conf,
            long sampled,
            long population) {
        double estimate = ranks.combine(first.mean(), second.mean());
        if (everyValue) {
            return new ApproxResult(estimate, estimate, estimate, conf, sampled, population);
        }
        double low = Math.min(first.low(), second.low());
        double high = Math.max(first.high(), second.high());
        if (!Double.isNaN(estimate)) { // (a rounding of the interpolation outside [a, b])
            low = Math.min(low, estimate);
            high = Math.max(high, estimate);
        }
        return new ApproxResult(estimate, low, high, conf, sampled, population);
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
                    double v = a.kind() == ApproxSpec.Kind.SUM ? sum.value() : sum.value() / n;
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
                                    false));
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
                                        false));
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
                                    false));
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
                                        false));
                    }
                }
            }
        }
    }
}
