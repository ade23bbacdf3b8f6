package io.netapprox.core.sampling;

import java.util.Collection;
import java.util.List;

/**
 * Stratified Horvitz-Thompson estimators with confidence intervals, per stratum or over all strata.
 *
 * <p>Each stratum {@code g} has {@code N_g} messages of which {@code n_g} were delivered, treated
 * as a simple random sample without replacement; each delivered message has inclusion weight {@code
 * N_g / n_g} and {@code f_g = n_g / N_g} is the sampling fraction. With per-message value totals
 * {@code y_i} and record counts {@code m_i} (sample means {@code ybar_g, mbar_g}, variances {@code
 * s_y^2, s_m^2}, covariance {@code s_ym}):
 *
 * <ul>
 *   <li>{@link #sum}: {@code Y = sum_g N_g ybar_g}, {@code Var = sum_g N_g^2 (1 - f_g) s_y^2 /
 *       n_g};
 *   <li>{@link #count} (records): the same with {@code m_i} in place of {@code y_i};
 *   <li>{@link #mean} (per record): the combined ratio estimator {@code R = Y / M} with linearised
 *       variance {@code Var = M^-2 sum_g N_g^2 (1 - f_g) s_d^2 / n_g}, {@code s_d^2 = s_y^2 - 2 R
 *       s_ym + R^2 s_m^2}; with one record per message this is the ordinary stratified mean;
 *   <li>{@link #proportion}: the mean of a 0/1 indicator, with a Wilson score interval at the
 *       effective sample size {@code R(1-R)/Var} (so it stays inside [0, 1] and behaves near 0 and
 *       1).
 * </ul>
 *
 * <p><b>Intervals</b> for sum, count and mean are built from the studentized statistic {@code T =
 * (estimate - truth) / sqrt(Var)} in two steps that reduce to the classical {@code estimate +- c
 * sqrt(Var)} (Student t, Welch-Satterthwaite df) for Normal-looking data:
 *
 * <ol>
 *   <li><b>Critical value</b> {@code c} from {@link CriticalValues#twoSided} (Student t, Normal
 *       once df >= 100) at the Welch-Satterthwaite degrees of freedom {@code 2 Var^2 / sum_g
 *       Var(a_g)} of the variance estimate, {@code a_g = N_g^2 (1 - f_g) s_g^2 / n_g}, with {@code
 *       Var(a_g) = a_g^2 (2/(n_g - 1) + (1/n_g - 1/N_g) kappa_g)}: {@code kappa_g} is the stratum's
 *       excess kurtosis (bias-adjusted {@code G2} minus two Normal-theory standard errors, floored
 *       at 0). With {@code kappa = 0} this is the usual {@code (sum a_g)^2 / sum a_g^2/(n_g - 1)};
 *       heavy tails make the variance estimate unstable and lower the df.
 *   <li><b>Skewness correction</b> (Hall 1992, generalised to stratified sampling without
 *       replacement; see {@code bounds}): the interval is shifted towards the long tail using the
 *       strata's third k-statistics ({@code k3 (1 - f)(1 - 2f)} for the skewness of the estimator,
 *       {@code k3 (1 - f)^2} for its covariance with the variance estimate), each soft-thresholded
 *       at two Normal-theory standard errors of the sample skewness so that small symmetric samples
 *       keep the t interval.
 * </ol>
 *
 * Summaries without higher moments ({@link StratumSummary.HigherMoments#NONE}) get the classical
 * interval. Proportions use the Normal-theory df (their variance is a function of {@code p}).
 *
 * <p>Degenerate cases: a stratum whose messages were all delivered contributes no variance (so MSR
 * = 1 gives a zero-width interval equal to the truth); a stratum with {@code N_g > n_g} but fewer
 * than two delivered messages has unknown variance and makes the interval infinite; a stratum with
 * {@code N_g > 0} and no delivered message cannot be estimated and raises {@link
 * IllegalArgumentException}; strata with {@code N_g = 0} are ignored.
 */
public final class StratifiedEstimator {

    private StratifiedEstimator() {}

    /** Sum of the aggregated value over one stratum. */
    public static ApproxResult sum(StratumSummary stratum, double confidence) {
        return sum(List.of(stratum), confidence);
    }

    /** Sum of the aggregated value over all given strata. */
    public static ApproxResult sum(Collection<StratumSummary> strata, double confidence) {
        return linear(strata, confidence, false);
    }

    /** Number of records in one stratum (exact when every message carries one record). */
    public static ApproxResult count(StratumSummary stratum, double confidence) {
        return count(List.of(stratum), confidence);
    }

    /** Number of records over all given strata. */
    public static ApproxResult count(Collection<StratumSummary> strata, double confidence) {
        return linear(strata, confidence, true);
    }

    /** Mean value per record in one stratum. */
    public static ApproxResult mean(StratumSummary stratum, double confidence) {
        return mean(List.of(stratum), confidence);
    }

    /** Mean value per record over all given strata (stratified, combined ratio estimator). */
    public static ApproxResult mean(Collection<StratumSummary> strata, double confidence) {
        Ratio r = ratio(strata, confidence);
        return r.toResult(confidence);
    }

    /**
     * Proportion of records with a property in one stratum; the accumulated per-message totals must
     * be counts of such records (0/1 per record).
     */
    public static ApproxResult proportion(StratumSummary stratum, double confidence) {
        return proportion(List.of(stratum), confidence);
    }

    /**
     * Proportion of records with a property over all given strata; see {@link
     * #proportion(StratumSummary, double)}.
     */
    public static ApproxResult proportion(Collection<StratumSummary> strata, double confidence) {
        for (StratumSummary s : checked(strata)) {
            if (s.meanTotal() < 0 || s.meanTotal() > s.meanRecords() * (1 + 1e-12)) {
                throw new IllegalArgumentException(
                        "proportion needs per-message totals that count matching "
                                + "records (0 <= total <= records); got mean total "
                                + s.meanTotal()
                                + " with mean records "
                                + s.meanRecords());
            }
        }
        Ratio r = ratio(strata, confidence);
        double p = Math.min(1.0, Math.max(0.0, r.estimate));
        if (r.exact) {
            return ApproxResult.exact(p, confidence, r.populationUnits);
        }
        if (r.unbounded) {
            return new ApproxResult(p, 0.0, 1.0, confidence, r.sampledUnits, r.populationUnits);
        }
        double nEff;
        if (r.variance > 0 && p > 0 && p < 1) {
            nEff = p * (1 - p) / r.variance;
        } else {
            // No observed variability (all 0 or all 1): effective size from sampled records and the
            // FPC.
            double f = (double) r.sampledUnits / r.populationUnits;
            nEff = r.sampledRecords / Math.max(1e-12, 1 - f);
        }
        // The Wilson interval's variance is a function of p (no separately estimated variance), so
        // the
        // kurtosis adjustment of the degrees of freedom does not apply.
        double c = CriticalValues.twoSided(confidence, r.normalTheoryDf);
        double c2n = c * c / nEff;
        double center = (p + c2n / 2) / (1 + c2n);
        double half = c / (1 + c2n) * Math.sqrt(p * (1 - p) / nEff + c * c / (4 * nEff * nEff));
        double low = Math.max(0.0, Math.min(p, center - half));
        double high = Math.min(1.0, Math.max(p, center + half));
        return new ApproxResult(p, low, high, confidence, r.sampledUnits, r.populationUnits);
    }

    // ------------------------------------------------------------------------------------------------

    private static List<StratumSummary> checked(Collection<StratumSummary> strata) {
        if (strata == null || strata.isEmpty()) {
            throw new IllegalArgumentException("at least one stratum is required");
        }
        List<StratumSummary> list =
                List.copyOf(strata); // rejects null elements with NPE; check explicitly
        long population = 0;
        for (StratumSummary s : list) {
            if (s.populationUnits() > 0 && s.sampledUnits() == 0) {
                throw new IllegalArgumentException(
                        "a stratum with N_g="
                                + s.populationUnits()
                                + " messages has no delivered message; it cannot be estimated (deliver at least "
                                + "one message per non-empty group, e.g. MSR > 0)");
            }
            population += s.populationUnits();
        }
        if (population == 0) {
            throw new IllegalArgumentException("all strata are empty (N_g = 0)");
        }
        return list;
    }

    /** Accumulates variance terms a_g and the Satterthwaite denominator. */
    private static final class VarianceTerms {
        double variance;
        double satterthwaiteDenominator;

        /** The same without the kurtosis term (Normal-theory Welch-Satterthwaite). */
        double normalTheoryDenominator;

        boolean unbounded;
        long sampled;
        long population;
        double sampledRecords;

        /**
         * Estimated third cumulant of the estimator, sum_g N^3 (1-f)(1-2f) k3 / n^2 (times
         * scale^1.5).
         */
        double thirdCumulant;

        /**
         * Estimated covariance of the estimator and its variance estimator, sum_g N^3 (1-f)^2 k3 /
         * n^2.
         */
        double covarianceWithVariance;

        /**
         * @param unitVariance sample variance (denominator n - 1) of the unit quantity (y, m or the
         *     residual)
         * @param unitM3 its third sample central moment (denominator n); 0 if unknown
         * @param unitM4 its fourth sample central moment (denominator n); 0 if unknown
         * @param scale factor applied to the variance (the estimator is sqrt(scale) * sum N ybar)
         */
        void add(
                StratumSummary s, double unitVariance, double unitM3, double unitM4, double scale) {
            sampled += s.sampledUnits();
            population += s.populationUnits();
            sampledRecords += s.sampledUnits() * s.meanRecords();
            if (s.isComplete()) {
                return;
            }
            long n = s.sampledUnits();
            if (n < 2) {
                unbounded = true;
                return;
            }
            double nPop = s.populationUnits();
            double f = n / nPop;
            double a = scale * nPop * nPop * (1.0 - f) * unitVariance / n;
            variance += a;
            double kurtosis = significantExcessKurtosis(n, unitVariance, unitM4);
            // Var(s^2) ~ s^4 (2/(n-1) + (1/n - 1/N) kurtosis); Satterthwaite df = 2 V^2 / sum
            // Var(a_g).
            satterthwaiteDenominator +=
                    a * a * (1.0 / (n - 1) + (1.0 / n - 1.0 / nPop) * kurtosis / 2);
            normalTheoryDenominator += a * a / (n - 1);
            double k3 = significantThirdCumulant(n, unitVariance, unitM3);
            if (k3 != 0) {
                double t = Math.pow(scale, 1.5) * nPop * nPop * nPop * k3 / ((double) n * n);
                thirdCumulant += t * (1.0 - f) * (1.0 - 2.0 * f);
                covarianceWithVariance += t * (1.0 - f) * (1.0 - f);
            }
        }

        boolean exact() {
            return sampled == population;
        }

        /** Kurtosis-adjusted Welch-Satterthwaite degrees of freedom. */
        double df() {
            if (satterthwaiteDenominator <= 0) {
                return Double.POSITIVE_INFINITY;
            }
            return variance * variance / satterthwaiteDenominator;
        }

        /**
         * Normal-theory Welch-Satterthwaite degrees of freedom {@code (sum a_g)^2 / sum a_g^2 /
         * (n_g - 1)}.
         */
        double normalTheoryDf() {
            if (normalTheoryDenominator <= 0) {
                return Double.POSITIVE_INFINITY;
            }
            return variance * variance / normalTheoryDenominator;
        }
    }

    private static ApproxResult linear(
            Collection<StratumSummary> strata, double confidence, boolean records) {
        ApproxResult.checkConfidence(confidence);
        List<StratumSummary> list = checked(strata);
        if (!records && isCensus(list)) {
            double[] exact = censusTotal(list);
            if (exact != null) {
                return census(exact[0], exact[1], confidence, list);
            }
        }
        VarianceTerms t = new VarianceTerms();
        double estimate = 0;
        for (StratumSummary s : list) {
            if (s.populationUnits() == 0) {
                continue;
            }
            double mean = records ? s.meanRecords() : s.meanTotal();
            double var = records ? s.varianceRecords() : s.varianceTotal();
            StratumSummary.HigherMoments h = s.higherMoments();
            estimate += s.populationUnits() * mean;
            t.add(s, var, records ? h.m03() : h.m30(), records ? h.m04() : h.m40(), 1.0);
        }
        return interval(estimate, t, confidence);
    }

    private static boolean isCensus(List<StratumSummary> list) {
        for (StratumSummary s : list) {
            if (!s.isComplete()) {
                return false;
            }
        }
        return true;
    }

    /**
     * The exact total of complete strata and a bound on how far a floating-point summation of the
     * same totals, in any order, can be from it: {@link ExactSum#roundingBound} over all of them,
     * plus an ulp per stratum when the strata's correctly rounded totals are added (exactly, then
     * rounded once). Null when a stratum did not keep its exact total.
     */
    private static double[] censusTotal(List<StratumSummary> list) {
        ExactSum sum = new ExactSum();
        double absolute = 0;
        long count = 0;
        double perStratum = 0;
        int strata = 0;
        for (StratumSummary s : list) {
            if (s.populationUnits() == 0) {
                continue;
            }
            if (!s.exactTotal().isKnown()) {
                return null;
            }
            sum.add(s.exactTotal().value());
            absolute += s.exactTotal().absoluteSum();
            count += s.sampledUnits();
            perStratum += Math.ulp(s.exactTotal().value());
            strata++;
        }
        double value = sum.value();
        double bound =
                ExactSum.roundingBound(count, absolute, value) + (strata > 1 ? perStratum : 0.0);
        return new double[] {value, bound};
    }

    /** records summed from complete strata: the record counts are integers, their means rounded. */
    private static double censusRecords(List<StratumSummary> list) {
        double records = 0;
        for (StratumSummary s : list) {
            records += Math.rint(s.populationUnits() * s.meanRecords());
        }
        return records;
    }

    /**
     * A census: the exact value with an interval as wide as the rounding of a floating-point
     * computation of the same aggregate (so that it contains, e.g., Spark's own sum whatever its
     * summation order).
     */
    private static ApproxResult census(
            double value, double bound, double confidence, List<StratumSummary> list) {
        long population = 0;
        for (StratumSummary s : list) {
            population += s.populationUnits();
        }
        return new ApproxResult(
                value, value - bound, value + bound, confidence, population, population);
    }

    private static ApproxResult interval(double estimate, VarianceTerms t, double confidence) {
        if (t.exact()) {
            return ApproxResult.exact(estimate, confidence, t.population);
        }
        if (t.unbounded) {
            return new ApproxResult(
                    estimate,
                    Double.NEGATIVE_INFINITY,
                    Double.POSITIVE_INFINITY,
                    confidence,
                    t.sampled,
                    t.population);
        }
        if (t.variance == 0) {
            return new ApproxResult(
                    estimate, estimate, estimate, confidence, t.sampled, t.population);
        }
        double[] b =
                bounds(
                        estimate,
                        t.variance,
                        t.thirdCumulant,
                        t.covarianceWithVariance,
                        CriticalValues.twoSided(confidence, t.df()));
        return new ApproxResult(estimate, b[0], b[1], confidence, t.sampled, t.population);
    }

    /**
     * The third k-statistic {@code k3 = n^2 m3 / ((n-1)(n-2))}, soft-thresholded at two standard
     * errors of the sample skewness under Normality: with {@code G1 = k3 / s^3} and {@code se =
     * sqrt(6 (n-2) / ((n+1)(n+3)))}, returns {@code k3 * max(0, 1 - 2 se / |G1|)}. Only skewness
     * that the sample can tell apart from noise moves the interval (so small symmetric samples keep
     * the Student t interval); large skewness is used almost unchanged.
     */
    static double significantThirdCumulant(long n, double variance, double m3) {
        if (n < 3 || m3 == 0 || !(variance > 0)) {
            return 0.0;
        }
        double k3 = m3 * n * n / ((double) (n - 1) * (n - 2));
        double g1 = k3 / (variance * Math.sqrt(variance));
        double se = Math.sqrt(6.0 * (n - 2) / ((double) (n + 1) * (n + 3)));
        return k3 * Math.max(0.0, 1.0 - 2.0 * se / Math.abs(g1));
    }

    /**
     * The bias-adjusted sample excess kurtosis {@code G2 = ((n+1) g2 + 6)(n-1) / ((n-2)(n-3))},
     * {@code g2 = m4 / m2^2 - 3}, minus two of its standard errors under Normality ({@code sqrt(24
     * n (n-1)^2 / ((n-3)(n-2)(n+3)(n+5)))}), floored at 0: heavy tails lower the degrees of freedom
     * of the variance estimate, light tails never raise them above the Normal-theory value.
     */
    static double significantExcessKurtosis(long n, double variance, double m4) {
        if (n < 4 || m4 == 0 || !(variance > 0)) {
            return 0.0;
        }
        double m2 = variance * (n - 1) / n;
        double g2 = m4 / (m2 * m2) - 3;
        double big = ((n + 1) * g2 + 6) * (n - 1) / ((double) (n - 2) * (n - 3));
        double se =
                Math.sqrt(
                        24.0
                                * n
                                * (n - 1)
                                * (n - 1)
                                / ((double) (n - 3) * (n - 2) * (n + 3) * (n + 5)));
        return Math.max(0.0, big - 2.0 * se);
    }

    /**
     * Skewness-corrected interval (Hall 1992's monotone cubic transformation of the studentized
     * statistic, generalised to a stratified estimator under sampling without replacement).
     *
     * <p>For {@code T = (est - truth) / sqrt(Var_hat)}, with {@code A = K3(est) / Var^1.5} (the
     * skewness of the estimator) and {@code B = Cov(est, Var_hat) / Var^1.5}, the Edgeworth
     * expansion gives {@code E T = -B/2} and third cumulant {@code A - 3B}; so {@code g(T) = T + a
     * T^2 + a^2 T^3 / 3 + b} with {@code a = (3B - A) / 6}, {@code b = A / 6} is Normal up to
     * {@code O(1/n)}. For one stratum without FPC {@code A = B = g1 / sqrt(n)} and this is Hall's
     * {@code a = g1 / (3 sqrt n)}, {@code b = g1 / (6 sqrt n)} (Johnson's 1978 modified t plus the
     * cubic term that makes it monotone). {@code g} is invertible, {@code g^-1(y) = ((1 + 3a(y -
     * b))^(1/3) - 1) / a}, and the interval is {@code [est - g^-1(c) sqrt(Var_hat), est - g^-1(-c)
     * sqrt(Var_hat)]}. With zero third moments it is the symmetric {@code est +- c sqrt(Var_hat)}.
     */
    static double[] bounds(
            double estimate,
            double variance,
            double thirdCumulant,
            double covWithVariance,
            double c) {
        double sd = Math.sqrt(variance);
        if (!(variance > 0) || (thirdCumulant == 0 && covWithVariance == 0)) {
            double half = c * sd;
            return new double[] {estimate - half, estimate + half};
        }
        double v15 = variance * sd;
        double skewA = thirdCumulant / v15;
        double skewB = covWithVariance / v15;
        double a = (3 * skewB - skewA) / 6;
        double b = skewA / 6;
        double low = estimate - hallInverse(c, a, b) * sd;
        double high = estimate - hallInverse(-c, a, b) * sd;
        return new double[] {Math.min(low, estimate), Math.max(high, estimate)};
    }

    /** Inverse of {@code g(x) = ((1 + a x)^3 - 1) / (3a) + b}. */
    private static double hallInverse(double y, double a, double b) {
        double u = y - b;
        if (a == 0) {
            return u;
        }
        double z = 3 * a * u;
        double root =
                z > -1 ? Math.expm1(Math.log1p(z) / 3) : Math.cbrt(1 + z) - 1; // (1+z)^(1/3) - 1
        return root / a;
    }

    private static final class Ratio {
        double estimate;
        double variance;
        double df;
        double normalTheoryDf;
        double thirdCumulant;
        double covarianceWithVariance;
        boolean exact;
        boolean unbounded;
        long sampledUnits;
        long populationUnits;
        double sampledRecords;

        /** Half-width of a census's rounding interval (0 when the exact totals were not kept). */
        double exactBound;

        ApproxResult toResult(double confidence) {
            if (exact) {
                return new ApproxResult(
                        estimate,
                        estimate - exactBound,
                        estimate + exactBound,
                        confidence,
                        populationUnits,
                        populationUnits);
            }
            if (unbounded) {
                return new ApproxResult(
                        estimate,
                        Double.NEGATIVE_INFINITY,
                        Double.POSITIVE_INFINITY,
                        confidence,
                        sampledUnits,
                        populationUnits);
            }
            if (variance == 0) {
                return new ApproxResult(
                        estimate, estimate, estimate, confidence, sampledUnits, populationUnits);
            }
            double[] b =
                    bounds(
                            estimate,
                            variance,
                            thirdCumulant,
                            covarianceWithVariance,
                            CriticalValues.twoSided(confidence, df));
            return new ApproxResult(
                    estimate, b[0], b[1], confidence, sampledUnits, populationUnits);
        }
    }

    private static Ratio ratio(Collection<StratumSummary> strata, double confidence) {
        ApproxResult.checkConfidence(confidence);
        List<StratumSummary> list = checked(strata);
        if (isCensus(list)) {
            double[] exact = censusTotal(list);
            double records = censusRecords(list);
            if (exact != null && records > 0) {
                // the exact total divided by the exact record count, rounded once; a floating-point
                // sum can be
                // bound/records away, and its division rounds once more
                Ratio out = new Ratio();
                out.estimate = exact[0] / records;
                out.exact = true;
                out.exactBound = exact[1] > 0 ? exact[1] / records + Math.ulp(out.estimate) : 0.0;
                for (StratumSummary s : list) {
                    out.populationUnits += s.populationUnits();
                    out.sampledRecords += s.sampledUnits() * s.meanRecords();
                }
                out.sampledUnits = out.populationUnits;
                return out;
            }
        }
        double total = 0;
        double records = 0;
        for (StratumSummary s : list) {
            total += s.populationUnits() * s.meanTotal();
            records += s.populationUnits() * s.meanRecords();
        }
        if (!(records > 0)) {
            throw new IllegalArgumentException(
                    "the delivered messages contain no records; a per-record mean "
                            + "is undefined");
        }
        double r = total / records;
        VarianceTerms t = new VarianceTerms();
        for (StratumSummary s : list) {
            if (s.populationUnits() == 0) {
                continue;
            }
            double residualVar =
                    s.varianceTotal() - 2 * r * s.covariance() + r * r * s.varianceRecords();
            StratumSummary.HigherMoments h = s.higherMoments();
            t.add(
                    s,
                    Math.max(0.0, residualVar),
                    h.residualThird(r),
                    h.residualFourth(r),
                    1.0 / (records * records));
        }
        Ratio out = new Ratio();
        out.estimate = r;
        out.variance = t.variance;
        out.df = t.df();
        out.normalTheoryDf = t.normalTheoryDf();
        out.thirdCumulant = t.thirdCumulant;
        out.covarianceWithVariance = t.covarianceWithVariance;
        out.exact = t.exact();
        out.unbounded = t.unbounded;
        out.sampledUnits = t.sampled;
        out.populationUnits = t.population;
        out.sampledRecords = t.sampledRecords;
        return out;
    }
}
