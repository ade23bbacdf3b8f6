package io.netapprox.core.sampling;

import java.io.Serializable;

/**
 * Census statistics of one <em>share</em> of a group for one value column: the part of the group
 * that one sender holds (in Spark, one map output), described record by record before sampling.
 * {@link SharePlanner} allocates the group's sample over its shares from these.
 *
 * <p>The share is cut into {@code units} messages (the sampling unit) of nearly equal record
 * counts, in random record order, so any {@code n} of its messages are a simple random sample of
 * about {@code n * records / units} of its records; the statistics are therefore record-level.
 *
 * @param units messages the share is framed into ({@code N_m}), {@code 0 <= units <= records}, at
 *     least 1 when there are records
 * @param records records of the share ({@code R_m}) with a finite value
 * @param mean mean of the values (0 when there are no records)
 * @param variance variance of the values, denominator {@code records - 1} (0 for fewer than 2
 *     records)
 * @param thirdMoment third central moment of the values, denominator {@code records} (0 if unknown)
 */
public record ShareMoments(
        long units, long records, double mean, double variance, double thirdMoment)
        implements Serializable {

    /** Validates the fields. */
    public ShareMoments {
        if (records < 0 || units < 0 || units > records || (records > 0 && units == 0)) {
            throw new IllegalArgumentException(
                    "a share needs 0 <= units <= records and units >= 1 when it has "
                            + "records, got units="
                            + units
                            + ", records="
                            + records);
        }
        if (!Double.isFinite(mean) || !Double.isFinite(thirdMoment)) {
            throw new IllegalArgumentException(
                    "share mean and third moment must be finite, got " + mean + ", " + thirdMoment);
        }
        if (!(variance >= 0) || Double.isInfinite(variance)) {
            throw new IllegalArgumentException(
                    "share variance must be finite and >= 0, got " + variance);
        }
    }

    /**
     * @param values a {@link StratumAccumulator} fed one record at a time ({@code add(value)}) with
     *     every finite value of the share
     * @param units messages the share is framed into
     * @return the share's statistics
     */
    public static ShareMoments of(StratumAccumulator values, long units) {
        long n = values.count();
        if (n == 0) {
            return new ShareMoments(units, 0, 0.0, 0.0, 0.0);
        }
        StratumSummary s = values.summarize(n);
        return new ShareMoments(
                units, n, s.meanTotal(), s.varianceTotal(), s.higherMoments().m30());
    }

    /**
     * @return the mean number of records per message, {@code records / units} (1 for an empty
     *     share).
     */
    public double recordsPerUnit() {
        return units == 0 ? 1.0 : (double) records / units;
    }
}
