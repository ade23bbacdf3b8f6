package io.netapprox.kafka.relay;

import io.netapprox.core.sampling.MsrPlanner;
import java.util.HashMap;
import java.util.Map;

/**
 * Sample sizes per stratum from the stream's error bounds, by approx-core's {@link MsrPlanner}
 * (heuristic plan: the assumed coefficient of variation of the values, Student t critical values,
 * finite population correction). A cell of {@code C} records needs {@code n(C) =
 * planner.heuristic(C).sampleSize()} of them (the ATP group's target); the relay sends up to {@link
 * #held(int, long) headroom x n(C)} candidates so that ATP can give lost ones up. {@link
 * #capacity(String)} is what a reservoir must hold before {@code C} is known: the candidates for an
 * unbounded cell.
 */
public final class SamplingPlan {
    /** Population size standing for "unbounded" when sizing reservoirs. */
    private static final long UNBOUNDED = 1L << 40;

    private final StreamSpec spec;
    private final Map<Double, MsrPlanner> planners = new HashMap<>();
    private final Map<Double, Integer> capacities = new HashMap<>();

    public SamplingPlan(StreamSpec spec) {
        this.spec = spec;
    }

    private MsrPlanner planner(double emax) {
        return planners.computeIfAbsent(
                emax,
                e ->
                        MsrPlanner.builder(e)
                                .confidence(spec.confidence())
                                .assumedCoefficientOfVariation(spec.assumedCv())
                                .build());
    }

    /** Records a reservoir of this stratum holds at most (the candidates of an unbounded cell). */
    public int capacity(String stratum) {
        double e = spec.emaxOf(stratum);
        return capacities.computeIfAbsent(
                e,
                x ->
                        held(
                                Math.toIntExact(planner(x).heuristic(UNBOUNDED).sampleSize()),
                                UNBOUNDED));
    }

    /** Records a cell of {@code count} records of this stratum must deliver: n(C). */
    public int sampleSize(String stratum, long count) {
        if (count <= 1) {
            return (int) count;
        }
        long n = planner(spec.emaxOf(stratum)).heuristic(count).sampleSize();
        return (int) Math.min(n, count);
    }

    /** Candidates to send for a target of {@code target} in a cell of {@code count} records. */
    public int held(int target, long count) {
        long h = (long) Math.ceil(target * spec.headroom() - 1e-9);
        return (int) Math.min(Math.min(h, count), Integer.MAX_VALUE - 8);
    }
}
