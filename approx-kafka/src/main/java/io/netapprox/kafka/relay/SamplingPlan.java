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

    /**
     * The largest reservoir (and sample) of a cell: a plan above it - an e_max so small that no
     * sample of any size meets it, e.g. below ~6e-5 at the defaults - takes every record of the
     * cell. What a cell holds is bounded by the segment's bytes ({@code --max-segment-bytes}), not
     * by this.
     */
    static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

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
                                atMostMaxCapacity(planner(x).heuristic(UNBOUNDED).sampleSize()),
                                UNBOUNDED));
    }

    /** Records a cell of {@code count} records of this stratum must deliver: n(C). */
    public int sampleSize(String stratum, long count) {
        if (count <= 1) {
            return (int) count;
        }
        long n = planner(spec.emaxOf(stratum)).heuristic(count).sampleSize();
        return atMostMaxCapacity(Math.min(n, count));
    }

    private static int atMostMaxCapacity(long n) {
        return (int) Math.min(n, MAX_CAPACITY);
    }

    /** Candidates to send for a target of {@code target} in a cell of {@code count} records. */
    public int held(int target, long count) {
        long h = (long) Math.ceil(target * spec.headroom() - 1e-9);
        return atMostMaxCapacity(Math.min(h, count));
    }
}
