package io.netapprox.core.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.commons.math3.distribution.BinomialDistribution;
import org.junit.jupiter.api.Test;

/**
 * The combined estimator of a group's sum and average: exact where every share's partial arrived
 * (the interval only as wide as floating-point rounding, containing any naive summation's answer),
 * and where some shares' partials are missing - those shares estimated from a simple random sample
 * of their records - intervals that cover the truth at the stated confidence over many seeded
 * trials, not more (the exact part adds no variance) and not less, and narrower than sampling every
 * share.
 */
class CombinedEstimateTest {
    static final double CONFIDENCE = 0.95;

    /** One group's shares: records of a skewed (lognormal) population, a different scale each. */
    static double[][] shares(SplittableRandom r, int shares, int records) {
        double[][] s = new double[shares][records];
        for (int m = 0; m < shares; m++) {
            double scale = 1 + m;
            for (int i = 0; i < records; i++) {
                s[m][i] = scale * Math.exp(0.5 * r.nextGaussian());
            }
        }
        return s;
    }

    static ExactSum exactSum(double[] values) {
        ExactSum e = new ExactSum();
        for (double x : values) {
            e.add(x);
        }
        return e;
    }

    /** A simple random sample of n of the share's records, one record per message. */
    static StratumSummary sample(SplittableRandom r, double[] share, int n) {
        int[] idx = new int[share.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        StratumAccumulator acc = new StratumAccumulator();
        for (int i = 0; i < n; i++) {
            int j = i + r.nextInt(idx.length - i);
            int t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
            acc.add(share[idx[i]], 1);
        }
        return acc.summarize(share.length);
    }

    @Test
    void everyPartialPresentIsExact() {
        SplittableRandom r = new SplittableRandom(3);
        for (int trial = 0; trial < 50; trial++) {
            double[][] s = shares(r, 1 + r.nextInt(8), 1 + r.nextInt(5000));
            ExactSum all = new ExactSum();
            double naive = 0;
            long records = 0;
            for (double[] share : s) {
                all.merge(exactSum(share)); // as the reducer merges the tables' partials
                for (int i = share.length - 1; i >= 0; i--) {
                    naive += share[i]; // Spark's own summation, in some other order
                }
                records += share.length;
            }
            ExactSum whole = new ExactSum();
            for (double[] share : s) {
                for (double x : share) {
                    whole.add(x);
                }
            }
            ApproxResult total = CombinedEstimate.total(all, 0, null, CONFIDENCE, records);
            assertEquals(whole.value(), total.mean(), 0.0, "the exact sum");
            assertTrue(total.low() <= naive && naive <= total.high(), "contains the naive sum");
            assertTrue(
                    // (low and high are themselves rounded: an ulp each)
                    total.high() - total.low()
                            <= 2 * (whole.roundingBound() + Math.ulp(total.mean())),
                    "as wide as rounding: " + total);
            ApproxResult mean = CombinedEstimate.mean(all, 0, null, CONFIDENCE, records);
            assertEquals(whole.value() / records, mean.mean(), 0.0);
            double naiveMean = naive / records;
            assertTrue(mean.low() <= naiveMean && naiveMean <= mean.high());
            assertTrue(
                    mean.high() - mean.low()
                            <= 2 * (whole.roundingBound() / records + 2 * Math.ulp(mean.mean())),
                    "as wide as rounding: " + mean);
        }
    }

    @Test
    void missingPartialsAreEstimatedWithCoverageAtTheStatedConfidence() {
        int trials = 2000;
        int shares = 8;
        int records = 2000;
        int n = 60;
        int covered = 0;
        int coveredMean = 0;
        double combinedWidth = 0;
        double sampledWidth = 0;
        SplittableRandom r = new SplittableRandom(11);
        for (int t = 0; t < trials; t++) {
            double[][] s = shares(r, shares, records);
            double truth = 0;
            ExactSum present = new ExactSum();
            List<StratumSummary> missing = new ArrayList<>();
            List<StratumSummary> everyShare = new ArrayList<>();
            long missingRecords = 0;
            for (int m = 0; m < shares; m++) {
                truth += exactSum(s[m]).value();
                StratumSummary sample = sample(r, s[m], n);
                everyShare.add(sample);
                // each share's partial is lost with probability 1/2 (at least one of them)
                if (r.nextBoolean() || (m == shares - 1 && missing.isEmpty())) {
                    missing.add(sample);
                    missingRecords += records;
                } else {
                    present.merge(exactSum(s[m]));
                }
            }
            long all = (long) shares * records;
            ApproxResult rate = StratifiedEstimator.mean(missing, CONFIDENCE);
            ApproxResult total =
                    CombinedEstimate.total(present, missingRecords, rate, CONFIDENCE, all);
            ApproxResult mean =
                    CombinedEstimate.mean(present, missingRecords, rate, CONFIDENCE, all);
            covered += total.low() <= truth && truth <= total.high() ? 1 : 0;
            double truthMean = truth / all;
            coveredMean += mean.low() <= truthMean && truthMean <= mean.high() ? 1 : 0;
            combinedWidth += total.high() - total.low();
            ApproxResult sampledOnly = StratifiedEstimator.mean(everyShare, CONFIDENCE);
            sampledWidth += all * (sampledOnly.high() - sampledOnly.low());
        }
        // two assertions on the total's coverage (the mean's interval is the same event, scaled)
        // exact binomial quantiles: a correct build fails either assertion with probability 5e-4
        BinomialDistribution coverage = new BinomialDistribution(null, trials, CONFIDENCE);
        int floor = coverage.inverseCumulativeProbability(5e-4);
        int ceiling = coverage.inverseCumulativeProbability(1 - 5e-4);
        System.out.printf(
                "[core] combined estimate, half the partials missing: coverage %d/%d (accept"
                        + " %d..%d), mean's %d; interval width %.3f of sampling every share%n",
                covered, trials, floor, ceiling, coveredMean, combinedWidth / sampledWidth);
        assertTrue(covered >= floor, "coverage " + covered + " < " + floor);
        assertTrue(covered <= ceiling, "the exact part adds no width: " + covered);
        assertEquals(covered, coveredMean, 3, "the mean's interval is the total's over M");
        assertTrue(combinedWidth < 0.8 * sampledWidth, "exact partials narrow the interval");
    }

    @Test
    void inconsistentInputIsRefused() {
        ExactSum e = new ExactSum().add(1);
        ApproxResult r = new ApproxResult(1, 0.5, 1.5, CONFIDENCE, 2, 10);
        assertThrows(
                IllegalArgumentException.class,
                () -> CombinedEstimate.total(e, 5, null, CONFIDENCE, 10));
        assertThrows(
                IllegalArgumentException.class,
                () -> CombinedEstimate.total(e, 0, r, CONFIDENCE, 10));
        assertThrows(
                IllegalArgumentException.class,
                () -> CombinedEstimate.mean(e, 11, r, CONFIDENCE, 10));
    }
}
