package io.netapprox.core.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The plan over a query's aggregates: the per-share maximum of the aggregates' allocations, nothing
 * beyond the minimum where the answer is exact, and (statistically, seeded) each aggregate within
 * e_max at the confidence when the largest plan is sampled.
 */
class AggregatePlannerTest {
    private static final AggregatePlanner.Aggregate AVG =
            new AggregatePlanner.Aggregate(AggregateKind.AVG, 0, null);
    private static final AggregatePlanner.Aggregate COUNT =
            new AggregatePlanner.Aggregate(AggregateKind.COUNT, 0, null);
    private static final AggregatePlanner.Aggregate TOPK =
            new AggregatePlanner.Aggregate(AggregateKind.TOPK, 0, null);

    /** The quantile read at rank ceil(q n). */
    private static AggregatePlanner.Aggregate quantile(int v, double q) {
        return new AggregatePlanner.Aggregate(
                AggregateKind.QUANTILE, v, n -> new long[] {(long) Math.ceil(q * n - 1e-9)});
    }

    /** Shares of one record per message; column 0 as given, NaN values appended to column 0. */
    private record Data(List<double[]> shares, int nan) implements AggregatePlanner.Shares {
        @Override
        public long[] units() {
            return shares.stream().mapToLong(s -> s.length).toArray();
        }

        @Override
        public long records() {
            return shares.stream().mapToLong(s -> s.length).sum() + nan;
        }

        @Override
        public List<ShareMoments> moments(int v) {
            if (nan > 0) {
                return null;
            }
            List<ShareMoments> out = new ArrayList<>();
            for (double[] s : shares) {
                StratumAccumulator acc = new StratumAccumulator();
                for (double x : s) {
                    acc.add(x);
                }
                out.add(ShareMoments.of(acc, s.length));
            }
            return out;
        }

        @Override
        public List<ValueSketch> sketches(int v) {
            return shares.stream().map(ValueSketch::of).toList();
        }

        @Override
        public long nan(int v) {
            return nan;
        }
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
        Data d = new Data(List.of(lognormal(rnd, 4000), lognormal(rnd, 1500)), 0);
        SharePlanner planner = SharePlanner.of(0.02, 0.95);
        ShareAllocation mean = AggregatePlanner.plan(planner, List.of(AVG), false, d);
        ShareAllocation p90 = AggregatePlanner.plan(planner, List.of(quantile(0, 0.9)), false, d);
        ShareAllocation both =
                AggregatePlanner.plan(planner, List.of(AVG, COUNT, quantile(0, 0.9)), false, d);
        assertEquals(mean.max(p90).totalUnits(), both.totalUnits());
        for (int m = 0; m < 2; m++) {
            assertEquals(Math.max(mean.units(m), p90.units(m)), both.units(m));
        }
        assertTrue(mean.units(0) > planner.minUnits(), "the mean is planned: " + mean);
        assertTrue(p90.units(0) > planner.minUnits(), "the quantile is planned: " + p90);
        // the quantile is planned at its own rank: a median asks another sample than the p90
        ShareAllocation median =
                AggregatePlanner.plan(planner, List.of(quantile(0, 0.5)), false, d);
        assertTrue(median.totalUnits() != p90.totalUnits(), median + " vs " + p90);
    }

    @Test
    void exactAnswersNeedOnlyTheMinimum() {
        SplittableRandom rnd = new SplittableRandom(2);
        SharePlanner planner = SharePlanner.of(0.01, 0.95);
        Data d = new Data(List.of(lognormal(rnd, 3000)), 0);
        long min = planner.minimum(d.units()).totalUnits();
        // counts and top-k are not planned; avg and sum from exact partials neither
        assertEquals(
                min, AggregatePlanner.plan(planner, List.of(COUNT, TOPK), false, d).totalUnits());
        assertEquals(min, AggregatePlanner.plan(planner, List.of(AVG), true, d).totalUnits());
        // a NaN makes the mean NaN, exactly
        Data withNaN = new Data(List.of(lognormal(rnd, 3000)), 1);
        assertEquals(
                min, AggregatePlanner.plan(planner, List.of(AVG), false, withNaN).totalUnits());
        // a rank among the NaN values (they sort last) answers NaN; below them it is planned
        Data manyNaN = new Data(List.of(lognormal(rnd, 3000)), 1000);
        assertEquals(
                min,
                AggregatePlanner.plan(planner, List.of(quantile(0, 0.9)), false, manyNaN)
                        .totalUnits());
        assertTrue(
                AggregatePlanner.plan(planner, List.of(quantile(0, 0.5)), false, manyNaN)
                                .totalUnits()
                        > min);
        // an empty group and a column of NaN values only need nothing
        Data onlyNaN = new Data(List.of(new double[0]), 50);
        assertEquals(
                0,
                AggregatePlanner.plan(planner, List.of(AVG, quantile(0, 0.5)), false, onlyNaN)
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
        Data d = new Data(shares, 0);
        ShareAllocation plan =
                AggregatePlanner.plan(
                        SharePlanner.of(e, confidence), List.of(AVG, quantile(0, 0.5)), false, d);
        double[] all = concat(shares);
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

    private static double[] concat(List<double[]> parts) {
        return parts.stream().flatMapToDouble(Arrays::stream).toArray();
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
