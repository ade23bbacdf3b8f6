package io.netapprox.core.sampling;

/**
 * An approximate answer with a confidence interval, shaped like Spark's {@code BoundedDouble}
 * ({@code mean}, {@code confidence}, {@code low}, {@code high}) plus the sample and population
 * sizes it was computed from.
 *
 * <p>As in Spark, {@code mean} is the <em>point estimate</em> of whatever was asked for (a mean, a
 * sum, a count, a proportion, a quantile), not necessarily an average. The interval {@code [low,
 * high]} is meant to contain the true value with probability {@code confidence} over the randomness
 * of which messages were delivered. Bounds may be infinite when the data cannot bound the value
 * (for example a stratum with a single delivered message, or an extreme quantile from a tiny
 * sample).
 *
 * <p><b>Non-finite data</b> (as in Spark): an aggregate over values that include NaN is NaN, as an
 * {@link #undefined undefined} result whose mean, low and high are all NaN; an aggregate that is
 * infinite (e.g. a sum over values that include {@code +Infinity}) has an infinite mean, with
 * {@code low <= mean <= high}.
 *
 * @param mean point estimate; NaN only together with NaN bounds
 * @param low lower confidence bound ({@code low <= mean}); may be {@code -Infinity}
 * @param high upper confidence bound ({@code high >= mean}); may be {@code +Infinity}
 * @param confidence nominal coverage probability of {@code [low, high]}, in (0, 1)
 * @param sampleSize number of sampled units (delivered messages) the estimate used
 * @param populationSize number of units (messages) in the population the estimate refers to
 */
public record ApproxResult(
        double mean,
        double low,
        double high,
        double confidence,
        long sampleSize,
        long populationSize) {

    /**
     * Validates the invariants; throws {@link IllegalArgumentException} with the offending values.
     */
    public ApproxResult {
        if (Double.isNaN(mean) || Double.isNaN(low) || Double.isNaN(high)) {
            if (!(Double.isNaN(mean) && Double.isNaN(low) && Double.isNaN(high))) {
                throw new IllegalArgumentException(
                        "NaN only as an undefined result (mean, low and high all NaN), got"
                                + " low="
                                + low
                                + ", mean="
                                + mean
                                + ", high="
                                + high);
            }
        } else if (!(low <= mean && mean <= high)) {
            throw new IllegalArgumentException(
                    "expected low <= mean <= high, got low="
                            + low
                            + ", mean="
                            + mean
                            + ", high="
                            + high);
        }
        checkConfidence(confidence);
        if (sampleSize < 0 || populationSize < 0) {
            throw new IllegalArgumentException(
                    "sizes must be >= 0, got sampleSize="
                            + sampleSize
                            + ", populationSize="
                            + populationSize);
        }
        if (sampleSize > populationSize) {
            throw new IllegalArgumentException(
                    "sampleSize " + sampleSize + " exceeds populationSize " + populationSize);
        }
    }

    /**
     * This estimate with an interval unbounded on both sides (a part of the population is unseen);
     * an undefined result stays as it is.
     */
    public ApproxResult unbounded() {
        if (isUndefined()) {
            return this;
        }
        return new ApproxResult(
                mean,
                Double.NEGATIVE_INFINITY,
                Double.POSITIVE_INFINITY,
                confidence,
                sampleSize,
                populationSize);
    }

    /**
     * An exact answer (zero-width interval), e.g. when every message of the population was
     * delivered.
     *
     * @param value the exact value
     * @param confidence the confidence level the caller asked for (kept for uniformity)
     * @param populationSize population size, equal to the sample size
     * @return a result with {@code low == mean == high}
     */
    public static ApproxResult exact(double value, double confidence, long populationSize) {
        return new ApproxResult(value, value, value, confidence, populationSize, populationSize);
    }

    /**
     * The result of an aggregate that is NaN (e.g. an average over values that include NaN, as
     * Spark computes it).
     *
     * @param confidence the confidence level the caller asked for
     * @param sampleSize sampled units
     * @param populationSize units in the population
     * @return a result with mean, low and high all NaN
     */
    public static ApproxResult undefined(double confidence, long sampleSize, long populationSize) {
        return new ApproxResult(
                Double.NaN, Double.NaN, Double.NaN, confidence, sampleSize, populationSize);
    }

    /**
     * @return whether this is an {@link #undefined undefined} (NaN) result.
     */
    public boolean isUndefined() {
        return Double.isNaN(mean);
    }

    /**
     * @return half the interval width, {@code (high - low) / 2} (may be infinite).
     */
    public double halfWidth() {
        return (high - low) / 2.0;
    }

    /**
     * @return the larger distance from {@code mean} to a bound, relative to {@code |mean|}; the
     *     achieved relative error bound at this confidence. {@code +Infinity} if {@code mean == 0}
     *     and the interval has positive width, {@code 0} for a zero-width interval.
     */
    public double relativeErrorBound() {
        double d = Math.max(mean - low, high - mean);
        if (d == 0.0) {
            return 0.0;
        }
        return d / Math.abs(mean);
    }

    /**
     * @return whether {@code low <= x <= high}; an undefined (NaN) result contains exactly NaN.
     */
    public boolean contains(double x) {
        if (isUndefined()) {
            return Double.isNaN(x);
        }
        return low <= x && x <= high;
    }

    /**
     * @return whether the interval has zero width (the sample was the whole population, or no
     *     variability).
     */
    public boolean isExact() {
        return low == high;
    }

    static void checkConfidence(double confidence) {
        if (!(confidence > 0.0 && confidence < 1.0)) {
            throw new IllegalArgumentException("confidence must be in (0, 1), got " + confidence);
        }
    }
}
