package io.netapprox.core.sampling;

import java.util.Collection;
import java.util.List;

/**
 * Stratified Horvitz-Thompson estimators with confidence intervals, per stratum or over all strata.
 *
 * <p>Each stratum {@code g} has {@code N_g} messages of which {@code n_g} were delivered, treated as a simple
 * random sample without replacement; each delivered message has inclusion weight {@code N_g / n_g} and
 * {@code f_g = n_g / N_g} is the sampling fraction. With per-message value totals {@code y_i} and record
 * counts {@code m_i} (sample means {@code ybar_g, mbar_g}, variances {@code s_y^2, s_m^2}, covariance
 * {@code s_ym}):
 * <ul>
 *   <li>{@link #sum}: {@code Y = sum_g N_g ybar_g}, {@code Var = sum_g N_g^2 (1 - f_g) s_y^2 / n_g};</li>
 *   <li>{@link #count} (records): the same with {@code m_i} in place of {@code y_i};</li>
 *   <li>{@link #mean} (per record): the combined ratio estimator {@code R = Y / M} with linearised variance
 *       {@code Var = M^-2 sum_g N_g^2 (1 - f_g) s_d^2 / n_g}, {@code s_d^2 = s_y^2 - 2 R s_ym + R^2 s_m^2};
 *       with one record per message this is the ordinary stratified mean;</li>
 *   <li>{@link #proportion}: the mean of a 0/1 indicator, with a Wilson score interval at the effective
 *       sample size {@code R(1-R)/Var} (so it stays inside [0, 1] and behaves near 0 and 1).</li>
 * </ul>
 * Intervals are {@code estimate +- c * sqrt(Var)} with {@code c} from {@link CriticalValues#twoSided}: Student's
 * t with {@code n_g - 1} degrees of freedom for one stratum, and the Welch-Satterthwaite effective degrees of
 * freedom {@code (sum a_g)^2 / sum a_g^2/(n_g - 1)} over strata, Normal when that is at least 100.
 *
 * <p>Degenerate cases: a stratum whose messages were all delivered contributes no variance (so MSR = 1
 * gives a zero-width interval equal to the truth); a stratum with {@code N_g > n_g} but fewer than two
 * delivered messages has unknown variance and makes the interval infinite; a stratum with {@code N_g > 0}
 * and no delivered message cannot be estimated and raises {@link IllegalArgumentException}; strata with
 * {@code N_g = 0} are ignored.
 */
public final class StratifiedEstimator {

    private StratifiedEstimator() {
    }

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
     * Proportion of records with a property in one stratum; the accumulated per-message totals must be
     * counts of such records (0/1 per record).
     */
    public static ApproxResult proportion(StratumSummary stratum, double confidence) {
        return proportion(List.of(stratum), confidence);
    }

    /** Proportion of records with a property over all given strata; see {@link #proportion(StratumSummary, double)}. */
    public static ApproxResult proportion(Collection<StratumSummary> strata, double confidence) {
        for (StratumSummary s : checked(strata)) {
            if (s.meanTotal() < 0 || s.meanTotal() > s.meanRecords() * (1 + 1e-12)) {
                throw new IllegalArgumentException("proportion needs per-message totals that count matching "
                        + "records (0 <= total <= records); got mean total " + s.meanTotal()
                        + " with mean records " + s.meanRecords());
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
            // No observed variability (all 0 or all 1): effective size from sampled records and the FPC.
            double f = (double) r.sampledUnits / r.populationUnits;
            nEff = r.sampledRecords / Math.max(1e-12, 1 - f);
        }
        double c = CriticalValues.twoSided(confidence, r.df);
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
        List<StratumSummary> list = List.copyOf(strata); // rejects null elements with NPE; check explicitly
        long population = 0;
        for (StratumSummary s : list) {
            if (s.populationUnits() > 0 && s.sampledUnits() == 0) {
                throw new IllegalArgumentException("a stratum with N_g=" + s.populationUnits()
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
        boolean unbounded;
        long sampled;
        long population;
        double sampledRecords;

        void add(StratumSummary s, double unitVariance, double scale) {
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
            double a = scale * nPop * nPop * (1.0 - n / nPop) * unitVariance / n;
            variance += a;
            satterthwaiteDenominator += a * a / (n - 1);
        }

        boolean exact() {
            return sampled == population;
        }

        double df() {
            if (satterthwaiteDenominator <= 0) {
                return Double.POSITIVE_INFINITY;
            }
            return variance * variance / satterthwaiteDenominator;
        }
    }

    private static ApproxResult linear(Collection<StratumSummary> strata, double confidence, boolean records) {
        ApproxResult.checkConfidence(confidence);
        VarianceTerms t = new VarianceTerms();
        double estimate = 0;
        for (StratumSummary s : checked(strata)) {
            if (s.populationUnits() == 0) {
                continue;
            }
            double mean = records ? s.meanRecords() : s.meanTotal();
            double var = records ? s.varianceRecords() : s.varianceTotal();
            estimate += s.populationUnits() * mean;
            t.add(s, var, 1.0);
        }
        return interval(estimate, t, confidence);
    }

    private static ApproxResult interval(double estimate, VarianceTerms t, double confidence) {
        if (t.exact()) {
            return ApproxResult.exact(estimate, confidence, t.population);
        }
        if (t.unbounded) {
            return new ApproxResult(estimate, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, confidence,
                    t.sampled, t.population);
        }
        if (t.variance == 0) {
            return new ApproxResult(estimate, estimate, estimate, confidence, t.sampled, t.population);
        }
        double half = CriticalValues.twoSided(confidence, t.df()) * Math.sqrt(t.variance);
        return new ApproxResult(estimate, estimate - half, estimate + half, confidence, t.sampled, t.population);
    }

    private static final class Ratio {
        double estimate;
        double variance;
        double df;
        boolean exact;
        boolean unbounded;
        long sampledUnits;
        long populationUnits;
        double sampledRecords;

        ApproxResult toResult(double confidence) {
            if (exact) {
                return ApproxResult.exact(estimate, confidence, populationUnits);
            }
            if (unbounded) {
                return new ApproxResult(estimate, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY, confidence,
                        sampledUnits, populationUnits);
            }
            double half = variance == 0 ? 0 : CriticalValues.twoSided(confidence, df) * Math.sqrt(variance);
            return new ApproxResult(estimate, estimate - half, estimate + half, confidence, sampledUnits,
                    populationUnits);
        }
    }

    private static Ratio ratio(Collection<StratumSummary> strata, double confidence) {
        ApproxResult.checkConfidence(confidence);
        List<StratumSummary> list = checked(strata);
        double total = 0;
        double records = 0;
        for (StratumSummary s : list) {
            total += s.populationUnits() * s.meanTotal();
            records += s.populationUnits() * s.meanRecords();
        }
        if (!(records > 0)) {
            throw new IllegalArgumentException("the delivered messages contain no records; a per-record mean "
                    + "is undefined");
        }
        double r = total / records;
        VarianceTerms t = new VarianceTerms();
        for (StratumSummary s : list) {
            if (s.populationUnits() == 0) {
                continue;
            }
            double residualVar = s.varianceTotal() - 2 * r * s.covariance() + r * r * s.varianceRecords();
            t.add(s, Math.max(0.0, residualVar), 1.0 / (records * records));
        }
        Ratio out = new Ratio();
        out.estimate = r;
        out.variance = t.variance;
        out.df = t.df();
        out.exact = t.exact();
        out.unbounded = t.unbounded;
        out.sampledUnits = t.sampled;
        out.populationUnits = t.population;
        out.sampledRecords = t.sampledRecords;
        return out;
    }
}
