package io.netapprox.core.sampling;

import java.io.Serializable;

/**
 * Mergeable running statistics of the delivered messages of one stratum (group), for use inside
 * Spark or Flink aggregations: create one per group, {@link #add} each delivered message, {@link
 * #merge} partial accumulators, then {@link #summarize(long)} with the group's population size
 * {@code N_g} and hand the summary to {@link StratifiedEstimator} or {@link MsrPlanner}.
 *
 * <p><b>Unit.</b> One call to {@link #add(double, long)} is one sampled <em>message</em> (a cluster
 * of records): {@code total} is the sum of the aggregated value over the message's records and
 * {@code records} the number of records. {@link #add(double)} is the one-record-per-message
 * shortcut. Variances are of these per-message quantities.
 *
 * <p><b>Numerics.</b> Welford's online update for means, variances and the covariance of (total,
 * records), with Chan et al.'s pairwise formula for {@link #merge}, extended to the third- and
 * fourth-order central co-moments of (total, records) (Pebay 2008) that the skewness- and
 * kurtosis-aware intervals of {@link StratifiedEstimator} need; stable for long streams and any
 * merge order.
 *
 * <p>Not thread-safe (one accumulator per task/partition, merged afterwards). Serializable so
 * frameworks can ship it between operators.
 */
public final class StratumAccumulator implements Serializable {

    private static final long serialVersionUID = 3L;

    /** Highest order of the central co-moments kept. */
    private static final int ORDER = 4;

    private static final int W = ORDER + 1;
    private static final double[][] BINOMIAL = {
        {1}, {1, 1}, {1, 2, 1}, {1, 3, 3, 1}, {1, 4, 6, 4, 1}
    };

    private long n;
    private double meanTotal;
    private double meanRecords;
    // Central co-moment sums S_ij = sum (y - ybar)^i (m - mbar)^j for 2 <= i + j <= 4 (fields, not
    // an array:
    // add() is the hot path).
    private double s20;
    private double s11;
    private double s02;
    private double s30;
    private double s21;
    private double s12;
    private double s03;
    private double s40;
    private double s31;
    private double s22;
    private double s13;
    private double s04;
    private double minTotal = Double.POSITIVE_INFINITY;
    private double maxTotal = Double.NEGATIVE_INFINITY;

    /** The totals summed exactly, for complete strata (a census then gives the exact aggregate). */
    private ExactSum exactTotal = new ExactSum();

    /** Creates an empty accumulator. */
    public StratumAccumulator() {}

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
     * @param total sum of the aggregated value over the message's records; must be finite
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
        addOne(total, records);
        exactTotal.add(total);
        minTotal = Math.min(minTotal, total);
        maxTotal = Math.max(maxTotal, total);
        return this;
    }

    /**
     * Merges another accumulator of the <em>same stratum</em> into this one (the other is
     * unchanged).
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
        combine(other.n, other.meanTotal, other.meanRecords, other.sums());
        exactTotal.merge(other.exactTotal);
        minTotal = Math.min(minTotal, other.minTotal);
        maxTotal = Math.max(maxTotal, other.maxTotal);
        return this;
    }

    /**
     * {@link #combine} specialised to a single message (allocation-free; the hot path). With {@code
     * u, v} the shifts {@code -dy/n, -dm/n} of the old messages and {@code U, V = (n_A/n) dy,
     * (n_A/n) dm} of the new one.
     */
    private void addOne(double total, double records) {
        long nA = n;
        n = nA + 1;
        double dy = total - meanTotal;
        double dm = records - meanRecords;
        double inv = 1.0 / n;
        double na = nA;
        double u = -dy * inv;
        double v = -dm * inv;
        double bu = dy + u; // (nA / n) dy
        if (dm == 0 && s02 == 0) {
            // Every message so far has the same record count (e.g. one record per message): all
            // moments that
            // involve m are 0 and stay 0.
            double uu = u * u;
            double bu2 = bu * bu;
            s40 += 4 * u * s30 + 6 * uu * s20 + na * uu * uu + bu2 * bu2;
            s30 += 3 * u * s20 + na * uu * u + bu2 * bu;
            s20 += na * uu + bu2;
            meanTotal -= u;
            return;
        }
        double bv = dm + v;
        double uu = u * u;
        double vv = v * v;
        double uv = u * v;
        double bu2 = bu * bu;
        double bv2 = bv * bv;
        s40 += 4 * u * s30 + 6 * uu * s20 + na * uu * uu + bu2 * bu2;
        s31 += v * s30 + 3 * u * s21 + 3 * uu * s11 + 3 * uv * s20 + na * uu * uv + bu2 * bu * bv;
        s22 +=
                2 * v * s21
                        + 2 * u * s12
                        + vv * s20
                        + 4 * uv * s11
                        + uu * s02
                        + na * uu * vv
                        + bu2 * bv2;
        s13 += u * s03 + 3 * v * s12 + 3 * vv * s11 + 3 * uv * s02 + na * uv * vv + bu * bv2 * bv;
        s04 += 4 * v * s03 + 6 * vv * s02 + na * vv * vv + bv2 * bv2;
        s30 += 3 * u * s20 + na * uu * u + bu2 * bu;
        s21 += v * s20 + 2 * u * s11 + na * uu * v + bu2 * bv;
        s12 += u * s02 + 2 * v * s11 + na * u * vv + bu * bv2;
        s03 += 3 * v * s02 + na * vv * v + bv2 * bv;
        s20 += na * uu + bu2;
        s11 += na * uv + bu * bv;
        s02 += na * vv + bv2;
        meanTotal -= u;
        meanRecords -= v;
    }

    /**
     * Pairwise update of the central co-moment sums (Chan et al. / Pebay 2008): with {@code d =
     * mean_B - mean_A} and the combined mean {@code mean_A + (n_B/n) d}, a message of A is centred
     * at {@code (x - mean_A) - (n_B/n) d} and one of B at {@code (x - mean_B) + (n_A/n) d};
     * expanding the powers binomially gives {@code S_pq = sum_ij C(p,i) C(q,j) [(-b dy)^(p-i) (-b
     * dm)^(q-j) S^A_ij + (a dy)^(p-i) (a dm)^(q-j) S^B_ij]}, {@code a = n_A/n, b = n_B/n}. Each
     * {@code S_pq} depends only on lower orders and itself, so updating from order 4 down to 2 can
     * be done in place.
     */
    private void combine(
            long otherN, double otherMeanTotal, double otherMeanRecords, double[] otherSums) {
        double[] s = sums();
        long nA = n;
        long total = nA + otherN;
        double a = (double) nA / total;
        double b = (double) otherN / total;
        double dy = otherMeanTotal - meanTotal;
        double dm = otherMeanRecords - meanRecords;
        double[] pa = new double[W]; // powers of (-b dy), (-b dm), (a dy), (a dm)
        double[] qa = new double[W];
        double[] pb = new double[W];
        double[] qb = new double[W];
        pa[0] = qa[0] = pb[0] = qb[0] = 1;
        for (int k = 1; k < W; k++) {
            pa[k] = pa[k - 1] * (-b * dy);
            qa[k] = qa[k - 1] * (-b * dm);
            pb[k] = pb[k - 1] * (a * dy);
            qb[k] = qb[k - 1] * (a * dm);
        }
        s[0] = nA;
        for (int order = ORDER; order >= 2; order--) {
            for (int p = order; p >= 0; p--) {
                int q = order - p;
                double v = 0;
                for (int i = 0; i <= p; i++) {
                    for (int j = 0; j <= q; j++) {
                        if (i + j == 1) {
                            continue; // first central moments are 0
                        }
                        double c = BINOMIAL[p][i] * BINOMIAL[q][j];
                        v += c * pa[p - i] * qa[q - j] * s[i * W + j];
                        double sb = i + j == 0 ? otherN : otherSums[i * W + j];
                        if (sb != 0) {
                            v += c * pb[p - i] * qb[q - j] * sb;
                        }
                    }
                }
                s[p * W + q] = v;
            }
        }
        n = total;
        setSums(s);
        meanTotal += b * dy;
        meanRecords += b * dm;
    }

    /**
     * @return the central co-moment sums as an array indexed {@code i * 5 + j}, with {@code S_00 =
     *     n}.
     */
    private double[] sums() {
        double[] s = new double[W * W];
        s[0] = n;
        s[2 * W] = s20;
        s[W + 1] = s11;
        s[2] = s02;
        s[3 * W] = s30;
        s[2 * W + 1] = s21;
        s[W + 2] = s12;
        s[3] = s03;
        s[4 * W] = s40;
        s[3 * W + 1] = s31;
        s[2 * W + 2] = s22;
        s[W + 3] = s13;
        s[4] = s04;
        return s;
    }

    private void setSums(double[] s) {
        s20 = s[2 * W];
        s11 = s[W + 1];
        s02 = s[2];
        s30 = s[3 * W];
        s21 = s[2 * W + 1];
        s12 = s[W + 2];
        s03 = s[3];
        s40 = s[4 * W];
        s31 = s[3 * W + 1];
        s22 = s[2 * W + 2];
        s13 = s[W + 3];
        s04 = s[4];
    }

    private void copyFrom(StratumAccumulator o) {
        n = o.n;
        meanTotal = o.meanTotal;
        meanRecords = o.meanRecords;
        setSums(o.sums());
        minTotal = o.minTotal;
        maxTotal = o.maxTotal;
        exactTotal = new ExactSum().merge(o.exactTotal);
    }

    /**
     * @return a fresh copy of this accumulator.
     */
    public StratumAccumulator copy() {
        StratumAccumulator c = new StratumAccumulator();
        c.copyFrom(this);
        return c;
    }

    /**
     * @return number of messages added.
     */
    public long count() {
        return n;
    }

    /**
     * @return mean of the per-message totals ({@code NaN} if empty).
     */
    public double meanTotal() {
        return n == 0 ? Double.NaN : meanTotal;
    }

    /**
     * @return unbiased sample variance of the per-message totals ({@code NaN} if fewer than 2
     *     messages).
     */
    public double varianceTotal() {
        return n < 2 ? Double.NaN : Math.max(0.0, s20 / (n - 1));
    }

    /**
     * @return sample skewness {@code g1 = m3 / m2^(3/2)} (moments with denominator n) of the
     *     per-message totals, e.g. for {@link MsrPlanner#plan(long, double, double, double)};
     *     {@code NaN} if fewer than 3 messages, 0 if they are all equal
     */
    public double skewnessTotal() {
        if (n < 3) {
            return Double.NaN;
        }
        if (!(s20 > 0)) {
            return 0.0;
        }
        return Math.sqrt(n) * s30 / Math.pow(s20, 1.5);
    }

    /**
     * @return smallest per-message total seen ({@code +Infinity} if empty).
     */
    public double minTotal() {
        return minTotal;
    }

    /**
     * @return largest per-message total seen ({@code -Infinity} if empty).
     */
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
            throw new IllegalArgumentException(
                    "population size N_g="
                            + populationUnits
                            + " is smaller than the number of sampled messages n_g="
                            + n);
        }
        double varY = n < 2 ? 0.0 : Math.max(0.0, s20 / (n - 1));
        double varM = n < 2 ? 0.0 : Math.max(0.0, s02 / (n - 1));
        double cov = n < 2 ? 0.0 : s11 / (n - 1);
        StratumSummary.HigherMoments higher = StratumSummary.HigherMoments.NONE;
        if (n >= 3) {
            double k = 1.0 / n;
            higher =
                    new StratumSummary.HigherMoments(
                            k * s30,
                            k * s21,
                            k * s12,
                            k * s03,
                            Math.max(0.0, k * s40),
                            k * s31,
                            Math.max(0.0, k * s22),
                            k * s13,
                            Math.max(0.0, k * s04));
        }
        return new StratumSummary(
                populationUnits,
                n,
                n == 0 ? 0.0 : meanTotal,
                varY,
                n == 0 ? 0.0 : meanRecords,
                varM,
                cov,
                higher,
                StratumSummary.ExactTotal.of(exactTotal));
    }

    @Override
    public String toString() {
        return "StratumAccumulator{n="
                + n
                + ", meanTotal="
                + meanTotal()
                + ", varianceTotal="
                + varianceTotal()
                + ", meanRecords="
                + (n == 0 ? Double.NaN : meanRecords)
                + "}";
    }
}
