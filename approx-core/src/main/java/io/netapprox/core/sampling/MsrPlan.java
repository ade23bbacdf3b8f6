package io.netapprox.core.sampling;

/**
 * The minimal sampling rate chosen for one group, with the reasoning behind it.
 *
 * @param msr the minimal sampling rate {@code MSR_g} in (0, 1]; ATP delivers at least {@code
 *     ceil(msr * populationSize)} messages of the group
 * @param sampleSize the number of messages the plan requires, {@code ceil(msr * populationSize)}
 * @param populationSize {@code N_g}, messages in the group
 * @param criticalValue the z or t value used ({@code NaN} when no formula was needed)
 * @param basis why this MSR was chosen
 */
public record MsrPlan(
        double msr, long sampleSize, long populationSize, double criticalValue, Basis basis) {

    /** Why an MSR was chosen. */
    public enum Basis {
        /** No statistics known: sample-size formula with an assumed coefficient of variation. */
        HEURISTIC,
        /**
         * Sample-size formula from the group's (estimated or exact) mean and standard deviation.
         */
        SAMPLE_SIZE_FORMULA,
        /**
         * As {@link #SAMPLE_SIZE_FORMULA}, but the configured absolute error floor was the binding
         * bound.
         */
        ABSOLUTE_BOUND,
        /** Zero variance: the minimum sample size suffices. */
        ZERO_VARIANCE,
        /**
         * The mean is 0, so a relative bound is undefined and no absolute bound was configured: MSR
         * = 1.
         */
        MEAN_ZERO_EXACT,
        /** The group has a single message (or none): it must be delivered. */
        SINGLETON,
        /**
         * The online updater kept the MSR at the fraction already delivered or at its previous
         * value.
         */
        FLOOR
    }

    /** Validates the plan. */
    public MsrPlan {
        if (!(msr > 0.0 && msr <= 1.0)) {
            throw new IllegalArgumentException("msr must be in (0, 1], got " + msr);
        }
        if (populationSize < 0 || sampleSize < 0 || sampleSize > Math.max(1, populationSize)) {
            throw new IllegalArgumentException(
                    "invalid sizes: sampleSize="
                            + sampleSize
                            + ", populationSize="
                            + populationSize);
        }
        if (basis == null) {
            throw new IllegalArgumentException("basis must not be null");
        }
    }

    /**
     * @return whether the group must be delivered completely (MSR = 1).
     */
    public boolean isExact() {
        return msr >= 1.0;
    }
}
