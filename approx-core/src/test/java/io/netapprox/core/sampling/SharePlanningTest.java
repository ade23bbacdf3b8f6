package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.SamplingTestSupport.report;
import static io.netapprox.core.sampling.ShareLayouts.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.commons.math3.distribution.ZipfDistribution;
import org.apache.commons.math3.random.Well19937c;
import org.junit.jupiter.api.Test;

/**
 * The group's e_max holds whatever the split of the group over its shares: {@link SharePlanner}
 * plans every share from the census statistics of all of them, each share is sampled as the Spark
 * writer frames it (records permuted, 8 per message, a random subset of messages delivered), and
 * the group estimate combines the shares ({@link StratifiedEstimator}, {@link StratifiedQuantile},
 * {@link StratifiedTopK}). 400 seeded trials per (distribution, layout, aggregate); acceptance:
 * within e_max in at least {@code confidence - 3 SE} of the trials per case (0.917 at 400 trials)
 * and per layout pooled over the distributions (0.935 at 2,000).
 */
class SharePlanningTest {

    private static final int TRIALS = 400;
    private static final int PER_MESSAGE = 8;
    private static final double CONFIDENCE = 0.95;
    private static final int GROUP = 40_000;

    private static double tolerance(int trials) {
        return CONFIDENCE - 3 * Math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / trials);
    }

    private static double[] concat(List<double[]> shares) {
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

    /** Samples the shares per plan, estimates, and counts trials within e_max of the truth. */
    private static int[] meanTrials(
            List<double[]> shares, ShareAllocation plan, double eMax, long seed) {
        double[] all = concat(shares);
        double truth = new ExactSum().merge(sumOf(all)).value() / all.length;
        List<ShareSampler> samplers = samplers(shares, PER_MESSAGE, seed);
        int within = 0;
        int covered = 0;
        for (int t = 0; t < TRIALS; t++) {
            List<StratumSummary> strata = new ArrayList<>();
            for (int m = 0; m < shares.size(); m++) {
                StratumAccumulator acc = new StratumAccumulator();
                for (double[] msg : samplers.get(m).deliver(plan.units(m))) {
                    double y = 0;
                    for (double v : msg) {
                        y += v;
                    }
                    acc.add(y, msg.length);
                }
                strata.add(acc.summarize(plan.populationUnits(m)));
            }
            ApproxResult r = StratifiedEstimator.mean(strata, CONFIDENCE);
            within += Math.abs(r.mean() - truth) <= eMax * Math.abs(truth) ? 1 : 0;
            covered += r.contains(truth) ? 1 : 0;
        }
        return new int[] {within, covered};
    }

    private static ExactSum sumOf(double[] xs) {
        ExactSum s = new ExactSum();
        for (double x : xs) {
            s.add(x);
        }
        return s;
    }

    private static int[] quantileTrials(
            List<double[]> shares, ShareAllocation plan, double q, double eMax, long seed) {
        double truth = SamplingTestSupport.quantile(concat(shares), q);
        List<ShareSampler> samplers = samplers(shares, PER_MESSAGE, seed);
        int within = 0;
        int covered = 0;
        for (int t = 0; t < TRIALS; t++) {
            StratifiedQuantile est = new StratifiedQuantile();
            for (int m = 0; m < shares.size(); m++) {
                QuantileAccumulator acc = new QuantileAccumulator();
                for (double[] msg : samplers.get(m).deliver(plan.units(m))) {
                    for (double v : msg) {
                        acc.add(v);
                    }
                }
                est.addShare(acc, shares.get(m).length);
            }
            ApproxResult r = est.quantile(q, CONFIDENCE);
            within += Math.abs(r.mean() - truth) <= eMax * Math.abs(truth) ? 1 : 0;
            covered += r.contains(truth) ? 1 : 0;
        }
        return new int[] {within, covered};
    }

    private static double fraction(ShareAllocation plan) {
        long n = 0;
        long all = 0;
        for (int m = 0; m < plan.shares(); m++) {
            n += plan.units(m);
            all += plan.populationUnits(m);
        }
        return (double) n / all;
    }

    @Test
    void meanMeetsEmaxOnEveryLayoutAndDistribution() {
        double eMax = 0.1;
        SharePlanner planner = SharePlanner.of(eMax, CONFIDENCE);
        Map<Layout, int[]> pooled = new EnumMap<>(Layout.class);
        List<String> failures = new ArrayList<>();
        long seed = 100;
        for (Population p : distributions(GROUP, 11)) {
            for (Layout layout : Layout.values()) {
                List<double[]> shares = split(p.values(), layout, seed++);
                ShareAllocation plan = planner.mean(moments(shares, PER_MESSAGE));
                int[] r = meanTrials(shares, plan, eMax, seed++);
                String name =
                        String.format(Locale.ROOT, "mean e=10%% %-16s %-9s", p.name(), layout);
                report(
                        name,
                        r[0],
                        TRIALS,
                        String.format(
                                Locale.ROOT,
                                "within e_max (coverage %.3f, %.1f%% sampled)",
                                (double) r[1] / TRIALS,
                                100 * fraction(plan)));
                int[] acc = pooled.computeIfAbsent(layout, k -> new int[2]);
                acc[0] += r[0];
                acc[1] += TRIALS;
                if ((double) r[0] / TRIALS < tolerance(TRIALS)) {
                    failures.add(name + " " + r[0] + "/" + TRIALS);
                }
            }
        }
        assertPooled(pooled, failures, "mean");
    }

    @Test
    void quantilesMeetEmaxOnEveryLayoutAndDistribution() {
        double eMax = 0.05;
        SharePlanner planner = SharePlanner.of(eMax, CONFIDENCE);
        Map<Layout, int[]> pooled = new EnumMap<>(Layout.class);
        List<String> failures = new ArrayList<>();
        long seed = 500;
        for (double q : new double[] {0.5, 0.9}) {
            for (Population p : distributions(GROUP, 21)) {
                for (Layout layout : Layout.values()) {
                    List<double[]> shares = split(p.values(), layout, seed++);
                    ShareAllocation plan =
                            planner.quantile(sketches(shares), units(shares, PER_MESSAGE), q);
                    int[] r = quantileTrials(shares, plan, q, eMax, seed++);
                    String name =
                            String.format(
                                    Locale.ROOT,
                                    "q%.0f e=5%% %-16s %-9s",
                                    100 * q,
                                    p.name(),
                                    layout);
                    report(
                            name,
                            r[0],
                            TRIALS,
                            String.format(
                                    Locale.ROOT,
                                    "within e_max (coverage %.3f, %.1f%% sampled)",
                                    (double) r[1] / TRIALS,
                                    100 * fraction(plan)));
                    int[] acc = pooled.computeIfAbsent(layout, k -> new int[2]);
                    acc[0] += r[0];
                    acc[1] += TRIALS;
                    if ((double) r[0] / TRIALS < tolerance(TRIALS)) {
                        failures.add(name + " " + r[0] + "/" + TRIALS);
                    }
                }
            }
        }
        assertPooled(pooled, failures, "quantile");
    }

    private static void assertPooled(
            Map<Layout, int[]> pooled, List<String> failures, String what) {
        for (Map.Entry<Layout, int[]> e : pooled.entrySet()) {
            int[] acc = e.getValue();
            report(what + " pooled " + e.getKey(), acc[0], acc[1], "within e_max");
            assertTrue(
                    (double) acc[0] / acc[1] >= tolerance(acc[1]),
                    what + " " + e.getKey() + ": " + acc[0] + "/" + acc[1]);
        }
        assertTrue(failures.isEmpty(), "cases under " + tolerance(TRIALS) + ": " + failures);
    }

    @Test
    void previousBalancedRuleMissesClusteredGroupsAndSharePlanningDoesNot() {
        // The rule this replaces planned each of M shares for e_max*sqrt(M) from its own
        // statistics: right for
        // equal shares, e_max*sqrt(M) for a group in one share. Reference numbers for
        // docs/sampling.md.
        double eMax = 0.05;
        double[] pop = SamplingTestSupport.lognormalPopulation(GROUP, 31);
        List<double[]> shares = split(pop, Layout.CLUSTERED, 32);
        List<ShareMoments> moments = moments(shares, PER_MESSAGE);
        ShareAllocation balanced = SharePlanner.of(eMax * Math.sqrt(8), CONFIDENCE).mean(moments);
        ShareAllocation planned = SharePlanner.of(eMax, CONFIDENCE).mean(moments);
        int before = meanTrials(shares, balanced, eMax, 33)[0];
        int now = meanTrials(shares, planned, eMax, 33)[0];
        report("lognormal(0,1) in 1 of 8: e_max*sqrt(8) rule", before, TRIALS, "within e_max");
        report("lognormal(0,1) in 1 of 8: share planning", now, TRIALS, "within e_max");
        assertTrue((double) before / TRIALS < 0.8, "the old rule should miss: " + before);
        assertTrue((double) now / TRIALS >= tolerance(TRIALS), "share planning " + now);
    }

    @Test
    void allocationAlgebra() {
        double[] pop = SamplingTestSupport.lognormalPopulation(GROUP, 41);
        SharePlanner planner = SharePlanner.of(0.05, CONFIDENCE);
        // one share: the single-stratum sample size (same formula, same critical value rule) up to
        // the skewness rule
        List<double[]> one = split(pop, Layout.CLUSTERED, 42);
        ShareMoments m = moments(one, 1).get(0);
        ShareAllocation single = planner.withMinUnits(2).mean(List.of(m));
        MsrPlan reference =
                MsrPlanner.of(0.05, CONFIDENCE).plan(m.units(), m.mean(), Math.sqrt(m.variance()));
        assertTrue(single.units(0) >= reference.sampleSize(), single + " vs " + reference);
        // equal shares: together about the single share's size (one message = one record here), and
        // equal parts
        // when the shares are alike (a normal population; a lognormal's shares differ in spread, so
        // do their parts)
        List<double[]> equal = split(pop, Layout.EQUAL, 43);
        ShareAllocation parts = planner.mean(moments(equal, 1));
        assertEquals(single.totalUnits(), parts.totalUnits(), 0.1 * single.totalUnits());
        ShareAllocation alike =
                SharePlanner.of(0.002, CONFIDENCE)
                        .mean(
                                moments(
                                        split(
                                                SamplingTestSupport.normalPopulation(GROUP, 45),
                                                Layout.EQUAL,
                                                46),
                                        1));
        for (int s = 1; s < 8; s++) {
            assertEquals(alike.units(0), alike.units(s), 0.05 * alike.units(0), alike.toString());
        }
        // a share with twice the spread gets twice the sample (Neyman)
        double[] a = SamplingTestSupport.normalPopulation(20_000, 44);
        double[] b = a.clone();
        for (int i = 0; i < b.length; i++) {
            b[i] = 100 + 2 * (b[i] - 100);
        }
        ShareAllocation neyman = SharePlanner.of(0.002, CONFIDENCE).mean(moments(List.of(a, b), 1));
        assertEquals(2.0, (double) neyman.units(1) / neyman.units(0), 0.05, neyman.toString());
        // rates give exactly the planned sizes under ATP's ceil(MSR * N)
        for (int s = 0; s < parts.shares(); s++) {
            assertEquals(
                    parts.units(s),
                    (long) Math.ceil(parts.rate(s) * parts.populationUnits(s) - 1e-9));
        }
        // a tiny e_max asks a census; zero variance the minimum; mean 0 with spread a census
        assertEquals(
                single.populationUnits(0),
                SharePlanner.of(1e-5, CONFIDENCE).mean(List.of(m)).units(0));
        ShareMoments flat = new ShareMoments(100, 800, 5.0, 0.0, 0.0);
        assertEquals(2, planner.mean(List.of(flat)).units(0));
        ShareMoments centred = new ShareMoments(100, 800, 0.0, 4.0, 0.0);
        assertEquals(100, planner.mean(List.of(centred)).units(0));
        // the plan of several aggregates is the per-share maximum
        ShareAllocation q = planner.quantile(sketches(equal), units(equal, 1), 0.5);
        ShareAllocation both = parts.max(q);
        for (int s = 0; s < 8; s++) {
            assertEquals(Math.max(parts.units(s), q.units(s)), both.units(s));
        }
    }

    @Test
    void sketchLocatesQuantilesAndCountsExactlyWhenSmall() {
        double[] pop = SamplingTestSupport.lognormalPopulation(100_000, 51);
        ValueSketch s = ValueSketch.of(pop);
        double median = SamplingTestSupport.quantile(pop, 0.5);
        double p90 = SamplingTestSupport.quantile(pop, 0.9);
        assertEquals(50_000, s.atMost(median), 100_000 / 256.0);
        assertEquals(90_000, s.below(p90 * 1.0000001), 100_000 / 256.0);
        assertEquals(median, SharePlanner.groupValueAtRank(List.of(s), 50_000), 0.01 * median);
        double[] small = {3, 1, 2, 2, 5};
        ValueSketch exact = ValueSketch.of(small);
        assertTrue(exact.isExact());
        assertEquals(3, exact.atMost(2));
        assertEquals(1, exact.below(2));
        assertEquals(5, exact.atMost(5));
        assertEquals(0, exact.below(1));
        assertEquals(2.0, SharePlanner.groupValueAtRank(List.of(exact), 3));
        assertThrows(
                IllegalArgumentException.class, () -> ValueSketch.of(new double[] {1, Double.NaN}));
    }

    @Test
    void sketchOfARandomSampleScalesRanksToTheShare() {
        // the Spark writer sketches a large share from the first 65,536 of its values in random
        // order (a simple random sample); counts below x then carry the sample's rank error
        double[] pop = SamplingTestSupport.lognormalPopulation(400_000, 52);
        double[] shuffled = pop.clone();
        java.util.Random rnd = new java.util.Random(53);
        for (int i = shuffled.length - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            double t = shuffled[i];
            shuffled[i] = shuffled[j];
            shuffled[j] = t;
        }
        ValueSketch s = ValueSketch.ofSample(shuffled, 65_536, pop.length, 256);
        assertFalse(s.isExact());
        assertEquals(pop.length, s.count());
        for (double q : new double[] {0.1, 0.5, 0.9}) {
            double x = SamplingTestSupport.quantile(pop, q);
            // 1/256 of the share (the points) plus 4 sampling SEs of the fraction
            double tol = pop.length * (1.0 / 256 + 4 * Math.sqrt(q * (1 - q) / 65_536));
            assertEquals(q * pop.length, s.atMost(x), tol, "q=" + q);
        }
        assertEquals(
                SamplingTestSupport.quantile(pop, 0.5),
                SharePlanner.groupValueAtRank(List.of(s), pop.length / 2),
                0.02 * SamplingTestSupport.quantile(pop, 0.5));
        ValueSketch whole = ValueSketch.ofSample(new double[] {3, 1, 2}, 3, 3, 256);
        assertTrue(whole.isExact());
        assertThrows(
                IllegalArgumentException.class,
                () -> ValueSketch.ofSample(new double[] {1, 2}, 2, 1, 256));
    }

    @Test
    void topKCountsMeetEmaxOnClusteredEqualAndGeometricLayouts() {
        // Zipf keys; the top-15 keys' counts must each be within e_max (per key), at the stated
        // rate
        double eMax = 0.1;
        int k = 15;
        int[] keys = new ZipfDistribution(new Well19937c(61), 300, 1.1).sample(GROUP);
        SharePlanner planner = SharePlanner.of(eMax, CONFIDENCE);
        long seed = 62;
        int within = 0;
        int checks = 0;
        double[] asDouble = new double[keys.length];
        for (int i = 0; i < keys.length; i++) {
            asDouble[i] = keys[i];
        }
        for (Layout layout : new Layout[] {Layout.CLUSTERED, Layout.EQUAL, Layout.GEOMETRIC}) {
            List<double[]> shares = split(asDouble, layout, seed++);
            Map<Double, Long> truth = new HashMap<>();
            List<SharePlanner.KeyCounts<Double>> counts = new ArrayList<>();
            for (double[] s : shares) {
                Map<Double, Long> c = new HashMap<>();
                for (double v : s) {
                    c.merge(v, 1L, Long::sum);
                    truth.merge(v, 1L, Long::sum);
                }
                counts.add(
                        new SharePlanner.KeyCounts<>(units(s.length, PER_MESSAGE), s.length, c, 0));
            }
            ShareAllocation plan = planner.topK(counts, k);
            List<ShareSampler> samplers = samplers(shares, PER_MESSAGE, seed++);
            int layoutWithin = 0;
            int layoutChecks = 0;
            for (int t = 0; t < TRIALS; t++) {
                StratifiedTopK<Double> est = new StratifiedTopK<>();
                for (int m = 0; m < shares.size(); m++) {
                    TopKAccumulator<Double> acc = new TopKAccumulator<>();
                    for (double[] msg : samplers.get(m).deliver(plan.units(m))) {
                        Map<Double, Integer> c = new HashMap<>();
                        for (double v : msg) {
                            c.merge(v, 1, Integer::sum);
                        }
                        acc.addMessage(c);
                    }
                    est.addShare(acc, plan.populationUnits(m));
                }
                for (TopKResult.KeyCount<Double> kc : est.topK(k, CONFIDENCE).top()) {
                    double tc = truth.get(kc.key());
                    layoutChecks++;
                    layoutWithin += Math.abs(kc.count().mean() - tc) <= eMax * tc ? 1 : 0;
                }
            }
            report(
                    "top-15 counts e=10% zipf " + layout,
                    layoutWithin,
                    layoutChecks,
                    String.format(
                            Locale.ROOT, "within e_max (%.1f%% sampled)", 100 * fraction(plan)));
            within += layoutWithin;
            checks += layoutChecks;
        }
        assertTrue(
                (double) within / checks >= tolerance(checks / 15),
                "top-k within e_max " + within + "/" + checks);
    }
}
