package io.netapprox.core.sampling;

import java.io.Serializable;
import java.util.Arrays;
import org.apache.commons.math3.distribution.HypergeometricDistribution;

/**
 * Collects the sampled values of one stratum and estimates quantiles with a distribution-free
 * order-statistic confidence interval.
 *
 * <p><b>Definition.</b> The {@code q}-quantile of a population of {@code N} values is its {@code
 * ceil(q N)}-th smallest value (the inverse of the empirical distribution function); the point
 * estimate is the same statistic of the sample, the {@code ceil(q n)}-th smallest sampled value.
 *
 * <p><b>Interval.</b> Let {@code K = ceil(q N)}. The number of sampled values that are {@code <=}
 * the true quantile is hypergeometric with {@code K} (or more, with ties) successes among {@code
 * N}, and the number strictly below it is hypergeometric with at most {@code K - 1} successes.
 * Choosing ranks {@code l} = the largest with {@code P(H(N, K, n) <= l - 1) <= alpha/2} and {@code
 * u} = the smallest with {@code P(H(N, K-1, n) <= u - 1) >= 1 - alpha/2}, the interval {@code
 * [x_(l), x_(u)]} covers the true quantile with probability at least {@code 1 - alpha} for
 * <em>any</em> population (no distributional assumption; ties only make it more conservative). This
 * is the finite-population version of the classic binomial order-statistic interval, which it
 * approaches as {@code N} grows; with a complete sample it collapses to the exact quantile. If the
 * sample is too small to reach a rank, that bound is infinite.
 *
 * <p>The unit is whatever is added: one value per record, or one value per message. Memory grows
 * with the number of sampled values (they are kept); the sample, not the population, is stored.
 * Mergeable and serializable; not thread-safe.
 */
public final class QuantileAccumulator implements Serializable {

    private static final long serialVersionUID = 1L;

    private double[] values = new double[16];
    private int size;

    /** Creates an empty accumulator. */
    public QuantileAccumulator() {}

    /**
     * @param value a sampled value; must not be NaN (infinite values are allowed and sort at the
     *     ends)
     * @return this accumulator
     */
    public QuantileAccumulator add(double value) {
        if (Double.isNaN(value)) {
            throw new IllegalArgumentException("quantile input must not be NaN");
        }
        if (size == values.length) {
            values = Arrays.copyOf(values, Math.max(16, size * 2));
        }
        values[size++] = value;
        return this;
    }

    /**
     * @param other accumulator of the same stratum to merge in (unchanged)
     * @return this accumulator
     */
    public QuantileAccumulator merge(QuantileAccumulator other) {
        if (other == null) {
            throw new IllegalArgumentException("cannot merge a null accumulator");
        }
        if (size + other.size > values.length) {
            values = Arrays.copyOf(values, Math.max(size + other.size, values.length * 2));
        }
        System.arraycopy(other.values, 0, values, size, other.size);
        size += other.size;
        return this;
    }

    /**
     * @return number of sampled values.
     */
    public long count() {
        return size;
    }

    /**
     * @return the sampled values, sorted ascending (a copy).
     */
    double[] sortedValues() {
        double[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        return sorted;
    }

    /**
     * Estimates the {@code q}-quantile of the stratum.
     *
     * @param q probability in (0, 1], e.g. 0.5 for the median
     * @param confidence confidence level in (0, 1)
     * @param populationSize number of values in the stratum, {@code >= count()}
     * @return estimate and interval; {@code low}/{@code high} may be infinite for a small sample
     */
    public ApproxResult quantile(double q, double confidence, long populationSize) {
        if (!(q > 0.0 && q <= 1.0)) {
            throw new IllegalArgumentException(
                    "quantile probability q must be in (0, 1], got " + q);
        }
        ApproxResult.checkConfidence(confidence);
        if (size == 0) {
            throw new IllegalArgumentException(
                    "no sampled values; the quantile cannot be estimated");
        }
        if (populationSize < size) {
            throw new IllegalArgumentException(
                    "population size "
                            + populationSize
                            + " is smaller than the number of sampled values "
                            + size);
        }
        if (populationSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "population size "
                            + populationSize
                            + " exceeds "
                            + Integer.MAX_VALUE
                            + ", the limit of the hypergeometric interval");
        }
        double[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int n = size;
        int bigN = (int) populationSize;
        int pointRank = rank(q, n);
        double point = sorted[pointRank - 1];
        if (n == bigN) {
            return ApproxResult.exact(point, confidence, populationSize);
        }
        double alpha = 1.0 - confidence;
        int k = rank(q, bigN);
        // lower rank l: the largest with P(H(N, K, n) <= l - 1) <= alpha / 2 (l may be 0: no lower
        // bound)
        double[] cdfAtOrBelow = cdf(new HypergeometricDistribution(null, bigN, k, n), n);
        int l = 0;
        while (l <= n && cdfAtOrBelow[l] <= alpha / 2) {
            l++;
        }
        // upper rank u: the smallest with P(H(N, K - 1, n) <= u - 1) >= 1 - alpha / 2 (u = n + 1:
        // no upper bound)
        double[] cdfBelow = cdf(new HypergeometricDistribution(null, bigN, k - 1, n), n);
        int j = 0;
        while (j < n && cdfBelow[j] < 1 - alpha / 2) {
            j++;
        }
        int u = j + 1;
        double low = l >= 1 ? sorted[Math.min(l, n) - 1] : Double.NEGATIVE_INFINITY;
        double high = u <= n ? sorted[u - 1] : Double.POSITIVE_INFINITY;
        low = Math.min(low, point);
        high = Math.max(high, point);
        return new ApproxResult(point, low, high, confidence, n, populationSize);
    }

    /**
     * @return {@code F(0..n)} of the distribution: the point probabilities from the first one's
     *     logarithm and the ratio {@code p(i+1)/p(i) = (K-i)(n-i) / ((i+1)(N-K-n+i+1))}, in log
     *     space (O(n), no underflow)
     */
    private static double[] cdf(HypergeometricDistribution h, int n) {
        double[] out = new double[n + 1];
        int bigN = h.getPopulationSize();
        int k = h.getNumberOfSuccesses();
        int first = Math.max(0, n + k - bigN);
        int last = Math.min(n, k);
        double logP = h.logProbability(first);
        double acc = 0;
        for (int i = 0; i <= n; i++) {
            if (i >= first && i <= last) {
                acc += Math.exp(logP);
                if (i < last) {
                    logP +=
                            Math.log((double) (k - i) * (n - i))
                                    - Math.log((double) (i + 1) * (bigN - k - n + i + 1));
                }
            }
            out[i] = Math.min(1.0, acc);
        }
        out[n] = 1.0;
        return out;
    }

    /**
     * @return the 1-based rank {@code ceil(q * n)}, at least 1.
     */
    private static int rank(double q, int n) {
        return (int) Math.max(1, Math.min(n, Math.ceil(q * n - 1e-9)));
    }
}
