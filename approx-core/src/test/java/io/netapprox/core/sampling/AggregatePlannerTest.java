package io.netapprox.core.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The plan over a query's aggregates: the per-share maximum of the aggregates' allocations, each
 * from the statistic its framework measured, nothing beyond the minimum where the answer is exact,
 * and (statistically, seeded) each aggregate within e_max at the confidence when the largest plan
 * is sampled.
 */
class AggregatePlannerTest {
    private static final AggregatePlanner.Statistic MINIMUM = AggregatePlanner.Statistic.MINIMUM;

    /** Shares of one record per message. */
    private static long[] units(List<double[]> shares) {
        return shares.stream().mapToLong(s -> s.length).toArray();
    }

    private static AggregatePlanner.Statistic mean(List<double[]> shares) {
        List<ShareMoments> out = new ArrayList<>();
        for (double[] s : shares) {
            StratumAccumulator acc = new StratumAccumulator();
            for (double x : s) {
                acc.add(x);
            }
            out.add(ShareMoments.of(acc, s.length));
        }
        return AggregatePlanner.Statistic.moments(out);
    }

    /**
     * The quantile read at rank ceil(q n), n counting {@code nan} NaN values besides the shares.
     */
    private static AggregatePlanner.Statistic quantile(List<double[]> shares, long nan, double q) {
        long n = nan + Arrays.stream(units(shares)).sum();
        return AggregatePlanner.Statistic.quantile(
                shares.stream().map(ValueSketch::of).toList(),
                nan,
                (long) Math.max(1, Math.ceil(q * n - 1e-9)));
    }

    private static double[] lognormal(SplittableRandom rnd, int n) {
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = Math.exp(0.8 * gaussian(rnd)) + 1;
        }
        return out;
    }

    private static double gaussian(SplittableRandom rnd) {
        return Math.sqrt(-2 * Math.log(1 - rnd.nextDouble()))
                * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    @Test
    void theLargestAllocationPerShare() {
        SplittableRandom rnd = new SplittableRandom(1);
        List<double[]> d = List.of(lognormal(rnd, 4000), lognormal(rnd, 1500));
        long[] u = units(d);
        SharePlanner planner = SharePlanner.of(0.02, 0.95);
        ShareAllocation mean = AggregatePlanner.plan(planner, u, List.of(mean(d)));
        ShareAllocation p90 = AggregatePlanner.plan(planner, u, List.of(quantile(d, 0, 0.9)));
        ShareAllocation both =
                AggregatePlanner.plan(planner, u, List.of(mean(d), MINIMUM, quantile(d, 0, 0.9)));
        assertEquals(mean.max(p90).totalUnits(), both.totalUnits());
        for (int m = 0; m < 2; m++) {
            assertEquals(Math.max(mean.units(m), p90.units(m)), both.units(m));
        }
        assertTrue(mean.units(0) > planner.minUnits(), "the mean is planned: " + mean);
        assertTrue(p90.units(0) > planner.minUnits(), "the quantile is planned: " + p90);
        // the quantile is planned at its own rank: a median asks another sample than the p90
        ShareAllocation median = AggregatePlanner.plan(planner, u, List.of(quantile(d, 0, 0.5)));
        assertTrue(median.totalUnits() != p90.totalUnits(), median + " vs " + p90);
        // two ranks (an interpolated quantile): the larger plan of the two
        ShareAllocation interpolated =
                AggregatePlanner.plan(
                        planner,
                        u,
                        List.of(
                                AggregatePlanner.Statistic.quantile(
                                        d.stream().map(ValueSketch::of).toList(), 0, 2750, 4950)));
        assertEquals(
                AggregatePlanner.plan(planner, u, List.of(quantile(d, 0, 0.5), quantile(d, 0, 0.9)))
                        .totalUnits(),
                interpolated.totalUnits());
    }

    /**
     * A group of one share planned from its messages (Flink's stratum) gets exactly {@link
     * MsrPlanner}'s sample, Cochran's rule on the messages' skewness included.
     */
    @Test
    void messageStatisticsArePlannedAsOneStratum() {
        SharePlanner planner = SharePlanner.of(0.05, 0.95);
        MsrPlanner msr = MsrPlanner.of(0.05, 0.95);
        long[] u = {400};
        ShareAllocation plain =
                AggregatePlanner.plan(
                        planner,
                        u,
                        List.of(AggregatePlanner.Statistic.messages(10, 8, Double.NaN)));
        assertEquals(msr.plan(400, 10, 8).sampleSize(), plain.units(0));
        assertEquals(msr.plan(400, 10, 8).msr(), plain.rate(0));
        assertTrue(plain.units(0) > 2 && plain.units(0) < 400, plain.toString());
        ShareAllocation skewed =
                AggregatePlanner.plan(
                        planner, u, List.of(AggregatePlanner.Statistic.messages(10, 4, 3.0)));
        assertEquals(msr.plan(400, 10, 4, 3.0).sampleSize(), skewed.units(0));
        assertEquals(225, skewed.units(0)); // Cochran: 25 * 3^2
        // the maximum with another aggregate's plan of the same share
        ShareAllocation both =
                AggregatePlanner.plan(
                        planner,
                        u,
                        List.of(
                                AggregatePlanner.Statistic.messages(10, 4, Double.NaN),
                                AggregatePlanner.Statistic.messages(10, 4, 3.0)));
        assertTrue(msr.plan(400, 10, 4).sampleSize() < 225); // the skewness rule raised it
        assertEquals(225, both.units(0));
        // no variation: the minimum; a statistic that is not a number: the whole share
        assertEquals(
                2,
                AggregatePlanner.plan(
                                planner,
                                u,
                                List.of(AggregatePlanner.Statistic.messages(10, 0, Double.NaN)))
                        .units(0));
        assertEquals(
                400,
                AggregatePlanner.plan(
                                planner,
                                u,
                                List.of(
                                        AggregatePlanner.Statistic.messages(
                                                Double.NaN, 1, Double.NaN)))
                        .units(0));
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                AggregatePlanner.plan(
                                        planner,
                                        new long[] {10, 10},
                                        List.of(AggregatePlanner.Statistic.messages(1, 1, 0))));
        assertTrue(e.getMessage().contains("one share"), e.getMessage());
    }

    @Test
    void exactAnswersNeedOnlyTheMinimum() {
        SplittableRandom rnd = new SplittableRandom(2);
        SharePlanner planner = SharePlanner.of(0.01, 0.95);
        List<double[]> d = List.of(lognormal(rnd, 3000));
        long min = planner.minimum(units(d)).totalUnits();
        assertEquals(min, AggregatePlanner.plan(planner, units(d), List.of(MINIMUM)).totalUnits());
        assertEquals(min, AggregatePlanner.plan(planner, units(d), List.of()).totalUnits());
        // a rank among the NaN values (they sort last) answers NaN; below them it is planned
        long[] withNaN = {4000};
        assertEquals(
                min,
                AggregatePlanner.plan(planner, withNaN, List.of(quantile(d, 1000, 0.9)))
                        .totalUnits());
        assertTrue(
                AggregatePlanner.plan(planner, withNaN, List.of(quantile(d, 1000, 0.5)))
                                .totalUnits()
                        > min);
        // an empty group, and a column of NaN values only, need nothing
        List<double[]> empty = List.of(new double[0]);
        assertEquals(
                0,
                AggregatePlanner.plan(planner, new long[] {0}, List.of(quantile(empty, 0, 0.5)))
                        .totalUnits());
        assertEquals(
                2,
                AggregatePlanner.plan(planner, new long[] {50}, List.of(quantile(empty, 50, 0.5)))
                        .totalUnits());
    }

    /**
     * Seeded trials: sampling each share's planned messages (without replacement), the group mean
     * and its median are both within e_max in at least confidence - 0.03 of 400 trials (~3 Monte
     * Carlo standard errors, sqrt(0.95 * 0.05 / 400) = 0.011).
     */
    @Test
    void everyAggregateMeetsTheBoundUnderTheLargestPlan() {
        SplittableRandom rnd = new SplittableRandom(3);
        double e = 0.02;
        double confidence = 0.95;
        List<double[]> shares = List.of(lognormal(rnd, 6000), lognormal(rnd, 2000));
        ShareAllocation plan =
                AggregatePlanner.plan(
                        SharePlanner.of(e, confidence),
                        units(shares),
                        List.of(mean(shares), quantile(shares, 0, 0.5)));
        double[] all = shares.stream().flatMapToDouble(Arrays::stream).toArray();
        double mean = Arrays.stream(all).average().orElseThrow();
        double[] sorted = all.clone();
        Arrays.sort(sorted);
        double median = sorted[(int) Math.ceil(0.5 * sorted.length) - 1];
        int trials = 400;
        int meanOk = 0;
        int medianOk = 0;
        for (int t = 0; t < trials; t++) {
            double total = 0;
            List<double[]> weighted = new ArrayList<>();
            for (int m = 0; m < shares.size(); m++) {
                double[] s = sample(shares.get(m), (int) plan.units(m), rnd);
                double w = (double) shares.get(m).length / s.length;
                for (double x : s) {
                    total += w * x;
                    weighted.add(new double[] {x, w});
                }
            }
            meanOk += Math.abs(total / all.length - mean) <= e * mean ? 1 : 0;
            weighted.sort((a, b) -> Double.compare(a[0], b[0]));
            double acc = 0;
            double est = Double.NaN;
            for (double[] xw : weighted) {
                acc += xw[1];
                if (acc >= 0.5 * all.length - 1e-9) {
                    est = xw[0];
                    break;
                }
            }
            medianOk += Math.abs(est - median) <= e * Math.abs(median) ? 1 : 0;
        }
        double floor = confidence - 0.03;
        assertTrue(meanOk >= floor * trials, "mean within e_max in " + meanOk + "/" + trials);
        assertTrue(medianOk >= floor * trials, "median within e_max in " + medianOk + "/" + trials);
        // and the plan is a sample, not a census
        assertTrue(plan.totalUnits() < all.length / 2, plan.toString());
    }

    private static double[] sample(double[] pop, int n, SplittableRandom rnd) {
        double[] a = pop.clone();
        for (int i = 0; i < n; i++) {
            int j = i + rnd.nextInt(a.length - i);
            double x = a[i];
            a[i] = a[j];
            a[j] = x;
        }
        return Arrays.copyOf(a, n);
    }
}
