package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.GroupEstimator;
import io.netapprox.core.sampling.QuantileAccumulator;
import io.netapprox.core.sampling.StratifiedQuantile;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The interval of an interpolated quantile (Spark's {@code median}/{@code percentile}: between the
 * values at two neighbouring ranks) covers Spark's answer at the stated confidence, over seeded
 * simple random samples of fixed populations chosen where interpolation matters: two clusters with
 * the median between them, heavily tied integers, a skewed continuous group, and a group of three
 * shares of different distributions sampled at different fractions (the stratified Woodruff
 * interval). The truth is {@link GroupAggregator#exactQuantile} of the whole population, which
 * {@code SqlPercentileTest} checks against Spark's own answers; the estimate is what the reducer
 * computes ({@link StratifiedQuantile} per rank, {@link GroupAggregator#interpolated}).
 */
class InterpolatedQuantileCoverageTest {
    static final double CONFIDENCE = 0.95;
    static final int TRIALS = 1000;

    /** (q, descending) of the aggregates checked on each sample: one sample, one unit. */
    static final ApproxSpec.Aggregate[] AGGREGATES = {
        aggregate(0.5, false), aggregate(0.3, false), aggregate(0.9, true)
    };

    static ApproxSpec.Aggregate aggregate(double q, boolean descending) {
        return new ApproxSpec.Aggregate(
                AggregateKind.QUANTILE,
                "v",
                0,
                q,
                0,
                ApproxSpec.QuantileMethod.INTERPOLATED,
                descending);
    }

    /** A group: its shares' values and the fraction each share is sampled at. */
    record Scenario(String name, double[][] shares, double[] fractions) {}

    static double[] values(SplittableRandom r, int n, java.util.function.DoubleSupplier... parts) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = parts[i % parts.length].getAsDouble();
        }
        return v;
    }

    static List<Scenario> scenarios() {
        SplittableRandom r = new SplittableRandom(2029);
        List<Scenario> s = new ArrayList<>();
        // 1,000 values on [0, 1] and 1,000 on [10, 11]: the median is halfway between the clusters
        s.add(
                new Scenario(
                        "two clusters",
                        new double[][] {values(r, 2000, r::nextDouble, () -> 10 + r.nextDouble())},
                        new double[] {0.1}));
        // 2,000 integers 0..7 in atoms of 40-400 copies; exactly 1,000 are <= 2, so the median is
        // 2.5, between two atoms (the other ranks fall on one atom)
        int[] counts = {400, 300, 300, 400, 300, 200, 60, 40};
        double[] tied = new double[2000];
        for (int k = 0, at = 0; k < counts.length; k++) {
            for (int i = 0; i < counts[k]; i++) {
                tied[at++] = k;
            }
        }
        s.add(new Scenario("tied integers", new double[][] {tied}, new double[] {0.1}));
        s.add(
                new Scenario(
                        "lognormal",
                        new double[][] {values(r, 3000, () -> Math.exp(r.nextGaussian()))},
                        new double[] {0.05}));
        s.add(
                new Scenario(
                        "three shares",
                        new double[][] {
                            values(r, 800, r::nextDouble),
                            values(r, 1200, () -> 5 + r.nextDouble()),
                            values(r, 400, () -> Math.exp(r.nextGaussian()))
                        },
                        new double[] {0.05, 0.2, 0.5}));
        return s;
    }

    @Test
    void intervalsCoverSparksInterpolatedAnswerAtTheStatedConfidence() {
        List<Scenario> scenarios = scenarios();
        double alpha = StatisticalFloor.FALSE_ALARM / (scenarios.size() + 1);
        int allChecks = 0;
        int allCovered = 0;
        for (Scenario sc : scenarios) {
            double[] all = Arrays.stream(sc.shares()).flatMapToDouble(Arrays::stream).toArray();
            Arrays.sort(all);
            int checks = 0;
            int covered = 0;
            int interpolatedBetweenValues = 0;
            for (int t = 0; t < TRIALS; t++) {
                SplittableRandom r = new SplittableRandom(1000L * t + sc.name().hashCode());
                StratifiedQuantile est = new StratifiedQuantile();
                long sampled = 0;
                for (int m = 0; m < sc.shares().length; m++) {
                    double[] share = sc.shares()[m];
                    int n = Math.max(2, (int) Math.round(sc.fractions()[m] * share.length));
                    QuantileAccumulator acc = new QuantileAccumulator();
                    for (double x : sample(share, n, r)) {
                        acc.add(x);
                    }
                    est.addShare(acc, share.length);
                    sampled += n;
                }
                for (ApproxSpec.Aggregate a : AGGREGATES) {
                    SparkPercentile.Ranks ranks = SparkPercentile.ranks(a, all.length);
                    double truth = GroupAggregator.exactQuantile(a, all);
                    if (truth != all[(int) ranks.first() - 1]) {
                        interpolatedBetweenValues++;
                    }
                    ApproxResult first = est.quantileAtRank(ranks.first(), CONFIDENCE);
                    ApproxResult answer =
                            ranks.single()
                                    ? first
                                    : GroupEstimator.interpolated(
                                            ranks::combine,
                                            first,
                                            est.quantileAtRank(ranks.second(), CONFIDENCE),
                                            false,
                                            CONFIDENCE,
                                            sampled,
                                            all.length);
                    assertTrue(answer.low() <= answer.mean() && answer.mean() <= answer.high());
                    checks++;
                    covered += answer.low() <= truth && truth <= answer.high() ? 1 : 0;
                }
            }
            // the aggregates of one sample are correlated: one independent unit per sample
            double floor = StatisticalFloor.floorRate(checks, AGGREGATES.length, CONFIDENCE, alpha);
            System.out.printf(
                    Locale.ROOT,
                    "[spark] interpolated quantiles, %s: coverage %.4f of %d (floor %.4f), %d answers"
                            + " strictly between two values%n",
                    sc.name(),
                    (double) covered / checks,
                    checks,
                    floor,
                    interpolatedBetweenValues);
            assertTrue(interpolatedBetweenValues > 0, sc.name() + ": interpolation matters");
            assertTrue((double) covered / checks >= floor, sc.name() + ": " + covered);
            allChecks += checks;
            allCovered += covered;
        }
        assertEquals(scenarios.size() * TRIALS * AGGREGATES.length, allChecks);
        assertTrue(
                (double) allCovered / allChecks
                        >= StatisticalFloor.floorRate(
                                allChecks, AGGREGATES.length, CONFIDENCE, alpha),
                "overall coverage " + allCovered + "/" + allChecks);
    }

    /** A simple random sample of n of the values, without replacement. */
    static double[] sample(double[] values, int n, SplittableRandom r) {
        double[] v = values.clone();
        for (int i = 0; i < n; i++) {
            int j = i + r.nextInt(v.length - i);
            double x = v[i];
            v[i] = v[j];
            v[j] = x;
        }
        return Arrays.copyOf(v, n);
    }
}
