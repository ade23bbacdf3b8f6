package io.netapprox.core.sampling;

import java.io.Serializable;

/**
 * Mergeable running statistics of the delivered messages of one stratum (group), for use inside Spark or
 * Flink aggregations: create one per group, {@link #add} each delivered message, {@link #merge} partial
 * accumulators, then {@link #summarize(long)} with the group's population size {@code N_g} and hand the
 * summary to {@link StratifiedEstimator} or {@link MsrPlanner}.
 *
 * <p><b>Unit.</b> One call to {@link #add(double, long)} is one sampled <em>message</em> (a cluster of
 * records): {@code total} is the sum of the aggregated value over the message's records and
 * {@code records} the number of records. {@link #add(double)} is the one-record-per-message shortcut.
 * Variances are of these per-message quantities.
 *
 * <p><b>Numerics.</b> Welford's online update for means, variances and the covariance of (total, records),
 * with Chan et al.'s pairwise formula for {@link #merge}; stable for long streams and any merge order.
 *
 * <p>Not thread-safe (one accumulator per task/partition, merged afterwards). Serializable so frameworks can
 * ship it between operators.
 */
public final class StratumAccumulator implements Serializable {

    private static final long serialVersionUID = 1L;

    private long n;
    private double meanTotal;
    private double m2Total;
    private double meanRecords;
    private double m2Records;
    private double coMoment;
    private double minTotal = Double.POSITIVE_INFINITY;
    private double maxTotal = Double.NEGATIVE_INFINITY;

    /** Creates an empty accumulator. */
    public StratumAccumulator() {
    }

    /**
     * Adds one delivered message that carries a single record with the given value.
     *
     * @param value the record's value; must be finite
     * @return this accumulator
     */
    public StratumAccumulator add(double value) {
        return add(value, 1L);
    }

    /**
     * Adds one delivered message (cluster of records).
     *
     * @param total   sum of the aggregated value over the message's records; must be finite
     * @param records number of records in the message, {@code >= 0}
     * @return this accumulator
     */
    public StratumAccumulator add(double total, long records) {
        if (Double.isNaN(total) || Double.isInfinite(total)) {
            throw new IllegalArgumentException("message total must be finite, got " + total);
        }
        if (records < 0) {
            throw new IllegalArgumentException("records per message must be >= 0, got " + records);
        }
        n++;
        double dy = total - meanTotal;
        meanTotal += dy / n;
        m2Total += dy * (total - meanTotal);
        double dm = records - meanRecords;
        meanRecords += dm / n;
        m2Records += dm * (records - meanRecords);
        coMoment += dy * (records - meanRecords);
        minTotal = Math.min(minTotal, total);
        maxTotal = Math.max(maxTotal, total);
        return this;
    }

    /**
     * Merges another accumulator of the <em>same stratum</em> into this one (the other is unchanged).
     *
     * @param other accumulator to merge; not null
     * @return this accumulator
     */
    public StratumAccumulator merge(StratumAccumulator other) {
        if (other == null) {
            throw new IllegalArgumentException("cannot merge a null accumulator");
        }
        if (other.n == 0) {
            return this;
        }
        if (n == 0) {
            copyFrom(other);
            return this;
        }
        long total = n + other.n;
        double dy = other.meanTotal - meanTotal;
        double dm = other.meanRecords - meanRecords;
        double w = (double) n * other.n / total;
        m2Total += other.m2Total + dy * dy * w;
        m2Records += other.m2Records + dm * dm * w;
        coMoment += other.coMoment + dy * dm * w;
        meanTotal += dy * other.n / total;
        meanRecords += dm * other.n / total;
        n = total;
        minTotal = Math.min(minTotal, other.minTotal);
        maxTotal = Math.max(maxTotal, other.maxTotal);
        return this;
    }

    private void copyFrom(StratumAccumulator o) {
        n = o.n;
        meanTotal = o.meanTotal;
        m2Total = o.m2Total;
        meanRecords = o.meanRecords;
        m2Records = o.m2Records;
        coMoment = o.coMoment;
        minTotal = o.minTotal;
        maxTotal = o.maxTotal;
    }

    /** @return a fresh copy of this accumulator. */
    public StratumAccumulator copy() {
        StratumAccumulator c = new StratumAccumulator();
        c.copyFrom(this);
        return c;
    }

    /** @return number of messages added. */
    public long count() {
        return n;
    }

    /** @return mean of the per-message totals ({@code NaN} if empty). */
    public double meanTotal() {
        return n == 0 ? Double.NaN : meanTotal;
    }

    /** @return unbiased sample variance of the per-message totals ({@code NaN} if fewer than 2 messages). */
    public double varianceTotal() {
        return n < 2 ? Double.NaN : Math.max(0.0, m2Total / (n - 1));
    }

    /** @return smallest per-message total seen ({@code +Infinity} if empty). */
    public double minTotal() {
        return minTotal;
    }

    /** @return largest per-message total seen ({@code -Infinity} if empty). */
    public double maxTotal() {
        return maxTotal;
    }

    /**
     * Freezes the statistics together with the stratum's population size.
     *
     * @param populationUnits {@code N_g}, the number of messages in the stratum; {@code >= count()}
     * @return an immutable summary for estimation or planning
     */
    public StratumSummary summarize(long populationUnits) {
        if (populationUnits < n) {
            throw new IllegalArgumentException("population size N_g=" + populationUnits
                    + " is smaller than the number of sampled messages n_g=" + n);
        }
        double varY = n < 2 ? 0.0 : Math.max(0.0, m2Total / (n - 1));
        double varM = n < 2 ? 0.0 : Math.max(0.0, m2Records / (n - 1));
        double cov = n < 2 ? 0.0 : coMoment / (n - 1);
        return new StratumSummary(populationUnits, n, n == 0 ? 0.0 : meanTotal, varY,
                n == 0 ? 0.0 : meanRecords, varM, cov);
    }

    @Override
    public String toString() {
        return "StratumAccumulator{n=" + n + ", meanTotal=" + meanTotal() + ", varianceTotal=" + varianceTotal()
                + ", meanRecords=" + (n == 0 ? Double.NaN : meanRecords) + "}";
    }
}
