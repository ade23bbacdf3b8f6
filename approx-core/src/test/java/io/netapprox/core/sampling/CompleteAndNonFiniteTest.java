package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.MsrPlannerTest.assertMessage;
import static io.netapprox.core.sampling.SamplingTestSupport.report;
import static org.junit.jupiter.api.Assertions.*;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A fully delivered group answers exactly: the estimate is the correctly rounded aggregate ({@link
 * ExactSum}, the same whatever the order) and its interval is as wide as a floating-point
 * summation's error bound, so it contains what a naive summation in any order computes (Spark's own
 * {@code sum}/{@code avg}). Non-finite values follow IEEE and Spark: NaN propagates to an undefined
 * result.
 */
class CompleteAndNonFiniteTest {

    /**
     * Values of mixed sign and magnitude: naive sums in different orders differ in the last bits.
     */
    private static double[] illConditioned(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] =
                    (r.nextBoolean() ? 1 : -1) * Math.exp(r.nextDouble() * 20 - 5)
                            + 1e3 * r.nextDouble();
        }
        return x;
    }

    private static double naive(double[] x) {
        double s = 0;
        for (double v : x) {
            s += v;
        }
        return s;
    }

    private static void shuffle(double[] a, SplittableRandom r) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            double t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    @Test
    void exactSumIsTheCorrectlyRoundedSumInAnyOrder() {
        SplittableRandom r = new SplittableRandom(1);
        for (int trial = 0; trial < 200; trial++) {
            double[] x = illConditioned(1 + r.nextInt(3000), trial);
            BigDecimal exact = BigDecimal.ZERO;
            for (double v : x) {
                exact = exact.add(new BigDecimal(v));
            }
            double correctlyRounded = exact.round(MathContext.DECIMAL128).doubleValue();
            ExactSum a = new ExactSum();
            for (double v : x) {
                a.add(v);
            }
            shuffle(x, r);
            ExactSum b1 = new ExactSum();
            ExactSum b2 = new ExactSum();
            for (int i = 0; i < x.length; i++) {
                (i % 3 == 0 ? b1 : b2).add(x[i]);
            }
            assertEquals(
                    exact.doubleValue(), a.value(), Math.ulp(correctlyRounded), "trial " + trial);
            assertEquals(a.value(), b1.merge(b2).value(), 0.0, "order independent, trial " + trial);
            assertEquals(x.length, a.count());
        }
        // cancellation that naive summation gets completely wrong
        ExactSum c = new ExactSum().add(1e100).add(1.0).add(-1e100);
        assertEquals(1.0, c.value());
        assertEquals(0.0, new ExactSum().value());
        // half-way case: 1 + 2^-53 + 2^-106 rounds up (the tail breaks the tie), 1 + 2^-53 rounds
        // to even (1)
        assertEquals(1.0 + 0x1.0p-52, new ExactSum().add(1).add(0x1.0p-53).add(0x1.0p-106).value());
        assertEquals(1.0, new ExactSum().add(1).add(0x1.0p-53).value());
    }

    @Test
    void roundingBoundCoversNaiveSummationInAnyOrder() {
        SplittableRandom r = new SplittableRandom(2);
        double[] x = illConditioned(5000, 3);
        ExactSum s = new ExactSum();
        for (double v : x) {
            s.add(v);
        }
        double bound = s.roundingBound();
        int differ = 0;
        for (int i = 0; i < 1000; i++) {
            shuffle(x, r);
            double n = naive(x);
            assertTrue(
                    Math.abs(n - s.value()) <= bound,
                    "naive " + n + " vs " + s.value() + " +- " + bound);
            differ += n != s.value() ? 1 : 0;
        }
        report(
                "naive sums (random orders) != exact sum",
                differ,
                1000,
                "(all within the rounding bound)");
        assertTrue(differ > 100, "the data should make naive sums order dependent");
    }

    @Test
    void completeStrataGiveTheExactAggregateWithAnIntervalCoveringNaiveSums() {
        // One stratum: the estimate is the exact sum, bitwise.
        double[] one = illConditioned(700, 99);
        StratumAccumulator single = new StratumAccumulator();
        ExactSum exactOne = new ExactSum();
        for (double v : one) {
            single.add(v);
            exactOne.add(v);
        }
        assertEquals(
                exactOne.value(), StratifiedEstimator.sum(single.summarize(700), 0.95).mean(), 0.0);
        // One-record messages, a census of 3 strata: before, the estimate was N * (Welford mean), a
        // zero-width
        // interval that missed Spark-style naive sums in a large fraction of cases (the issue
        // measured 37-41%).
        SplittableRandom r = new SplittableRandom(4);
        int oldMisses = 0;
        int newMisses = 0;
        int checks = 0;
        for (int trial = 0; trial < 300; trial++) {
            List<double[]> strata =
                    List.of(
                            illConditioned(500 + r.nextInt(500), 10 * trial),
                            illConditioned(300, 10 * trial + 1),
                            illConditioned(50, 10 * trial + 2));
            List<StratumSummary> summaries = new ArrayList<>();
            List<StratumSummary> withoutExact = new ArrayList<>();
            ExactSum all = new ExactSum();
            int records = 0;
            for (double[] s : strata) {
                StratumAccumulator acc = new StratumAccumulator();
                for (double v : s) {
                    acc.add(v);
                    all.add(v);
                }
                records += s.length;
                StratumSummary sum = acc.summarize(s.length);
                summaries.add(sum);
                withoutExact.add(
                        new StratumSummary(
                                sum.populationUnits(),
                                sum.sampledUnits(),
                                sum.meanTotal(),
                                sum.varianceTotal(),
                                sum.meanRecords(),
                                sum.varianceRecords(),
                                sum.covariance()));
            }
            ApproxResult total = StratifiedEstimator.sum(summaries, 0.95);
            ApproxResult mean = StratifiedEstimator.mean(summaries, 0.95);
            ApproxResult oldTotal = StratifiedEstimator.sum(withoutExact, 0.95);
            // each stratum's exact total is rounded once, those are added exactly and rounded
            // again: the estimate is
            // within an ulp of each stratum total of the exact sum, and the interval
            // (rounding-wide) contains it
            assertTrue(total.contains(all.value()), "the interval contains the exact sum");
            assertTrue(mean.contains(all.value() / records));
            assertTrue(
                    total.halfWidth() <= 1e-12 * all.absoluteSum(),
                    "only rounding width: " + total);
            double[] values = UnequalFractionsTest.concat(strata);
            for (int order = 0; order < 5; order++) {
                shuffle(values, r);
                double naive = naive(values);
                checks++;
                newMisses += total.contains(naive) && mean.contains(naive / records) ? 0 : 1;
                oldMisses += oldTotal.contains(naive) ? 0 : 1;
            }
        }
        report(
                "complete groups: naive sum outside zero-width interval (before)",
                oldMisses,
                checks,
                "");
        report("complete groups: naive sum/avg outside the interval (now)", newMisses, checks, "");
        assertEquals(0, newMisses);
        assertTrue(
                oldMisses > checks / 10, "the old zero-width interval should miss: " + oldMisses);
    }

    @Test
    void nonFiniteValuesFollowIeeeAndSpark() {
        assertTrue(Double.isNaN(new ExactSum().add(1).add(Double.NaN).value()));
        assertTrue(
                Double.isNaN(
                        new ExactSum()
                                .add(Double.POSITIVE_INFINITY)
                                .add(Double.NEGATIVE_INFINITY)
                                .value()));
        assertEquals(
                Double.POSITIVE_INFINITY,
                new ExactSum().add(1).add(Double.POSITIVE_INFINITY).value());
        assertEquals(
                Double.NEGATIVE_INFINITY,
                new ExactSum().add(-Double.MAX_VALUE).add(-Double.MAX_VALUE).value());
        assertFalse(new ExactSum().add(Double.NaN).isFinite());
        ApproxResult u = ApproxResult.undefined(0.95, 3, 10);
        assertTrue(u.isUndefined());
        assertTrue(Double.isNaN(u.low()) && Double.isNaN(u.high()));
        assertTrue(u.contains(Double.NaN));
        assertFalse(u.contains(1.0));
        ApproxResult inf = ApproxResult.exact(Double.POSITIVE_INFINITY, 0.95, 4);
        assertTrue(inf.contains(Double.POSITIVE_INFINITY));
        assertMessage(
                () -> new ApproxResult(Double.NaN, 0, 3, 0.95, 1, 1),
                "NaN only as an undefined result");
        assertMessage(() -> new StratumAccumulator().add(Double.NaN), "finite");
        // quantiles order infinities like numbers
        QuantileAccumulator q =
                new QuantileAccumulator().add(1).add(Double.POSITIVE_INFINITY).add(2);
        assertEquals(Double.POSITIVE_INFINITY, q.quantile(1.0, 0.95, 3).mean());
        assertEquals(2.0, q.quantile(0.5, 0.95, 3).mean());
    }
}
