package io.netapprox.core.sampling;

/**
 * A group's sum or average from two parts: the shares whose exact sum is known (the sender's
 * partial, the exact sum of its finite values over every record, or every message delivered) and
 * the others, estimated from their sample ({@link GroupEstimator}).
 *
 * <p>With {@code E} the exact sum over the exact shares, {@code M_s} the (exactly known) record
 * count of the estimated shares and {@code R} their combined ratio estimate of the mean per record
 * ({@link StratifiedEstimator#mean} over the estimated shares alone, interval {@code [R_lo,
 * R_hi]}), the group's total is {@code T = E + M_s R}, an affine function of {@code R} with known
 * coefficients: its interval {@code [E + M_s R_lo, E + M_s R_hi]} has the coverage of {@code R}'s,
 * and its variance is {@code M_s^2 Var(R)} - the exact part adds none. The average is {@code T / M}
 * with {@code M} the group's record count (known exactly from the senders). Both intervals are
 * widened by the exact part's floating-point rounding bound, so that an all-exact group's interval
 * is as narrow as the exact path's and still contains a naive floating-point sum of the same
 * values. With no estimated share the answer is exact; with no exact share it is the sampling
 * estimate alone.
 */
final class CombinedEstimate {
    private CombinedEstimate() {}

    /**
     * @param exact the exact partials of the exact shares, merged (an empty sum if none)
     * @param estimatedRecords records of the shares without a partial ({@code M_s}; 0 if none)
     * @param estimatedMean the mean per record over those shares with its interval, or null when
     *     {@code estimatedRecords == 0}
     * @param confidence of the interval (used when everything is exact)
     * @param records the group's records {@code M}
     * @return the group's total
     */
    static ApproxResult total(
            ExactSum exact,
            long estimatedRecords,
            ApproxResult estimatedMean,
            double confidence,
            long records) {
        return combined(exact, estimatedRecords, estimatedMean, confidence, records, false);
    }

    /** As {@link #total}, divided by the group's {@code records}: the average per record. */
    static ApproxResult mean(
            ExactSum exact,
            long estimatedRecords,
            ApproxResult estimatedMean,
            double confidence,
            long records) {
        return combined(exact, estimatedRecords, estimatedMean, confidence, records, true);
    }

    /**
     * The total, or ({@code perRecord}) the total divided by {@code records}. An all-exact mean is
     * rounded once from the exact sum ({@link #exactMean}), as an exact average divides.
     */
    private static ApproxResult combined(
            ExactSum exact,
            long estimatedRecords,
            ApproxResult estimatedMean,
            double confidence,
            long records,
            boolean perRecord) {
        check(estimatedRecords, estimatedMean, records);
        if (estimatedRecords == 0) {
            return perRecord
                    ? exactMean(exact, confidence, records)
                    : exactSum(exact, confidence, records);
        }
        double e = exact.value();
        double bound = exact.count() > 0 ? exact.roundingBound() : 0.0;
        double m = estimatedRecords;
        double per = perRecord ? records : 1.0;
        return new ApproxResult(
                (e + m * estimatedMean.mean()) / per,
                (e + m * estimatedMean.low() - bound) / per,
                (e + m * estimatedMean.high() + bound) / per,
                estimatedMean.confidence(),
                estimatedMean.sampleSize(),
                Math.max(estimatedMean.populationSize(), estimatedMean.sampleSize()));
    }

    /**
     * The exactly summed total, with an interval covering any floating-point summation of the same
     * values.
     */
    static ApproxResult exactSum(ExactSum sum, double conf, long n) {
        double value = sum.value();
        double bound = sum.isFinite() ? sum.roundingBound() : 0.0;
        if (!sum.isFinite()) {
            return Double.isNaN(value)
                    ? ApproxResult.undefined(conf, n, n)
                    : ApproxResult.exact(value, conf, n);
        }
        return new ApproxResult(value, value - bound, value + bound, conf, n, n);
    }

    /**
     * The exact total over n, rounded once (as an exact path and Spark's avg divide), the same
     * interval over n.
     */
    static ApproxResult exactMean(ExactSum sum, double conf, long n) {
        double value = sum.value() / n;
        if (!sum.isFinite()) {
            return Double.isNaN(value)
                    ? ApproxResult.undefined(conf, n, n)
                    : ApproxResult.exact(value, conf, n);
        }
        double bound = sum.roundingBound();
        double half = bound > 0 ? bound / n + Math.ulp(value) : 0.0;
        return new ApproxResult(value, value - half, value + half, conf, n, n);
    }

    private static void check(long estimatedRecords, ApproxResult estimatedMean, long records) {
        if (estimatedRecords < 0
                || estimatedRecords > records
                || records <= 0
                || (estimatedRecords > 0) != (estimatedMean != null)) {
            throw new IllegalArgumentException(
                    "combined estimate of "
                            + records
                            + " records, "
                            + estimatedRecords
                            + " of them estimated, by "
                            + estimatedMean);
        }
    }
}
