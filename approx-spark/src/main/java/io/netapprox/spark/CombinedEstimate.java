package io.netapprox.spark;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.core.sampling.ExactSum;

/**
 * A group's sum or average from two parts: the shares whose exact partial arrived (the exact sum of
 * their finite values, summed by the map task over every record) and the shares without one,
 * estimated from their sample.
 *
 * <p>With {@code E} the exact sum over the exact shares, {@code M_s} the (exactly known) record
 * count of the estimated shares and {@code R} their combined ratio estimate of the mean per record
 * (approx-core's {@code StratifiedEstimator.mean} over the estimated shares alone, interval {@code
 * [R_lo, R_hi]}), the group's total is {@code T = E + M_s R}, an affine function of {@code R} with
 * known coefficients: its interval {@code [E + M_s R_lo, E + M_s R_hi]} has the coverage of {@code
 * R}'s, and its variance is {@code M_s^2 Var(R)} - the exact part adds none. The average is {@code
 * T / M} with {@code M} the group's record count (known exactly from the group tables). Both
 * intervals are widened by the exact part's floating-point rounding bound, so that an all-exact
 * group's interval is as narrow as the exact path's and still contains Spark's own naive sum. With
 * no estimated share the answer is exact; with no exact share it is the sampling estimate alone.
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
     * rounded once from the exact sum ({@link GroupAggregator#exactMean}), as Spark's avg divides.
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
                    ? GroupAggregator.exactMean(exact, confidence, records)
                    : GroupAggregator.exactSum(exact, confidence, records);
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
