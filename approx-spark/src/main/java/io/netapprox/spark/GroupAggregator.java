package io.netapprox.spark;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratifiedEstimator;
import io.netapprox.core.sampling.StratumAccumulator;
import io.netapprox.core.sampling.StratumSummary;
import io.netapprox.core.sampling.TopKAccumulator;
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
 *       ratio times the known record count. Counts are exact (every map output's group table
 *       carries its record count). Quantiles use the hypergeometric order-statistic interval
 *       ({@link QuantileAccumulator}) and top-k the per-key HT counts ({@link TopKAccumulator})
 *       over the pooled sample (see docs/spark.md for the caveat).
 *   <li>Sort shuffle: values are {@link ApproxRow}s, every group is complete, every answer exact.
 * </ul>
 */
final class GroupAggregator {
    private GroupAggregator() {}

    private static final class State {
        final List<StratumSample> strata = new ArrayList<>();
        final List<ApproxRow> rows = new ArrayList<>();
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
                s.rows.add((ApproxRow) v);
            }
        }
        List<Row> out = new ArrayList<>();
        for (Map.Entry<String, State> e : groups.entrySet()) {
            State s = e.getValue();
            if (!s.strata.isEmpty() && !s.rows.isEmpty()) {
                throw new IllegalStateException(
                        "group " + e.getKey() + " got sampled and exact input");
            }
            if (s.strata.isEmpty()) {
                exact(spec, e.getKey(), s.rows, out);
            } else {
                approximate(spec, e.getKey(), s.strata, out);
            }
        }
        return out;
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
        long messages = 0;
        for (StratumSample s : strata) {
            population += s.records;
            sampled += s.sampledRecords();
            messages += s.messages;
        }
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            switch (a.kind()) {
                case AVG, SUM -> {
                    List<StratumSummary> sums = new ArrayList<>();
                    for (StratumSample s : strata) {
                        StratumAccumulator acc = new StratumAccumulator();
                        for (ApproxRow[] m : s.delivered) {
                            double y = 0;
                            for (ApproxRow r : m) {
                                y += r.values[a.valueIndex()];
                            }
                            acc.add(y, m.length);
                        }
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
                        sums.add(acc.summarize(s.messages));
                    }
                    ApproxResult r = StratifiedEstimator.mean(sums, conf);
                    if (a.kind() == ApproxSpec.Kind.SUM) {
                        // ratio estimator of the total with the known record count M (every map
                        // output's group
                        // table carries it): M * R_hat, interval M * [low, high]. Unlike the plain
                        // HT total
                        // N_g * ybar_g it does not depend on how records were cut into messages
                        // (the last,
                        // shorter message of a stratum, favoured by MRDF, would bias it).
                        r =
                                new ApproxResult(
                                        population * r.mean(),
                                        population * r.low(),
                                        population * r.high(),
                                        r.confidence(),
                                        r.sampleSize(),
                                        r.populationSize());
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
                case QUANTILE -> {
                    QuantileAccumulator q = new QuantileAccumulator();
                    for (StratumSample s : strata) {
                        for (ApproxRow[] m : s.delivered) {
                            for (ApproxRow r : m) {
                                q.add(r.values[a.valueIndex()]);
                            }
                        }
                    }
                    out.add(
                            row(
                                    group,
                                    a.label(),
                                    null,
                                    null,
                                    q.quantile(a.q(), conf, population),
                                    eMax,
                                    sampled,
                                    population,
                                    true));
                }
                case TOPK -> {
                    TopKAccumulator<String> acc = new TopKAccumulator<>();
                    for (StratumSample s : strata) {
                        for (ApproxRow[] m : s.delivered) {
                            Map<String, Long> counts = new HashMap<>();
                            for (ApproxRow r : m) {
                                counts.merge(r.key, 1L, Long::sum);
                            }
                            acc.addMessage(counts);
                        }
                    }
                    TopKResult<String> top = acc.topK(a.k(), conf, messages);
                    int rank = 1;
                    for (TopKResult.KeyCount<String> kc : top.top()) {
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

    static void exact(ApproxSpec spec, String group, List<ApproxRow> rows, List<Row> out) {
        double conf = spec.confidence();
        double eMax = spec.errorBound(group);
        long n = rows.size();
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            switch (a.kind()) {
                case AVG, SUM -> {
                    double sum = 0;
                    for (ApproxRow r : rows) {
                        sum += r.values[a.valueIndex()];
                    }
                    double v = a.kind() == ApproxSpec.Kind.SUM ? sum : sum / n;
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
                    double[] v = new double[rows.size()];
                    for (int i = 0; i < v.length; i++) {
                        v[i] = rows.get(i).values[a.valueIndex()];
                    }
                    Arrays.sort(v);
                    int rank = (int) Math.max(1, Math.ceil(a.q() * v.length)); // same definition as
                    // QuantileAccumulator
                    out.add(
                            row(
                                    group,
                                    a.label(),
                                    null,
                                    null,
                                    ApproxResult.exact(v[rank - 1], conf, n),
                                    eMax,
                                    n,
                                    n,
                                    false));
                }
                case TOPK -> {
                    Map<String, Long> counts = new HashMap<>();
                    for (ApproxRow r : rows) {
                        counts.merge(r.key, 1L, Long::sum);
                    }
                    List<Map.Entry<String, Long>> es = new ArrayList<>(counts.entrySet());
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
