package io.netapprox.core.sampling;

import io.netapprox.core.job.Target;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.commons.math3.distribution.ChiSquaredDistribution;

/**
 * Refines each group's MSR as delivered messages arrive (the paper's "adjust MSR as the error
 * estimate evolves", section 6).
 *
 * <p>Per group it keeps a running Welford mean and variance of the per-message totals of the
 * delivered messages ({@link StratumAccumulator}). {@link #plan(Object)} then returns:
 *
 * <ol>
 *   <li>fewer than {@code minObservations} delivered: the prior from earlier windows if one was set
 *       ({@link #setPrior}), otherwise {@link MsrPlanner#heuristic(long)};
 *   <li>otherwise {@link MsrPlanner#plan(long, double, double)} with the running mean and standard
 *       deviation; optionally the standard deviation is replaced by its one-sided upper confidence
 *       bound {@code s * sqrt((n-1) / chi2_{1-gamma, n-1})} ({@link
 *       Builder#varianceUpperConfidence}), which guards against the typical underestimate of a
 *       skewed distribution's variance from few messages;
 *   <li>the result is never below the fraction already delivered, {@code delivered / N_g} (MSR
 *       cannot undo a delivery, and a smaller value would only mislead the transport's accounting);
 *   <li>with {@link Builder#monotone(boolean) monotone} mode, never below the MSR returned
 *       previously for the group, so the transport only ever sees increases.
 * </ol>
 *
 * As the number of delivered messages grows, the running estimates converge to the group's
 * statistics and the plan converges to the one computed from the exact values.
 *
 * <p>Mutable and <em>not</em> thread-safe: use it from the single thread that consumes delivery
 * events (e.g. the receiver's event loop), or synchronise externally.
 *
 * @param <G> group identifier type (e.g. an Integer GroupID, or a String key)
 */
public final class OnlineMsrUpdater<G> {

    private final MsrPlanner planner;
    private final boolean monotone;
    private final long minObservations;
    private final double varianceUpperConfidence;
    private final Map<G, GroupState> groups = new LinkedHashMap<>();

    private static final class GroupState {
        long populationSize;
        final StratumAccumulator acc = new StratumAccumulator();
        double priorMean = Double.NaN;
        double priorSd = Double.NaN;
        double lastMsr = 0.0;
    }

    private OnlineMsrUpdater(Builder b) {
        this.planner = b.planner;
        this.monotone = b.monotone;
        this.minObservations = b.minObservations;
        this.varianceUpperConfidence = b.varianceUpperConfidence;
    }

    /**
     * @param planner translates statistics to MSRs; not null
     * @return a builder (defaults: not monotone, 30 observations before trusting the data, no
     *     variance inflation)
     */
    public static Builder builder(MsrPlanner planner) {
        return new Builder(planner);
    }

    /**
     * Declares a group (or re-declares its size, e.g. when a streaming window's size is finalised).
     *
     * @param group group id, not null
     * @param populationSize {@code N_g}, {@code >= 0} and not below the messages already delivered
     * @return this updater
     */
    public OnlineMsrUpdater<G> registerGroup(G group, long populationSize) {
        requireGroup(group);
        if (populationSize < 0) {
            throw new IllegalArgumentException(
                    "population size of group " + group + " must be >= 0, got " + populationSize);
        }
        GroupState s = groups.computeIfAbsent(group, g -> new GroupState());
        if (populationSize < s.acc.count()) {
            throw new IllegalArgumentException(
                    "population size "
                            + populationSize
                            + " of group "
                            + group
                            + " is below the "
                            + s.acc.count()
                            + " messages already delivered");
        }
        s.populationSize = populationSize;
        return this;
    }

    /**
     * Sets statistics from earlier windows, used until enough messages of this window have arrived.
     *
     * @param group a registered group
     * @param mean per-message mean, finite
     * @param standardDeviation per-message standard deviation, finite and {@code >= 0}
     * @return this updater
     */
    public OnlineMsrUpdater<G> setPrior(G group, double mean, double standardDeviation) {
        GroupState s = state(group);
        if (Double.isNaN(mean) || Double.isInfinite(mean)) {
            throw new IllegalArgumentException(
                    "prior mean of group " + group + " must be finite, got " + mean);
        }
        if (!(standardDeviation >= 0) || Double.isInfinite(standardDeviation)) {
            throw new IllegalArgumentException(
                    "prior standard deviation of group "
                            + group
                            + " must be finite and >= 0, got "
                            + standardDeviation);
        }
        s.priorMean = mean;
        s.priorSd = standardDeviation;
        return this;
    }

    /**
     * Records one delivered message of a group.
     *
     * @param group a registered group
     * @param messageTotal the message's per-message total (finite)
     * @return this updater
     */
    public OnlineMsrUpdater<G> observe(G group, double messageTotal) {
        GroupState s = state(group);
        if (s.acc.count() >= s.populationSize) {
            throw new IllegalArgumentException(
                    "group "
                            + group
                            + " already received all of its "
                            + s.populationSize
                            + " messages");
        }
        s.acc.add(messageTotal);
        return this;
    }

    /**
     * @return number of messages delivered so far for the group.
     */
    public long delivered(G group) {
        return state(group).acc.count();
    }

    /**
     * The current plan for a group (and, in monotone mode, remembers its MSR as the new floor).
     *
     * @param group a registered group
     * @return the plan
     */
    public MsrPlan plan(G group) {
        GroupState s = state(group);
        long nPop = s.populationSize;
        long delivered = s.acc.count();
        MsrPlan base;
        if (delivered >= minObservations && delivered >= 2) {
            double sd = Math.sqrt(s.acc.varianceTotal());
            if (varianceUpperConfidence > 0 && sd > 0) {
                double df = delivered - 1;
                double chi =
                        new ChiSquaredDistribution(null, df)
                                .inverseCumulativeProbability(1 - varianceUpperConfidence);
                sd *= Math.sqrt(df / chi);
            }
            base = planner.plan(nPop, s.acc.meanTotal(), sd);
        } else if (!Double.isNaN(s.priorMean)) {
            base = planner.plan(nPop, s.priorMean, s.priorSd);
        } else {
            base = planner.heuristic(nPop);
        }
        MsrPlan result = base;
        if (delivered > base.sampleSize()) {
            result =
                    new MsrPlan(
                            MsrPlanner.rateFor(delivered, nPop),
                            delivered,
                            nPop,
                            base.criticalValue(),
                            MsrPlan.Basis.FLOOR);
        }
        if (monotone && s.lastMsr > result.msr()) {
            long n = Target.of(s.lastMsr, nPop);
            result = new MsrPlan(s.lastMsr, n, nPop, base.criticalValue(), MsrPlan.Basis.FLOOR);
        }
        s.lastMsr = result.msr();
        return result;
    }

    /**
     * @return the current MSR of every registered group, in registration order (see {@link #plan}).
     */
    public Map<G, Double> msrs() {
        Map<G, Double> out = new LinkedHashMap<>();
        for (G g : groups.keySet()) {
            out.put(g, plan(g).msr());
        }
        return out;
    }

    /**
     * @return an immutable summary of the delivered messages of a group.
     */
    public StratumSummary summary(G group) {
        GroupState s = state(group);
        return s.acc.summarize(s.populationSize);
    }

    private GroupState state(G group) {
        requireGroup(group);
        GroupState s = groups.get(group);
        if (s == null) {
            throw new IllegalArgumentException(
                    "unknown group " + group + "; call registerGroup first");
        }
        return s;
    }

    private static void requireGroup(Object group) {
        if (group == null) {
            throw new IllegalArgumentException("group id must not be null");
        }
    }

    /** Builder for {@link OnlineMsrUpdater}. */
    public static final class Builder {
        private final MsrPlanner planner;
        private boolean monotone;
        private long minObservations = 30;
        private double varianceUpperConfidence;

        private Builder(MsrPlanner planner) {
            if (planner == null) {
                throw new IllegalArgumentException("planner must not be null");
            }
            this.planner = planner;
        }

        /**
         * @param monotone if true, a group's MSR never decreases between calls to {@link #plan}
         */
        public Builder monotone(boolean monotone) {
            this.monotone = monotone;
            return this;
        }

        /**
         * @param n delivered messages needed before the running statistics replace prior/heuristic,
         *     {@code >= 2}
         */
        public Builder minObservations(long n) {
            if (n < 2) {
                throw new IllegalArgumentException("minObservations must be >= 2, got " + n);
            }
            this.minObservations = n;
            return this;
        }

        /**
         * @param gamma if in (0, 1): plan with the one-sided {@code gamma} upper confidence bound
         *     of the standard deviation instead of its point estimate; 0 disables (default)
         */
        public Builder varianceUpperConfidence(double gamma) {
            if (!(gamma >= 0 && gamma < 1)) {
                throw new IllegalArgumentException(
                        "varianceUpperConfidence must be in [0, 1), got " + gamma);
            }
            this.varianceUpperConfidence = gamma;
            return this;
        }

        /**
         * @return the updater
         */
        public <G> OnlineMsrUpdater<G> build() {
            return new OnlineMsrUpdater<>(this);
        }
    }
}
