package io.netapprox.core.sampling;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A quantile of a group whose shares (strata, e.g. Spark map outputs) were sampled at different
 * fractions: every sampled value carries its share's inclusion weight {@code R_m / rho_m} ({@code
 * R_m} values in the share, {@code rho_m} sampled), as {@link StratifiedEstimator} does for means
 * and sums. Pooling the shares as one simple random sample instead over-represents the shares
 * delivered at the higher fraction and biases the quantile whenever the shares' distributions
 * differ.
 *
 * <p><b>Estimate.</b> With the weighted empirical distribution function {@code F_hat(x) = sum_m
 * (R_m / rho_m) #{sampled values of m <= x} / R}, the estimate of the {@code k}-th smallest of the
 * group's {@code R} values ({@code k = ceil(q R)}) is the smallest sampled {@code x} with {@code R
 * F_hat(x) >= k}: the population definition of {@link QuantileAccumulator} applied to the weighted
 * sample.
 *
 * <p><b>Interval</b> (Woodruff 1952): {@code F_hat} at the estimate is a stratified mean of a 0/1
 * indicator with variance {@code V = sum_m w_m^2 (1 - f_m) s_m^2 / rho_m}, {@code s_m^2} the
 * indicator's sample variance in share m (from the add-half smoothed fraction, so that a share
 * entirely on one side still counts); a Wilson score interval {@code [p_L, p_U]} for {@code p = k /
 * R} at the effective sample size {@code p (1 - p) / V}, with Student's t at the
 * Welch-Satterthwaite degrees of freedom, is mapped back through {@code F_hat}: {@code low} is the
 * smallest sampled value reaching {@code p_L}, {@code high} the smallest exceeding {@code p_U}.
 * Unbounded ends are infinite. A single sampled share keeps the exact distribution-free interval of
 * {@link QuantileAccumulator}; complete shares contribute their values with weight 1 and no
 * variance; all shares complete give the exact quantile.
 *
 * <p>Not thread-safe.
 */
public final class StratifiedQuantile {

    private final List<double[]> samples = new ArrayList<>();
    private final List<Long> populations = new ArrayList<>();
    private final List<QuantileAccumulator> accumulators = new ArrayList<>();

    /** Creates a quantile estimator with no share yet. */
    public StratifiedQuantile() {}

    /**
     * @param sample the share's sampled values (a simple random sample without replacement of them)
     * @param populationCount the number of values the share has, {@code >= sample.count()}; a share
     *     with values needs at least one sampled
     * @return this
     */
    public StratifiedQuantile addShare(QuantileAccumulator sample, long populationCount) {
        if (sample == null) {
            throw new IllegalArgumentException("sample must not be null");
        }
        if (populationCount < sample.count()) {
            throw new IllegalArgumentException(
                    "share population "
                            + populationCount
                            + " is smaller than its sample "
                            + sample.count());
        }
        if (populationCount > 0 && sample.count() == 0) {
            throw new IllegalArgumentException(
                    "a share with "
                            + populationCount
                            + " values has no sampled value; "
                            + "the quantile cannot be estimated");
        }
        if (populationCount == 0) {
            return this;
        }
        samples.add(sample.sortedValues());
        populations.add(populationCount);
        accumulators.add(sample);
        return this;
    }

    /**
     * @return the number of values over all shares.
     */
    public long populationCount() {
        long r = 0;
        for (long p : populations) {
            r += p;
        }
        return r;
    }

    /**
     * @param q in (0, 1]
     * @param confidence in (0, 1)
     * @return the group's q-quantile ({@code ceil(q R)}-th smallest value)
     */
    public ApproxResult quantile(double q, double confidence) {
        if (!(q > 0.0 && q <= 1.0)) {
            throw new IllegalArgumentException(
                    "quantile probability q must be in (0, 1], got " + q);
        }
        long all = populationCount();
        if (all == 0) {
            throw new IllegalArgumentException("no values; the quantile cannot be estimated");
        }
        return quantileAtRank(
                (long) Math.max(1, Math.min(all, Math.ceil(q * all - 1e-9))), confidence);
    }

    /**
     * @param rank 1-based rank among the group's values, in {@code [1, populationCount()]}
     * @param confidence in (0, 1)
     * @return the group's rank-th smallest value, estimated
     */
    public ApproxResult quantileAtRank(long rank, double confidence) {
        ApproxResult.checkConfidence(confidence);
        long all = populationCount();
        if (rank < 1 || rank > all) {
            throw new IllegalArgumentException("rank " + rank + " outside [1, " + all + "]");
        }
        long sampled = 0;
        int partial = -1;
        int partialShares = 0;
        for (int m = 0; m < samples.size(); m++) {
            sampled += samples.get(m).length;
            if (samples.get(m).length < populations.get(m)) {
                partial = m;
                partialShares++;
            }
        }
        if (partialShares == 0) {
            double[] everything = new double[(int) all];
            int at = 0;
            for (double[] s : samples) {
                System.arraycopy(s, 0, everything, at, s.length);
                at += s.length;
            }
            Arrays.sort(everything);
            return ApproxResult.exact(everything[(int) rank - 1], confidence, all);
        }
        if (samples.size() == 1) {
            long n = populations.get(partial);
            return accumulators.get(partial).quantile(rank / (double) n, confidence, n);
        }
        return woodruff(rank, confidence, all, sampled);
    }

    private ApproxResult woodruff(long rank, double confidence, long all, long sampled) {
        // all sampled values with their weights, sorted by value: a merge of the shares' sorted
        // samples
        int total = (int) sampled;
        int shares = samples.size();
        double[] sortedValue = new double[total];
        double[] cumulative = new double[total];
        double[] weight = new double[shares];
        int[] cursor = new int[shares];
        for (int m = 0; m < shares; m++) {
            weight[m] = (double) populations.get(m) / samples.get(m).length;
        }
        double acc = 0;
        for (int i = 0; i < total; i++) {
            int best = -1;
            for (int m = 0; m < shares; m++) {
                if (cursor[m] < samples.get(m).length
                        && (best < 0
                                || samples.get(m)[cursor[m]] < samples.get(best)[cursor[best]])) {
                    best = m;
                }
            }
            sortedValue[i] = samples.get(best)[cursor[best]++];
            acc += weight[best];
            cumulative[i] = acc;
        }
        // cumulative weight at each distinct value (ties: the weight of all copies)
        for (int i = total - 2; i >= 0; i--) {
            if (sortedValue[i] == sortedValue[i + 1]) {
                cumulative[i] = cumulative[i + 1];
            }
        }
        double tolerance = 1e-9 * all;
        int point = firstReaching(cumulative, rank - tolerance);
        double estimate = sortedValue[point];
        // the indicator "value <= estimate" per share: variance of the weighted fraction,
        // Satterthwaite df
        double variance = 0;
        double dfDen = 0;
        for (int m = 0; m < samples.size(); m++) {
            double[] s = samples.get(m);
            long pop = populations.get(m);
            if (s.length >= pop) {
                continue;
            }
            if (s.length < 2) {
                return new ApproxResult(
                        estimate,
                        Double.NEGATIVE_INFINITY,
                        Double.POSITIVE_INFINITY,
                        confidence,
                        sampled,
                        all);
            }
            double below = atMost(s, estimate);
            double p = (below + 0.5) / (s.length + 1.0);
            double w = (double) pop / all;
            double f = (double) s.length / pop;
            double term = w * w * (1 - f) * p * (1 - p) * s.length / (s.length - 1.0) / s.length;
            variance += term;
            dfDen += term * term / (s.length - 1.0);
        }
        double p = (double) rank / all;
        double df = dfDen > 0 ? variance * variance / dfDen : Double.POSITIVE_INFINITY;
        double c = CriticalValues.twoSided(confidence, Math.max(1, df));
        double nEff = p * (1 - p) / variance;
        double c2n = c * c / nEff;
        double center = (p + c2n / 2) / (1 + c2n);
        double half = c / (1 + c2n) * Math.sqrt(p * (1 - p) / nEff + c * c / (4 * nEff * nEff));
        double pLow = center - half;
        double pHigh = center + half;
        double low = Double.NEGATIVE_INFINITY;
        if (pLow * all > cumulative[0] - tolerance) {
            low = sortedValue[firstReaching(cumulative, pLow * all - tolerance)];
        }
        double high = Double.POSITIVE_INFINITY;
        if (pHigh < 1) {
            int i = firstExceeding(cumulative, pHigh * all + tolerance);
            if (i < total) {
                high = sortedValue[i];
            }
        }
        return new ApproxResult(
                estimate,
                Math.min(low, estimate),
                Math.max(high, estimate),
                confidence,
                sampled,
                all);
    }

    /**
     * @return the first index with {@code cumulative >= target} (the last index if none).
     */
    private static int firstReaching(double[] cumulative, double target) {
        int lo = 0;
        int hi = cumulative.length - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] >= target) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /**
     * @return the first index with {@code cumulative > target} ({@code length} if none).
     */
    private static int firstExceeding(double[] cumulative, double target) {
        int lo = 0;
        int hi = cumulative.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] > target) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /**
     * @return how many of the sorted values are {@code <= x}.
     */
    private static int atMost(double[] sorted, double x) {
        int lo = 0;
        int hi = sorted.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (sorted[mid] <= x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
