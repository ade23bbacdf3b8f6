package io.netapprox.core.sampling;

/**
 * Immutable sufficient statistics of one stratum's sample, per message (the sampling unit).
 *
 * <p>Obtain it from {@link StratumAccumulator#summarize(long)}, or build it directly when the
 * statistics are known exactly (e.g. a Spark map task that has seen its data can describe the whole
 * population with {@code sampledUnits == populationUnits}).
 *
 * @param populationUnits {@code N_g}: messages in the stratum
 * @param sampledUnits {@code n_g}: delivered messages, {@code 0 <= n_g <= N_g}
 * @param meanTotal mean over sampled messages of the per-message value total {@code y_i}
 * @param varianceTotal sample variance (denominator {@code n_g - 1}) of {@code y_i}; 0 if {@code
 *     n_g < 2}
 * @param meanRecords mean records per sampled message {@code m_i}
 * @param varianceRecords sample variance of {@code m_i}; 0 if {@code n_g < 2}
 * @param covariance sample covariance of {@code (y_i, m_i)}; 0 if {@code n_g < 2}
 * @param higherMoments third- and fourth-order sample central co-moments of {@code (y_i, m_i)},
 *     used by {@link StratifiedEstimator} to correct intervals for skewness and heavy tails; {@link
 *     HigherMoments#NONE} (all 0: symmetric Student t intervals) if unknown or {@code n_g < 3}
 * @param exactTotal the sampled messages' {@code sum y_i}, summed exactly ({@link ExactSum}), and
 *     {@code sum |y_i|}; used when the stratum is complete, so that a census gives the exact
 *     aggregate; {@link ExactTotal#UNKNOWN} if not kept
 */
public record StratumSummary(
        long populationUnits,
        long sampledUnits,
        double meanTotal,
        double varianceTotal,
        double meanRecords,
        double varianceRecords,
        double covariance,
        HigherMoments higherMoments,
        ExactTotal exactTotal) {

    /**
     * The exactly summed total of the sampled messages.
     *
     * @param value the correctly rounded {@code sum y_i} ({@link ExactSum#value()}); NaN if unknown
     * @param absoluteSum {@code sum |y_i|} ({@link ExactSum#absoluteSum()}), for the bound on how
     *     far a floating-point summation of the totals can be from {@code value}; NaN if unknown
     */
    public record ExactTotal(double value, double absoluteSum) {
        /** Not kept (a hand-built summary): complete strata then use {@code N_g * meanTotal}. */
        public static final ExactTotal UNKNOWN = new ExactTotal(Double.NaN, Double.NaN);

        /** Validates: both known (finite, absolute sum {@code >= |value|}) or both NaN. */
        public ExactTotal {
            boolean unknown = Double.isNaN(value) && Double.isNaN(absoluteSum);
            if (!unknown
                    && !(Double.isFinite(value)
                            && Double.isFinite(absoluteSum)
                            && absoluteSum >= Math.abs(value) * (1 - 1e-9))) {
                throw new IllegalArgumentException(
                        "exact total must be finite with a finite absolute sum >= |total|"
                                + " (or both NaN), got "
                                + value
                                + ", "
                                + absoluteSum);
            }
        }

        /**
         * @return whether the total was kept.
         */
        public boolean isKnown() {
            return !Double.isNaN(value);
        }

        /**
         * @param sum an exact sum of finite values @return its value and absolute sum
         */
        public static ExactTotal of(ExactSum sum) {
            return new ExactTotal(sum.value(), sum.absoluteSum());
        }
    }

    /**
     * A summary without an exact total ({@link ExactTotal#UNKNOWN}). See the record components for
     * the parameters.
     */
    public StratumSummary(
            long populationUnits,
            long sampledUnits,
            double meanTotal,
            double varianceTotal,
            double meanRecords,
            double varianceRecords,
            double covariance,
            HigherMoments higherMoments) {
        this(
                populationUnits,
                sampledUnits,
                meanTotal,
                varianceTotal,
                meanRecords,
                varianceRecords,
                covariance,
                higherMoments,
                ExactTotal.UNKNOWN);
    }

    /**
     * Third- and fourth-order sample central co-moments of the per-message totals {@code y} and
     * record counts {@code m}, with denominator {@code n}: {@code m_ab = (1/n) sum (y_i - ybar)^a
     * (m_i - mbar)^b}. All zero ({@link #NONE}) means "unknown": the estimators then assume no
     * skewness and no excess kurtosis.
     *
     * @param m30 third central moment of {@code y}
     * @param m21 {@code (1/n) sum dy^2 dm}
     * @param m12 {@code (1/n) sum dy dm^2}
     * @param m03 third central moment of {@code m}
     * @param m40 fourth central moment of {@code y}
     * @param m31 {@code (1/n) sum dy^3 dm}
     * @param m22 {@code (1/n) sum dy^2 dm^2}
     * @param m13 {@code (1/n) sum dy dm^3}
     * @param m04 fourth central moment of {@code m}
     */
    public record HigherMoments(
            double m30,
            double m21,
            double m12,
            double m03,
            double m40,
            double m31,
            double m22,
            double m13,
            double m04) {

        /**
         * Unknown higher moments: intervals are the symmetric Student t ones with Normal-theory df.
         */
        public static final HigherMoments NONE = new HigherMoments(0, 0, 0, 0, 0, 0, 0, 0, 0);

        /** Validates that all fields are finite and the even moments non-negative. */
        public HigherMoments {
            requireFinite("m30", m30);
            requireFinite("m21", m21);
            requireFinite("m12", m12);
            requireFinite("m03", m03);
            requireNonNegative("m40", m40);
            requireFinite("m31", m31);
            requireNonNegative("m22", m22);
            requireFinite("m13", m13);
            requireNonNegative("m04", m04);
        }

        /**
         * Moments of a single variable (one record per message): {@code m3} and {@code m4} of the
         * values.
         *
         * @param m3 third central moment (denominator n), e.g. {@code g1 * m2^1.5}
         * @param m4 fourth central moment (denominator n), e.g. {@code (g2 + 3) * m2^2}; 0 if
         *     unknown
         * @return the moments, with all terms involving the record count 0
         */
        public static HigherMoments ofValues(double m3, double m4) {
            return new HigherMoments(m3, 0, 0, 0, m4, 0, 0, 0, 0);
        }

        /**
         * @return whether the moments are unknown (all zero).
         */
        public boolean isUnknown() {
            return equals(NONE);
        }

        /**
         * @param r ratio {@code R}
         * @return third central moment of the residual {@code d_i = y_i - R m_i}
         */
        public double residualThird(double r) {
            return m30 - 3 * r * m21 + 3 * r * r * m12 - r * r * r * m03;
        }

        /**
         * @param r ratio {@code R}
         * @return fourth central moment of the residual {@code d_i = y_i - R m_i}
         */
        public double residualFourth(double r) {
            double r2 = r * r;
            return m40 - 4 * r * m31 + 6 * r2 * m22 - 4 * r2 * r * m13 + r2 * r2 * m04;
        }
    }

    /**
     * A summary without higher moments ({@link HigherMoments#NONE}): intervals will be the
     * symmetric Student t ones. See the record components for the parameters.
     */
    public StratumSummary(
            long populationUnits,
            long sampledUnits,
            double meanTotal,
            double varianceTotal,
            double meanRecords,
            double varianceRecords,
            double covariance) {
        this(
                populationUnits,
                sampledUnits,
                meanTotal,
                varianceTotal,
                meanRecords,
                varianceRecords,
                covariance,
                HigherMoments.NONE);
    }

    /** Validates the fields; throws {@link IllegalArgumentException} naming the offending field. */
    public StratumSummary {
        if (populationUnits < 0) {
            throw new IllegalArgumentException(
                    "populationUnits (N_g) must be >= 0, got " + populationUnits);
        }
        if (sampledUnits < 0 || sampledUnits > populationUnits) {
            throw new IllegalArgumentException(
                    "sampledUnits (n_g) must be in [0, N_g="
                            + populationUnits
                            + "], got "
                            + sampledUnits);
        }
        requireFinite("meanTotal", meanTotal);
        requireFinite("meanRecords", meanRecords);
        requireFinite("covariance", covariance);
        requireNonNegative("varianceTotal", varianceTotal);
        requireNonNegative("varianceRecords", varianceRecords);
        if (meanRecords < 0) {
            throw new IllegalArgumentException("meanRecords must be >= 0, got " + meanRecords);
        }
        if (higherMoments == null) {
            throw new IllegalArgumentException(
                    "higherMoments must not be null (use HigherMoments.NONE)");
        }
        if (exactTotal == null) {
            throw new IllegalArgumentException(
                    "exactTotal must not be null (use ExactTotal.UNKNOWN)");
        }
    }

    /**
     * Summary of a stratum whose messages each carry one record, from the mean and variance of the
     * values.
     *
     * @param populationUnits {@code N_g}
     * @param sampledUnits {@code n_g}
     * @param mean sample mean of the values
     * @param variance sample variance of the values (denominator {@code n_g - 1})
     * @return the summary
     */
    public static StratumSummary ofSingleRecordMessages(
            long populationUnits, long sampledUnits, double mean, double variance) {
        return new StratumSummary(populationUnits, sampledUnits, mean, variance, 1.0, 0.0, 0.0);
    }

    /**
     * As {@link #ofSingleRecordMessages(long, long, double, double)}, with the sample skewness and
     * excess kurtosis of the values so that intervals are corrected for skewness and heavy tails.
     *
     * @param populationUnits {@code N_g}
     * @param sampledUnits {@code n_g}
     * @param mean sample mean of the values
     * @param variance sample variance of the values (denominator {@code n_g - 1})
     * @param skewness sample skewness {@code g1 = m3 / m2^1.5} (moments with denominator {@code
     *     n_g})
     * @param excessKurtosis sample excess kurtosis {@code g2 = m4 / m2^2 - 3}, {@code >= -3}
     * @return the summary
     */
    public static StratumSummary ofSingleRecordMessages(
            long populationUnits,
            long sampledUnits,
            double mean,
            double variance,
            double skewness,
            double excessKurtosis) {
        if (sampledUnits < 3) {
            return ofSingleRecordMessages(populationUnits, sampledUnits, mean, variance);
        }
        double m2 = variance * (sampledUnits - 1) / sampledUnits;
        return new StratumSummary(
                populationUnits,
                sampledUnits,
                mean,
                variance,
                1.0,
                0.0,
                0.0,
                HigherMoments.ofValues(
                        skewness * Math.pow(m2, 1.5), (excessKurtosis + 3) * m2 * m2));
    }

    /**
     * @return the sampling fraction {@code n_g / N_g} (1 for an empty stratum).
     */
    public double samplingFraction() {
        return populationUnits == 0 ? 1.0 : (double) sampledUnits / populationUnits;
    }

    /**
     * @return whether every message of the stratum was sampled.
     */
    public boolean isComplete() {
        return sampledUnits == populationUnits;
    }

    /**
     * @return the Horvitz-Thompson weight {@code N_g / n_g} of each sampled message.
     */
    public double inclusionWeight() {
        if (sampledUnits == 0) {
            throw new IllegalArgumentException(
                    "stratum has no sampled messages; inclusion weight undefined");
        }
        return (double) populationUnits / sampledUnits;
    }

    private static void requireFinite(String name, double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            throw new IllegalArgumentException(name + " must be finite, got " + v);
        }
    }

    private static void requireNonNegative(String name, double v) {
        requireFinite(name, v);
        if (v < 0) {
            throw new IllegalArgumentException(name + " must be >= 0, got " + v);
        }
    }
}
