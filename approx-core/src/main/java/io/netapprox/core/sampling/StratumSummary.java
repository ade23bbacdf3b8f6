package io.netapprox.core.sampling;

/**
 * Immutable sufficient statistics of one stratum's sample, per message (the sampling unit).
 *
 * <p>Obtain it from {@link StratumAccumulator#summarize(long)}, or build it directly when the statistics
 * are known exactly (e.g. a Spark map task that has seen its data can describe the whole population with
 * {@code sampledUnits == populationUnits}).
 *
 * @param populationUnits  {@code N_g}: messages in the stratum
 * @param sampledUnits     {@code n_g}: delivered messages, {@code 0 <= n_g <= N_g}
 * @param meanTotal        mean over sampled messages of the per-message value total {@code y_i}
 * @param varianceTotal    sample variance (denominator {@code n_g - 1}) of {@code y_i}; 0 if {@code n_g < 2}
 * @param meanRecords      mean records per sampled message {@code m_i}
 * @param varianceRecords  sample variance of {@code m_i}; 0 if {@code n_g < 2}
 * @param covariance       sample covariance of {@code (y_i, m_i)}; 0 if {@code n_g < 2}
 */
public record StratumSummary(long populationUnits, long sampledUnits, double meanTotal, double varianceTotal,
                             double meanRecords, double varianceRecords, double covariance) {

    /** Validates the fields; throws {@link IllegalArgumentException} naming the offending field. */
    public StratumSummary {
        if (populationUnits < 0) {
            throw new IllegalArgumentException("populationUnits (N_g) must be >= 0, got " + populationUnits);
        }
        if (sampledUnits < 0 || sampledUnits > populationUnits) {
            throw new IllegalArgumentException("sampledUnits (n_g) must be in [0, N_g=" + populationUnits
                    + "], got " + sampledUnits);
        }
        requireFinite("meanTotal", meanTotal);
        requireFinite("meanRecords", meanRecords);
        requireFinite("covariance", covariance);
        requireNonNegative("varianceTotal", varianceTotal);
        requireNonNegative("varianceRecords", varianceRecords);
        if (meanRecords < 0) {
            throw new IllegalArgumentException("meanRecords must be >= 0, got " + meanRecords);
        }
    }

    /**
     * Summary of a stratum whose messages each carry one record, from the mean and variance of the values.
     *
     * @param populationUnits {@code N_g}
     * @param sampledUnits    {@code n_g}
     * @param mean            sample mean of the values
     * @param variance        sample variance of the values (denominator {@code n_g - 1})
     * @return the summary
     */
    public static StratumSummary ofSingleRecordMessages(long populationUnits, long sampledUnits, double mean,
                                                        double variance) {
        return new StratumSummary(populationUnits, sampledUnits, mean, variance, 1.0, 0.0, 0.0);
    }

    /** @return the sampling fraction {@code n_g / N_g} (1 for an empty stratum). */
    public double samplingFraction() {
        return populationUnits == 0 ? 1.0 : (double) sampledUnits / populationUnits;
    }

    /** @return whether every message of the stratum was sampled. */
    public boolean isComplete() {
        return sampledUnits == populationUnits;
    }

    /** @return the Horvitz-Thompson weight {@code N_g / n_g} of each sampled message. */
    public double inclusionWeight() {
        if (sampledUnits == 0) {
            throw new IllegalArgumentException("stratum has no sampled messages; inclusion weight undefined");
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
