package io.netapprox.spark;

import org.apache.commons.math3.distribution.BinomialDistribution;

/**
 * Pass marks for statistical assertions that a correct build fails only with a stated, small
 * probability: one-sided exact binomial quantiles, the false-alarm rate shared (Bonferroni) over
 * all the assertions of a test. A fixed "3 standard errors" per assertion is not that: with a dozen
 * assertions, or checks that come in correlated pairs, it fails correct builds every few dozen runs
 * (approx-flink's {@code PerGroupBoundTest} did in CI).
 */
final class StatisticalFloor {
    /** Probability that a correct build fails any one test's statistical assertions. */
    static final double FALSE_ALARM = 1e-3;

    private StatisticalFloor() {}

    /**
     * The fewest successes of {@code checks} independent trials that each succeed with probability
     * {@code p}, except with probability {@code alpha}: the exact lower binomial quantile.
     */
    static int floor(int checks, double p, double alpha) {
        return new BinomialDistribution(null, checks, p).inverseCumulativeProbability(alpha);
    }

    /**
     * The most successes of {@code checks} independent trials that each succeed with probability
     * {@code p}, except with probability {@code alpha}: the exact upper binomial quantile.
     */
    static int ceiling(int checks, double p, double alpha) {
        return new BinomialDistribution(null, checks, p).inverseCumulativeProbability(1 - alpha);
    }

    /**
     * The lowest rate of successes {@link #floor} accepts when checks come in groups of {@code
     * correlated} that may succeed or fail together (e.g. avg and sum of one group computed from
     * one sample): the floor of {@code checks / correlated} independent units, as a fraction -
     * conservative for any correlation within a group.
     */
    static double floorRate(int checks, int correlated, double p, double alpha) {
        int units = checks / correlated;
        return (double) floor(units, p, alpha) / units;
    }
}
