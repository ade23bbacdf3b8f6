package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.MsrPlannerTest.assertMessage;
import static io.netapprox.core.sampling.SamplingTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.commons.math3.distribution.ZipfDistribution;
import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;
import org.junit.jupiter.api.Test;

/** Quantile and top-k estimators: seeded coverage over 1,000 trials and exactness at MSR = 1. */
class QuantileTopKTest {

    private static final int TRIALS = 1000;

    private static int quantileCoverage(String name, double[] pop, int n, double q, long seed) {
        double truth = quantile(pop, q);
        RandomGenerator rng = new Well19937c(seed);
        int hits = 0;
        for (int t = 0; t < TRIALS; t++) {
            QuantileAccumulator acc = new QuantileAccumulator();
            for (int i : sampleIndices(pop.length, n, rng)) {
                acc.add(pop[i]);
            }
            if (acc.quantile(q, 0.95, pop.length).contains(truth)) {
                hits++;
            }
        }
        report(name, hits, TRIALS, "");
        return hits;
    }

    @Test
    void medianAndP90CoverageOnSkewedAndDiscreteData() {
        double[] logn = lognormalPopulation(4000, 201);
        int h1 = quantileCoverage("median lognormal n=200/4000", logn, 200, 0.5, 1);
        int h2 =
                quantileCoverage(
                        "p90 pareto(a=2.5) n=300/4000",
                        paretoPopulation(4000, 2.5, 202),
                        300,
                        0.9,
                        2);
        // Heavily tied data (values 0..4) and a high sampling fraction.
        double[] tied = new double[600];
        RandomGenerator g = new Well19937c(203);
        for (int i = 0; i < tied.length; i++) {
            tied[i] = g.nextInt(5);
        }
        int h3 = quantileCoverage("median tied 0..4 n=300/600", tied, 300, 0.5, 3);
        int h4 =
                quantileCoverage(
                        "median rare stratum n=9/20", normalPopulation(20, 204), 9, 0.5, 4);
        for (int h : new int[] {h1, h2, h4}) {
            assertTrue(h >= 930 && h <= 990, "quantile coverage " + h + "/1000");
        }
        assertTrue(h3 >= 930, "tied data coverage " + h3); // ties make it conservative (up to 1.0)
    }

    @Test
    void quantileExactForCompleteSampleAndUnboundedForTinySample() {
        double[] pop = lognormalPopulation(101, 205);
        QuantileAccumulator all = new QuantileAccumulator();
        QuantileAccumulator half1 = new QuantileAccumulator();
        QuantileAccumulator half2 = new QuantileAccumulator();
        for (int i = 0; i < pop.length; i++) {
            all.add(pop[i]);
            (i % 2 == 0 ? half1 : half2).add(pop[i]);
        }
        ApproxResult r = all.quantile(0.5, 0.95, pop.length);
        assertTrue(r.isExact());
        assertEquals(quantile(pop, 0.5), r.mean());
        assertEquals(r, half1.merge(half2).quantile(0.5, 0.95, pop.length));
        QuantileAccumulator tiny = new QuantileAccumulator().add(1).add(2).add(3);
        ApproxResult t = tiny.quantile(0.5, 0.95, 1000);
        assertEquals(Double.NEGATIVE_INFINITY, t.low());
        assertEquals(Double.POSITIVE_INFINITY, t.high());
        assertMessage(() -> tiny.quantile(0, 0.95, 1000), "quantile probability");
        assertMessage(() -> tiny.quantile(0.5, 0.95, 2), "population size");
        assertMessage(() -> new QuantileAccumulator().quantile(0.5, 0.95, 10), "no sampled values");
        assertMessage(() -> new QuantileAccumulator().add(Double.NaN), "NaN");
    }

    /** Zipf-distributed keys, one record per message. */
    private static int[] zipfKeys(int n, int keys, double exponent, long seed) {
        return new ZipfDistribution(new Well19937c(seed), keys, exponent).sample(n);
    }

    @Test
    void topKOnZipfKeys() {
        topKTrials("Zipf(200 keys, s=1.1)", zipfKeys(20_000, 200, 1.1, 301));
    }

    @Test
    void topKOnClearlySeparatedKeys() {
        // 15 heavy keys (~4.8% each) and 300 light keys (~0.08% each): the boundary should be
        // resolvable.
        RandomGenerator g = new Well19937c(303);
        int[] keys = new int[20_000];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = g.nextDouble() < 0.72 ? g.nextInt(15) : 15 + g.nextInt(300);
        }
        int separated = topKTrials("heavy/light keys", keys);
        assertTrue(separated >= 900, "separation detected in only " + separated + " trials");
    }

    /**
     * @return number of trials reported as separated
     */
    private static int topKTrials(String label, int[] keys) {
        int bigN = keys.length;
        int k = 15;
        Map<Integer, Integer> truth = new HashMap<>();
        for (int key : keys) {
            truth.merge(key, 1, Integer::sum);
        }
        List<Integer> byCount = new ArrayList<>(truth.keySet());
        byCount.sort((a, b) -> truth.get(b) - truth.get(a));
        Set<Integer> trueTop = new HashSet<>(byCount.subList(0, k));
        RandomGenerator rng = new Well19937c(302);
        long intervals = 0;
        long covered = 0;
        int separatedTrials = 0;
        int separatedCorrect = 0;
        int n = 4000;
        for (int t = 0; t < TRIALS; t++) {
            TopKAccumulator<Integer> a = new TopKAccumulator<>();
            TopKAccumulator<Integer> b = new TopKAccumulator<>();
            int[] idx = sampleIndices(bigN, n, rng);
            for (int j = 0; j < idx.length; j++) {
                (j % 2 == 0 ? a : b).add(keys[idx[j]]);
            }
            TopKResult<Integer> r = a.merge(b).topK(k, 0.95, bigN);
            assertEquals(k, r.top().size());
            for (TopKResult.KeyCount<Integer> kc : r.top()) {
                intervals++;
                if (kc.count().contains(truth.get(kc.key()))) {
                    covered++;
                }
            }
            if (r.separated()) {
                separatedTrials++;
                if (new HashSet<>(r.keys()).equals(trueTop)) {
                    separatedCorrect++;
                }
            }
        }
        report(
                "top-15 per-key coverage, " + label + " n=4000/20000",
                (int) covered,
                (int) intervals,
                "");
        report(
                "top-15 separated -> set correct, " + label,
                separatedCorrect,
                Math.max(1, separatedTrials),
                "(separated in " + separatedTrials + " trials)");
        assertTrue(
                (double) covered / intervals >= 0.93,
                "per-key coverage " + (double) covered / intervals);
        if (separatedTrials > 0) {
            assertTrue(
                    (double) separatedCorrect / separatedTrials >= 0.95, "separated but wrong set");
        }
        return separatedTrials;
    }

    @Test
    void topKIsExactWithCompleteSampleAndClusterMessages() {
        TopKAccumulator<String> acc = new TopKAccumulator<>();
        acc.addMessage(Map.of("a", 5, "b", 1));
        acc.addMessage(Map.of("a", 2, "c", 4));
        acc.addMessage(Map.of("b", 2));
        TopKResult<String> r = acc.topK(2, 0.95, 3);
        assertTrue(r.separated());
        assertEquals(List.of("a", "c"), r.keys());
        assertEquals(7.0, r.top().get(0).count().mean());
        assertTrue(r.top().get(0).count().isExact());
        assertEquals("b", r.runnerUp().key());
        // Not complete, fewer than k+1 keys seen: unseen keys may belong to the top-k -> not
        // separated.
        TopKResult<String> partial = acc.topK(3, 0.95, 30);
        assertFalse(partial.separated());
        assertEquals(3, partial.top().size());
        // Lower bound never below what was seen.
        assertTrue(partial.top().get(0).count().low() >= 7.0);
        assertMessage(() -> acc.topK(0, 0.95, 3), "k must be");
        assertMessage(() -> acc.topK(1, 0.95, 2), "population size");
        assertMessage(() -> acc.addMessage(Map.of("x", -1)), "record count");
        assertMessage(() -> new TopKAccumulator<String>().add(null), "key");
    }

    @Test
    void sortedKeysDeterministicOnTies() {
        TopKAccumulator<String> acc = new TopKAccumulator<>();
        for (String s : Arrays.asList("b", "a", "c")) {
            acc.add(s);
        }
        assertEquals(List.of("a", "b"), acc.topK(2, 0.95, 3).keys());
    }
}
