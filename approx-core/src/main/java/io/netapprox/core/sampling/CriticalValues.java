package io.netapprox.core.sampling;

import org.apache.commons.math3.distribution.NormalDistribution;
import org.apache.commons.math3.distribution.TDistribution;

/**
 * Two-sided critical values for confidence intervals, from commons-math3 distributions (no tables).
 *
 * <p>Rule used everywhere in this package: with {@code df} degrees of freedom, use Student's t when
 * {@code df < }{@link #NORMAL_DF_THRESHOLD} and the standard Normal otherwise. At the threshold the
 * two differ by about 1% (t<sub>0.975, 99</sub> = 1.984 vs z<sub>0.975</sub> = 1.960).
 */
public final class CriticalValues {

    /** Degrees of freedom from which the Normal quantile replaces Student's t. */
    public static final double NORMAL_DF_THRESHOLD = 100.0;

    private static final NormalDistribution STANDARD_NORMAL =
            new NormalDistribution(null, 0.0, 1.0);

    private CriticalValues() {}

    /**
     * @param confidence two-sided confidence level in (0, 1)
     * @return {@code z} with {@code P(|Z| <= z) = confidence} for a standard Normal {@code Z}
     */
    public static double normal(double confidence) {
        ApproxResult.checkConfidence(confidence);
        return STANDARD_NORMAL.inverseCumulativeProbability(0.5 + confidence / 2.0);
    }

    /**
     * @param confidence two-sided confidence level in (0, 1)
     * @param df degrees of freedom, {@code > 0} (may be fractional, e.g. Satterthwaite)
     * @return {@code t} with {@code P(|T| <= t) = confidence} for Student's t with {@code df}
     *     degrees of freedom
     */
    public static double studentT(double confidence, double df) {
        ApproxResult.checkConfidence(confidence);
        if (!(df > 0.0) || Double.isInfinite(df)) {
            throw new IllegalArgumentException(
                    "degrees of freedom must be finite and > 0, got " + df);
        }
        return new TDistribution(null, df).inverseCumulativeProbability(0.5 + confidence / 2.0);
    }

    /**
     * The critical value this package uses: Student's t for small {@code df}, Normal otherwise.
     *
     * @param confidence two-sided confidence level in (0, 1)
     * @param df degrees of freedom, {@code > 0}; {@code +Infinity} means Normal
     * @return the two-sided critical value
     */
    public static double twoSided(double confidence, double df) {
        if (Double.isNaN(df) || df <= 0.0) {
            throw new IllegalArgumentException("degrees of freedom must be > 0, got " + df);
        }
        return df < NORMAL_DF_THRESHOLD ? studentT(confidence, df) : normal(confidence);
    }
}
