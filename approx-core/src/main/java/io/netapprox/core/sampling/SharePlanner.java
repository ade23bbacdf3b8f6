package io.netapprox.core.sampling;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Plans how many messages each share of a group must deliver so that the <em>group's</em> estimate
 * meets its relative error bound {@code e_max} at the confidence, whatever the split of the group
 * over the shares: evenly spread, all in one share, or anything between. A share is the part of a
 * group one sender holds (a Spark map output); each is sampled on its own (a stratum), and the
 * group estimate combines them with their own inclusion weights, so its variance is the sum of the
 * shares' variances.
 *
 * <p><b>Mean, sum</b> ({@link #mean}). Share {@code m} has {@code R_m} records with mean {@code
 * mu_m} and variance {@code S_m^2}; {@code w_m = R_m / R}. Delivering {@code rho_m} random records
 * of it gives the group mean's estimator the variance {@code V(rho) = sum_m w_m^2 S_m^2 (1/rho_m -
 * 1/R_m)} (finite-population corrected). The bound asks {@code c sqrt(V) <= e_max |mu|}. The
 * smallest total sample meeting it is Neyman's allocation with the finite-population correction,
 * {@code rho_m = w_m S_m * sum_k w_k S_k / (V_max + sum_k w_k^2 S_k^2 / R_k)}, {@code V_max =
 * (e_max |mu| / c)^2}, with shares whose {@code rho_m} would exceed {@code R_m} delivered whole,
 * and shares below the minimum (2 messages, so their variance can be estimated) raised to it, the
 * others re-solved (iteratively). {@code c} is Student's t at the plan's Welch-Satterthwaite
 * degrees of freedom (Normal from 100). A group in one share gets the single-stratum sample size of
 * {@link MsrPlanner}; M equal shares get M equal parts of it. The group total's relative error is
 * the mean's (the record count is known exactly), so sums use the same plan. Then, as Cochran's
 * rule {@code n >= 25 G1^2} does for one sample, the estimator's own skewness {@code sum_m w_m^3
 * (1-f_m)(1-2f_m) k3_m / rho_m^2 / V^1.5} must be at most 0.2 (skewed and heavy-tailed shares get
 * more), scaling every share's sample up together until it is.
 *
 * <p><b>Quantiles</b> ({@link #quantile}): {@code e_max} bounds the value, {@code |q_hat - q| <=
 * e_max |q|}. With {@code lo = q - e_max |q|} and {@code hi = q + e_max |q|}, the estimate (the
 * smallest sampled value whose weighted empirical distribution function reaches {@code p}) is
 * within the bound exactly when the estimated fraction of the group below {@code lo} stays under
 * {@code p} and the estimated fraction at most {@code hi} reaches {@code p}. Each is a stratified
 * mean of a 0/1 indicator whose variance has the same form as above with {@code S_m^2 = P_m (1 -
 * P_m)} ({@code P_m} the share's fraction below {@code lo}, resp. at most {@code hi}); each side
 * gets {@code alpha/2}: {@code V_lo <= ((p - F(lo) - 1/(2 rho)) / z)^2} (continuity-corrected) and
 * likewise for {@code hi}. The allocation is the larger of the two Neyman allocations per share.
 * The {@code P_m} come from the shares' {@link ValueSketch}es. A quantile at an atom of tied values
 * needs little (the window holds the whole atom); a quantile in a gap of the distribution, where
 * the fractions barely change across the window, approaches a census; {@code q = 0} must be hit
 * exactly.
 *
 * <p><b>Top-k counts</b> ({@link #topK}): {@code e_max} bounds each top-k key's estimated record
 * count; per key the count is a stratified total of an indicator, planned as above; the allocation
 * is the largest over the k keys.
 *
 * <p>Plans are in records and converted to whole messages of each share ({@code N_m} messages of
 * {@code R_m / N_m} records on average), at least {@link #minUnits()} (or the whole share when it
 * has fewer). Instances are immutable.
 */
public final class SharePlanner {

    /**
     * The largest skewness of the estimator accepted (Cochran's {@code n >= 25 G1^2} for one
     * sample).
     */
    static final double MAX_ESTIMATOR_SKEWNESS = 0.2;

    private final double eMax;
    private final double confidence;
    private final long minUnits;

    private SharePlanner(double eMax, double confidence, long minUnits) {
        if (!(eMax > 0) || Double.isInfinite(eMax)) {
            throw new IllegalArgumentException(
                    "e_max (relative error bound) must be finite and > 0, got " + eMax);
        }
        ApproxResult.checkConfidence(confidence);
        if (minUnits < 2) {
            throw new IllegalArgumentException(
                    "minimum messages per share must be >= 2, got " + minUnits);
        }
        this.eMax = eMax;
        this.confidence = confidence;
        this.minUnits = minUnits;
    }

    /**
     * @param eMax relative error bound, finite and {@code > 0}
     * @param confidence in (0, 1)
     * @return a planner that asks at least 2 messages of every share
     */
    public static SharePlanner of(double eMax, double confidence) {
        return new SharePlanner(eMax, confidence, MsrPlanner.DEFAULT_MIN_SAMPLE_SIZE);
    }

    /**
     * @param n minimum messages per share, {@code >= 2} @return a planner with that minimum
     */
    public SharePlanner withMinUnits(long n) {
        return new SharePlanner(eMax, confidence, n);
    }

    /**
     * @return {@code e_max}.
     */
    public double relativeErrorBound() {
        return eMax;
    }

    /**
     * @return the confidence.
     */
    public double confidence() {
        return confidence;
    }

    /**
     * @return the minimum number of messages asked of a share (the whole share when it has fewer).
     */
    public long minUnits() {
        return minUnits;
    }

    /**
     * @return every share at its minimum.
     */
    public ShareAllocation minimum(long[] populationUnits) {
        long[] u = new long[populationUnits.length];
        for (int m = 0; m < u.length; m++) {
            u[m] = Math.min(minUnits, populationUnits[m]);
        }
        return new ShareAllocation(u, populationUnits, Double.NaN);
    }

    // ---- mean and sum ---------------------------------------------------------------------------

    /**
     * Plan for the group's mean (and total) of one value column.
     *
     * @param shares the group's shares (census statistics of each)
     * @return messages per share
     */
    public ShareAllocation mean(List<ShareMoments> shares) {
        int k = shares.size();
        long[] pop = new long[k];
        double[] records = new double[k];
        double total = 0;
        double all = 0;
        for (int m = 0; m < k; m++) {
            ShareMoments s = shares.get(m);
            pop[m] = s.units();
            records[m] = s.records();
            total += s.records() * s.mean();
            all += s.records();
        }
        if (all == 0) {
            return minimum(pop);
        }
        double mu = total / all;
        double[] a = new double[k];
        double[] k3 = new double[k];
        boolean varies = false;
        for (int m = 0; m < k; m++) {
            ShareMoments s = shares.get(m);
            double w = records[m] / all;
            a[m] = w * w * s.variance();
            k3[m] = w * w * w * s.thirdMoment();
            varies |= a[m] > 0;
        }
        if (!varies) {
            return minimum(pop);
        }
        if (!(eMax * Math.abs(mu) > 0)) {
            return ShareAllocation.census(pop); // mean 0: a relative bound is undefined
        }
        Indicator v = new Indicator(a, records, pop);
        ShareAllocation plan = allocate(v, c -> Math.pow(eMax * Math.abs(mu) / c, 2));
        return skewnessFloor(plan, v, k3);
    }

    /**
     * Cochran's rule for the combined estimator: scale every planned share up (capped at the whole
     * share) until the estimator's skewness is at most {@link #MAX_ESTIMATOR_SKEWNESS}.
     */
    private ShareAllocation skewnessFloor(ShareAllocation plan, Indicator v, double[] k3) {
        double[] rho = v.records(plan);
        if (Math.abs(skewness(rho, v, k3)) <= MAX_ESTIMATOR_SKEWNESS) {
            return plan;
        }
        double lo = 1.0;
        double hi = 1.0;
        for (int m = 0; m < rho.length; m++) {
            if (rho[m] > 0) {
                hi = Math.max(hi, v.records[m] / rho[m]);
            }
        }
        for (int i = 0; i < 60 && hi - lo > 1e-6 * lo; i++) {
            double mid = 0.5 * (lo + hi);
            if (Math.abs(skewness(scaled(rho, v.records, mid), v, k3)) <= MAX_ESTIMATOR_SKEWNESS) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        double[] up = scaled(rho, v.records, hi);
        return new ShareAllocation(v.units(up, minUnits), v.units, plan.criticalValue());
    }

    private static double[] scaled(double[] rho, double[] records, double factor) {
        double[] out = new double[rho.length];
        for (int m = 0; m < rho.length; m++) {
            out[m] = Math.min(records[m], rho[m] * factor);
        }
        return out;
    }

    /**
     * Skewness of the stratified mean: sum w^3 (1-f)(1-2f) k3 / rho^2 over V^1.5 (k3 already times
     * w^3).
     */
    private static double skewness(double[] rho, Indicator v, double[] k3w) {
        double third = 0;
        double var = 0;
        for (int m = 0; m < rho.length; m++) {
            if (v.records[m] == 0 || rho[m] >= v.records[m]) {
                continue;
            }
            double f = rho[m] / v.records[m];
            third += (1 - f) * (1 - 2 * f) * k3w[m] / (rho[m] * rho[m]);
            var += v.a[m] * (1 / rho[m] - 1 / v.records[m]);
        }
        return var > 0 ? third / Math.pow(var, 1.5) : 0.0;
    }

    // ---- quantiles ------------------------------------------------------------------------------

    /**
     * Plan for the group's {@code q}-quantile of one value column (the {@code ceil(q R)}-th
     * smallest of its {@code R} values), {@code e_max} bounding the relative error of the value.
     *
     * @param shares the group's shares: a sketch of each share's values with its number of messages
     * @param units messages per share, in the same order
     * @param q in (0, 1]
     * @return messages per share
     */
    public ShareAllocation quantile(List<ValueSketch> shares, long[] units, double q) {
        if (!(q > 0 && q <= 1)) {
            throw new IllegalArgumentException("quantile probability must be in (0, 1], got " + q);
        }
        long all = 0;
        for (ValueSketch s : shares) {
            all += s.count();
        }
        return quantileAtRank(shares, units, (long) Math.max(1, Math.ceil(q * all - 1e-9)));
    }

    /**
     * As {@link #quantile}, for the group's {@code rank}-th smallest value (e.g. when NaN values,
     * counted apart and sorting above every number, shift the rank of a quantile among the
     * numbers).
     *
     * @param shares sketches of the shares' (non-NaN) values
     * @param units messages per share
     * @param rank 1-based rank among the sketched values, {@code 1 <= rank <= } their number
     * @return messages per share
     */
    public ShareAllocation quantileAtRank(List<ValueSketch> shares, long[] units, long rank) {
        int k = shares.size();
        if (units.length != k) {
            throw new IllegalArgumentException("one message count per share");
        }
        double[] records = new double[k];
        double all = 0;
        for (int m = 0; m < k; m++) {
            records[m] = shares.get(m).count();
            // (a share's messages may hold more records than its sketch when NaN values are counted
            // apart)
            if (units[m] < 0 || (records[m] > 0 && units[m] == 0)) {
                throw new IllegalArgumentException(
                        "share " + m + ": " + units[m] + " messages for " + records[m] + " values");
            }
            all += records[m];
        }
        if (all == 0) {
            return minimum(units);
        }
        if (rank < 1 || rank > all) {
            throw new IllegalArgumentException("rank " + rank + " outside [1, " + (long) all + "]");
        }
        double q = groupValueAtRank(shares, rank);
        double p = rank / all;
        double lo = q - eMax * Math.abs(q);
        double hi = q + eMax * Math.abs(q);
        if (Double.isInfinite(q)) {
            lo = q;
            hi = q;
        }
        double[] aLo = new double[k];
        double[] aHi = new double[k];
        double fLo = 0;
        double fHi = 0;
        for (int m = 0; m < k; m++) {
            if (records[m] == 0) {
                continue;
            }
            double w = records[m] / all;
            double pLo = shares.get(m).below(lo) / records[m];
            double pHi = shares.get(m).atMost(hi) / records[m];
            fLo += w * pLo;
            fHi += w * pHi;
            double fpc = records[m] > 1 ? records[m] / (records[m] - 1) : 1.0;
            aLo[m] = w * w * pLo * (1 - pLo) * fpc;
            aHi[m] = w * w * pHi * (1 - pHi) * fpc;
        }
        ShareAllocation low = side(aLo, records, units, p - fLo);
        ShareAllocation high = side(aHi, records, units, fHi - p);
        return low.max(high);
    }

    /**
     * One side of the quantile's window: the indicator's estimate must stay {@code distance} away
     * from p.
     */
    private ShareAllocation side(double[] a, double[] records, long[] units, double distance) {
        boolean varies = false;
        for (double x : a) {
            varies |= x > 0;
        }
        if (!varies) {
            return minimum(
                    units); // every share is on one side of the threshold: no sample can cross it
        }
        if (!(distance > 0)) {
            return ShareAllocation.census(units);
        }
        Indicator v = new Indicator(a, records, units);
        // continuity correction: the sampled fraction moves in steps of 1/rho; re-plan with the
        // corrected distance
        ShareAllocation plan = allocate(v, c -> Math.pow(distance / c, 2));
        for (int i = 0; i < 5; i++) {
            double rho = 0;
            for (double r : v.records(plan)) {
                rho += r;
            }
            double corrected = distance - 0.5 / rho;
            if (!(corrected > 0)) {
                return ShareAllocation.census(units);
            }
            ShareAllocation next = allocate(v, c -> Math.pow(corrected / c, 2));
            if (next.totalUnits() <= plan.totalUnits()) {
                break;
            }
            plan = next;
        }
        return plan;
    }

    /**
     * The group's rank-th smallest value, located on the merged sketches (interpolated between kept
     * values).
     */
    static double groupValueAtRank(List<ValueSketch> shares, long rank) {
        List<Double> candidates = new ArrayList<>();
        for (ValueSketch s : shares) {
            for (double v : s.points()) {
                candidates.add(v);
            }
        }
        candidates.sort(Comparator.naturalOrder());
        // the first kept value at which at least `rank` values are at most it
        int lo = 0;
        int hi = candidates.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (atMost(shares, candidates.get(mid)) >= rank) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        double upper = candidates.get(lo);
        if (lo == 0) {
            return upper;
        }
        double lower = candidates.get(lo - 1);
        if (!(upper > lower) || Double.isInfinite(lower) || Double.isInfinite(upper)) {
            return upper;
        }
        // between two kept values the merged count is (piecewise) linear: solve for the rank
        double cLo = atMost(shares, lower);
        double cHi = below(shares, upper);
        if (!(cHi > cLo) || rank > cHi) {
            return upper;
        }
        double x = lower + (upper - lower) * (rank - cLo) / (cHi - cLo);
        return Math.min(upper, Math.max(lower, x));
    }

    private static double atMost(List<ValueSketch> shares, double x) {
        double c = 0;
        for (ValueSketch s : shares) {
            c += s.atMost(x);
        }
        return c;
    }

    private static double below(List<ValueSketch> shares, double x) {
        double c = 0;
        for (ValueSketch s : shares) {
            c += s.below(x);
        }
        return c;
    }

    // ---- top-k ----------------------------------------------------------------------------------

    /**
     * Key counts of one share for planning top-k: the (possibly truncated) record count of each
     * key.
     *
     * @param units messages of the share
     * @param records records of the share
     * @param counts record count per key (only the most frequent keys if truncated)
     * @param truncatedAt the largest count of a key left out of {@code counts} (0 if none was left
     *     out)
     * @param <K> key type
     */
    public record KeyCounts<K>(long units, long records, Map<K, Long> counts, long truncatedAt)
            implements java.io.Serializable {
        /** Validates. */
        public KeyCounts {
            if (records < 0
                    || units < 0
                    || units > records
                    || (records > 0 && units == 0)
                    || truncatedAt < 0
                    || counts == null) {
                throw new IllegalArgumentException(
                        "invalid key counts: units="
                                + units
                                + ", records="
                                + records
                                + ", truncatedAt="
                                + truncatedAt);
            }
            counts = Map.copyOf(counts);
        }
    }

    /**
     * Plan for the record counts of the group's top-k keys: each of the k most frequent keys (by
     * the merged counts) must be estimated within {@code e_max} of its count.
     *
     * @param shares key counts per share
     * @param k number of keys, {@code >= 1}
     * @param <K> key type
     * @return messages per share
     */
    public <K> ShareAllocation topK(List<KeyCounts<K>> shares, int k) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be >= 1, got " + k);
        }
        int s = shares.size();
        long[] units = new long[s];
        double[] records = new double[s];
        Map<K, Long> merged = new HashMap<>();
        for (int m = 0; m < s; m++) {
            KeyCounts<K> kc = shares.get(m);
            units[m] = kc.units();
            records[m] = kc.records();
            kc.counts().forEach((key, c) -> merged.merge(key, c, Long::sum));
        }
        ShareAllocation plan = minimum(units);
        List<Map.Entry<K, Long>> top = new ArrayList<>(merged.entrySet());
        top.sort(
                Comparator.<Map.Entry<K, Long>>comparingLong(e -> -e.getValue())
                        .thenComparing(e -> String.valueOf(e.getKey())));
        for (Map.Entry<K, Long> e : top.subList(0, Math.min(k, top.size()))) {
            double[] a = new double[s];
            boolean varies = false;
            for (int m = 0; m < s; m++) {
                if (records[m] == 0) {
                    continue;
                }
                KeyCounts<K> kc = shares.get(m);
                Long c = kc.counts().get(e.getKey());
                // a key left out of a truncated share may have up to truncatedAt records there
                // (conservative: the
                // indicator's variance grows with its frequency below 1/2)
                double pi =
                        (c != null ? c : Math.min(kc.truncatedAt(), records[m] / 2)) / records[m];
                double fpc = records[m] > 1 ? records[m] / (records[m] - 1) : 1.0;
                a[m] = records[m] * records[m] * pi * (1 - pi) * fpc;
                varies |= a[m] > 0;
            }
            if (!varies) {
                continue;
            }
            double count = e.getValue();
            plan =
                    plan.max(
                            allocate(
                                    new Indicator(a, records, units),
                                    c -> Math.pow(eMax * count / c, 2)));
        }
        return plan;
    }

    // ---- the allocation -------------------------------------------------------------------------

    /**
     * A stratified estimator's variance {@code V(rho) = sum_m a_m (1/rho_m - 1/R_m)} over shares of
     * {@code R_m} records cut into {@code N_m} messages.
     */
    private static final class Indicator {
        final double[] a;
        final double[] records;
        final long[] units;

        Indicator(double[] a, double[] records, long[] units) {
            this.a = a;
            this.records = records;
            this.units = units;
        }

        /**
         * Records a plan delivers per share (messages times the share's mean records per message).
         */
        double[] records(ShareAllocation plan) {
            double[] rho = new double[a.length];
            for (int m = 0; m < rho.length; m++) {
                rho[m] =
                        units[m] == 0
                                ? 0
                                : Math.min(records[m], plan.units(m) * records[m] / units[m]);
            }
            return rho;
        }

        /** Whole messages for {@code rho} records per share: at least min (or the whole share). */
        long[] units(double[] rho, long min) {
            long[] out = new long[rho.length];
            for (int m = 0; m < rho.length; m++) {
                if (units[m] == 0) {
                    continue;
                }
                if (records[m] == 0) {
                    out[m] = Math.min(min, units[m]);
                    continue;
                }
                long n = (long) Math.ceil(rho[m] * units[m] / records[m] - 1e-9);
                out[m] = Math.min(units[m], Math.max(Math.min(min, units[m]), n));
            }
            return out;
        }

        double variance(double[] rho) {
            double v = 0;
            for (int m = 0; m < rho.length; m++) {
                if (a[m] > 0 && rho[m] < records[m]) {
                    v += a[m] * (1 / rho[m] - 1 / records[m]);
                }
            }
            return v;
        }

        /**
         * Welch-Satterthwaite degrees of freedom of the variance estimate (from each share's
         * messages).
         */
        double degreesOfFreedom(double[] rho, long[] n) {
            double num = 0;
            double den = 0;
            for (int m = 0; m < rho.length; m++) {
                if (a[m] > 0 && rho[m] < records[m]) {
                    double t = a[m] * (1 / rho[m] - 1 / records[m]);
                    num += t;
                    den += t * t / Math.max(1, n[m] - 1);
                }
            }
            return den > 0 ? num * num / den : Double.POSITIVE_INFINITY;
        }
    }

    /** The variance budget for a critical value. */
    private interface Budget {
        double at(double criticalValue);
    }

    /**
     * The Neyman allocation for the budget at the critical value, re-solved with Student's t at the
     * plan's degrees of freedom until the critical value no longer grows.
     */
    private ShareAllocation allocate(Indicator v, Budget budget) {
        double c = CriticalValues.normal(confidence);
        ShareAllocation plan = null;
        for (int i = 0; i < 30; i++) {
            long[] n = v.units(neyman(v, budget.at(c)), minUnits);
            plan = new ShareAllocation(n, v.units, c);
            double df = v.degreesOfFreedom(v.records(plan), n);
            double next = CriticalValues.twoSided(confidence, Math.max(1, df));
            if (next <= c * (1 + 1e-9)) {
                break;
            }
            c = next;
        }
        return plan;
    }

    /**
     * Minimises {@code sum rho_m} subject to {@code V(rho) <= vMax} and {@code L_m <= rho_m <= R_m}
     * ({@code L_m} = the minimum messages' records): Neyman's {@code rho_m ~ sqrt(a_m)} for the
     * free shares, shares that would exceed their size fixed at it, then shares below their minimum
     * fixed at it, re-solving the rest.
     */
    private double[] neyman(Indicator v, double vMax) {
        int k = v.a.length;
        double[] rho = new double[k];
        double[] lower = new double[k];
        int[] state = new int[k]; // 0 free, 1 fixed
        for (int m = 0; m < k; m++) {
            if (v.units[m] == 0 || v.records[m] == 0) {
                state[m] = 1;
                continue;
            }
            lower[m] =
                    Math.min(
                            v.records[m],
                            Math.min(minUnits, v.units[m]) * v.records[m] / v.units[m]);
            if (v.a[m] == 0) {
                state[m] = 1;
                rho[m] = lower[m];
            }
        }
        if (!(vMax > 0)) {
            return v.records.clone();
        }
        while (true) {
            double budget = vMax;
            double sqrtSum = 0;
            for (int m = 0; m < k; m++) {
                if (v.a[m] == 0 || v.units[m] == 0 || v.records[m] == 0) {
                    continue;
                }
                budget += v.a[m] / v.records[m]; // the finite-population terms
                if (state[m] == 1) {
                    budget -= v.a[m] / rho[m];
                } else {
                    sqrtSum += Math.sqrt(v.a[m]);
                }
            }
            if (sqrtSum == 0) {
                return rho;
            }
            if (!(budget > 0)) {
                for (int m = 0; m < k; m++) {
                    if (state[m] == 0) {
                        rho[m] = v.records[m];
                    }
                }
                return rho;
            }
            boolean changed = false;
            for (int m = 0; m < k; m++) {
                if (state[m] == 0) {
                    rho[m] = Math.sqrt(v.a[m]) * sqrtSum / budget;
                }
            }
            for (int m = 0; m < k; m++) {
                if (state[m] == 0 && rho[m] >= v.records[m]) {
                    rho[m] = v.records[m];
                    state[m] = 1;
                    changed = true;
                }
            }
            if (changed) {
                continue;
            }
            for (int m = 0; m < k; m++) {
                if (state[m] == 0 && rho[m] < lower[m]) {
                    rho[m] = lower[m];
                    state[m] = 1;
                    changed = true;
                }
            }
            if (!changed) {
                return rho;
            }
        }
    }

    @Override
    public String toString() {
        return "SharePlanner{e_max="
                + eMax
                + ", confidence="
                + confidence
                + ", minUnits="
                + minUnits
                + "}";
    }
}
