package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.SamplingTestSupport.report;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.math3.distribution.LogNormalDistribution;
import org.apache.commons.math3.distribution.ZipfDistribution;
import org.apache.commons.math3.random.Well19937c;
import org.junit.jupiter.api.Test;

/**
 * Medians, p90 and top-k when a group's shares arrive at different fractions (one share delivered
 * whole, the others near their minimum, as {@code submit=all} on an idle network or a clustered
 * plan produces) and differ in distribution: {@link StratifiedQuantile} and {@link StratifiedTopK}
 * weight each share by its own inclusion fraction; pooling the shares as one simple random sample
 * (the previous estimator) is biased. 1,000 seeded trials; acceptance: coverage in [0.93, 0.99].
 */
class UnequalFractionsTest {

    private static final int TRIALS = 1000;
    private static final int PER_MESSAGE = 8;
    private static final double CONFIDENCE = 0.95;

    /**
     * Share A whole, B at 4% of its messages, C at 10%; their distributions differ in level and
     * spread.
     */
    private static List<double[]> shares() {
        return List.of(
                new LogNormalDistribution(new Well19937c(71), 0, 1).sample(8000),
                new LogNormalDistribution(new Well19937c(72), 1.2, 0.5).sample(12_000),
                new LogNormalDistribution(new Well19937c(73), -0.5, 1.5).sample(4000));
    }

    private static final double[] FRACTIONS = {1.0, 0.04, 0.10};

    @Test
    void quantilesCoverAtUnequalFractionsWherePoolingIsBiased() {
        List<double[]> shares = shares();
        double[] all = concat(shares);
        for (double q : new double[] {0.5, 0.9}) {
            double truth = SamplingTestSupport.quantile(all, q);
            List<ShareLayouts.ShareSampler> samplers =
                    ShareLayouts.samplers(shares, PER_MESSAGE, (long) (q * 100));
            int covered = 0;
            int pooledCovered = 0;
            double bias = 0;
            double pooledBias = 0;
            for (int t = 0; t < TRIALS; t++) {
                StratifiedQuantile weighted = new StratifiedQuantile();
                QuantileAccumulator pooled = new QuantileAccumulator();
                for (int m = 0; m < shares.size(); m++) {
                    long units = ShareLayouts.units(shares.get(m).length, PER_MESSAGE);
                    QuantileAccumulator acc = new QuantileAccumulator();
                    for (double[] msg :
                            samplers.get(m).deliver((long) Math.ceil(FRACTIONS[m] * units))) {
                        for (double v : msg) {
                            acc.add(v);
                            pooled.add(v);
                        }
                    }
                    weighted.addShare(acc, shares.get(m).length);
                }
                ApproxResult w = weighted.quantile(q, CONFIDENCE);
                ApproxResult p = pooled.quantile(q, CONFIDENCE, all.length);
                covered += w.contains(truth) ? 1 : 0;
                pooledCovered += p.contains(truth) ? 1 : 0;
                bias += (w.mean() - truth) / truth / TRIALS;
                pooledBias += (p.mean() - truth) / truth / TRIALS;
            }
            report(
                    String.format(
                            "q%.0f unequal fractions: weighted (mean rel. bias %+.4f)",
                            100 * q, bias),
                    covered,
                    TRIALS,
                    "");
            report(
                    String.format(
                            "q%.0f unequal fractions: pooled   (mean rel. bias %+.4f)",
                            100 * q, pooledBias),
                    pooledCovered,
                    TRIALS,
                    "(the previous estimator)");
            assertTrue(covered >= 930 && covered <= 990, "q" + q + " weighted coverage " + covered);
            assertTrue(pooledCovered < 800, "pooling should be biased here: " + pooledCovered);
        }
    }

    @Test
    void topKCountsCoverAtUnequalFractions() {
        // each share has its own key popularity (Zipf over shifted key ranges)
        int[][] keys = {
            new ZipfDistribution(new Well19937c(81), 200, 1.1).sample(8000),
            new ZipfDistribution(new Well19937c(82), 200, 0.9).sample(12_000),
            new ZipfDistribution(new Well19937c(83), 200, 1.3).sample(4000)
        };
        int[] shift = {0, 5, 10};
        List<double[]> shares = new ArrayList<>();
        Map<Double, Integer> truth = new HashMap<>();
        for (int m = 0; m < 3; m++) {
            double[] s = new double[keys[m].length];
            for (int i = 0; i < s.length; i++) {
                s[i] = keys[m][i] + shift[m];
                truth.merge(s[i], 1, Integer::sum);
            }
            shares.add(s);
        }
        List<ShareLayouts.ShareSampler> samplers = ShareLayouts.samplers(shares, PER_MESSAGE, 84);
        long intervals = 0;
        long covered = 0;
        long pooledIntervals = 0;
        long pooledCovered = 0;
        for (int t = 0; t < TRIALS; t++) {
            StratifiedTopK<Double> weighted = new StratifiedTopK<>();
            TopKAccumulator<Double> pooled = new TopKAccumulator<>();
            long allUnits = 0;
            for (int m = 0; m < 3; m++) {
                long units = ShareLayouts.units(shares.get(m).length, PER_MESSAGE);
                allUnits += units;
                TopKAccumulator<Double> acc = new TopKAccumulator<>();
                for (double[] msg :
                        samplers.get(m).deliver((long) Math.ceil(FRACTIONS[m] * units))) {
                    Map<Double, Integer> c = new HashMap<>();
                    for (double v : msg) {
                        c.merge(v, 1, Integer::sum);
                    }
                    acc.addMessage(c);
                    pooled.addMessage(c);
                }
                weighted.addShare(acc, units);
            }
            for (TopKResult.KeyCount<Double> kc : weighted.topK(15, CONFIDENCE).top()) {
                intervals++;
                covered += kc.count().contains(truth.get(kc.key())) ? 1 : 0;
            }
            for (TopKResult.KeyCount<Double> kc : pooled.topK(15, CONFIDENCE, allUnits).top()) {
                pooledIntervals++;
                pooledCovered += kc.count().contains(truth.get(kc.key())) ? 1 : 0;
            }
        }
        report("top-15 counts unequal fractions: weighted", (int) covered, (int) intervals, "");
        report(
                "top-15 counts unequal fractions: pooled",
                (int) pooledCovered,
                (int) pooledIntervals,
                "(the previous estimator)");
        double c = (double) covered / intervals;
        assertTrue(c >= 0.93 && c <= 0.99, "top-k weighted coverage " + c);
        assertTrue((double) pooledCovered / pooledIntervals < 0.8, "pooling should be biased here");
    }

    @Test
    void completeSharesAreExactAndSingleShareKeepsTheDistributionFreeInterval() {
        List<double[]> shares = shares();
        StratifiedQuantile complete = new StratifiedQuantile();
        for (double[] s : shares) {
            QuantileAccumulator acc = new QuantileAccumulator();
            for (double v : s) {
                acc.add(v);
            }
            complete.addShare(acc, s.length);
        }
        ApproxResult r = complete.quantile(0.5, CONFIDENCE);
        assertTrue(r.isExact());
        assertEquals(SamplingTestSupport.quantile(concat(shares), 0.5), r.mean());
        QuantileAccumulator one = new QuantileAccumulator();
        for (int i = 0; i < 400; i++) {
            one.add(shares.get(0)[i]);
        }
        assertEquals(
                one.quantile(0.5, CONFIDENCE, 8000),
                new StratifiedQuantile().addShare(one, 8000).quantile(0.5, CONFIDENCE));
        assertThrows(
                IllegalArgumentException.class,
                () -> new StratifiedQuantile().addShare(new QuantileAccumulator(), 10));
        StratifiedTopK<String> topK = new StratifiedTopK<>();
        TopKAccumulator<String> a = new TopKAccumulator<>();
        a.addMessage(Map.of("x", 3, "y", 1));
        a.addMessage(Map.of("y", 1));
        topK.addShare(a, 2);
        TopKResult<String> t = topK.topK(1, CONFIDENCE);
        assertTrue(t.separated());
        assertEquals("x", t.top().get(0).key());
        assertTrue(t.top().get(0).count().isExact());
        assertEquals(3.0, t.top().get(0).count().mean());
    }

    static double[] concat(List<double[]> shares) {
        int n = 0;
        for (double[] s : shares) {
            n += s.length;
        }
        double[] all = new double[n];
        int at = 0;
        for (double[] s : shares) {
            System.arraycopy(s, 0, all, at, s.length);
            at += s.length;
        }
        return all;
    }
}
