package io.netapprox.kafka.relay;

import io.netapprox.core.sampling.MsrPlanner;
import io.netapprox.core.sampling.StratumAccumulator;
import java.util.HashMap;
import java.util.Map;

/**
 * Sample sizes per cell from the stream's error bounds, by approx-core's {@link MsrPlanner}
 * (Student t critical values, finite population correction): a sizer the relay asks per cell as
 * records arrive, not a plan fixed per query.
 *
 * <p><b>Measured.</b> The relay sees every record of a cell before it samples, so a cell whose
 * records all carry a number ({@link StreamSpec#value()}) is planned from the mean and standard
 * deviation of those numbers: {@code n(C) = planner.plan(C, mean, sd).sampleSize()} for a cell of
 * {@code C} records. Otherwise (a value that is not a number, or {@code approx.value=none}) the
 * cell is planned from the assumed coefficient of variation, {@code planner.heuristic(C)}.
 *
 * <p><b>Reservoirs.</b> A reservoir holds every record of its cell until it is full. It starts with
 * {@link #capacity(String)} slots, the candidates of an unbounded cell at the assumed coefficient
 * of variation; when full it may grow, once per fill and before it evicts any record, to {@link
 * #grownCapacity} (the candidates of an unbounded cell at the values measured so far, their
 * standard deviation raised by {@value #GROWTH_MARGIN}x); then it samples (algorithm R). A record
 * whose value would raise the cell's coefficient of variation above {@link #cvLimit} (the largest
 * one the reservoir can still plan for, at any cell size) closes the segment before it, so every
 * cell's planned sample is drawn from records its reservoir holds.
 *
 * <p>The relay sends up to {@link #held(int, long) headroom x n(C)} candidates so that ATP can give
 * lost ones up. A plan larger than {@link #MAX_CAPACITY} (an e_max no sample meets) takes every
 * record of the cell; memory is bounded by the segment's bytes.
 */
public final class SampleSizer {
    /** Population size standing for "unbounded" when sizing reservoirs. */
    private static final long UNBOUNDED = 1L << 40;

    /**
     * The largest reservoir (and sample) of a cell: a plan above it - an e_max so small that no
     * sample of any size meets it, e.g. below ~6e-5 at the defaults - takes every record of the
     * cell. What a cell holds is bounded by the segment's bytes ({@code --max-segment-bytes}), not
     * by this.
     */
    static final int MAX_CAPACITY = Integer.MAX_VALUE - 8;

    /**
     * A grown reservoir is sized for the measured standard deviation times this, so that the values
     * still to come may spread that much further before the segment must close.
     */
    static final double GROWTH_MARGIN = 1.25;

    /** Grown capacities are rounded up to powers of 2^(1/8), so few limits are computed. */
    private static final int STEPS_PER_DOUBLING = 8;

    private static final int MAX_CACHED_LIMITS = 4096;

    private final StreamSpec spec;
    private final Map<Double, MsrPlanner> planners = new HashMap<>();
    private final Map<Double, Integer> capacities = new HashMap<>();
    private final Map<Limit, Double> limits = new HashMap<>();

    private record Limit(double emax, int capacity) {}

    public SampleSizer(StreamSpec spec) {
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

    /** Records a reservoir of this stratum holds at first: the candidates of an unbounded cell. */
    public int capacity(String stratum) {
        double e = spec.emaxOf(stratum);
        return capacities.computeIfAbsent(
                e,
                x ->
                        held(
                                atMostMaxCapacity(planner(x).heuristic(UNBOUNDED).sampleSize()),
                                UNBOUNDED));
    }

    /**
     * The capacity a full reservoir that still holds every record of its cell grows to: the
     * candidates of an unbounded cell of these values (standard deviation x {@value
     * #GROWTH_MARGIN}), rounded up; at least {@link #capacity(String)}.
     */
    int grownCapacity(String stratum, StratumAccumulator values) {
        double sd = Math.sqrt(values.varianceTotal()) * GROWTH_MARGIN;
        if (!Double.isFinite(sd) || !Double.isFinite(values.meanTotal())) {
            return MAX_CAPACITY; // values beyond double's range: keep every record
        }
        long n = planner(spec.emaxOf(stratum)).plan(UNBOUNDED, values.meanTotal(), sd).sampleSize();
        int grown = held(atMostMaxCapacity(roundUp(n)), UNBOUNDED);
        return Math.max(capacity(stratum), grown);
    }

    /**
     * The largest coefficient of variation of a cell's values for which a reservoir of {@code
     * capacity} records holds the candidates of any cell size (the planner's sample of an unbounded
     * cell fits).
     */
    double cvLimit(String stratum, int capacity) {
        double e = spec.emaxOf(stratum);
        if (limits.size() >= MAX_CACHED_LIMITS) {
            limits.clear();
        }
        return limits.computeIfAbsent(new Limit(e, capacity), k -> solveCvLimit(k));
    }

    private double solveCvLimit(Limit k) {
        MsrPlanner p = planner(k.emax());
        long target = targetFor(k.capacity());
        if (p.plan(UNBOUNDED, 1.0, 0.0).sampleSize() > target) {
            return 0; // not even a constant cell fits (capacity below the minimum sample)
        }
        double lo = 0;
        double hi = 1;
        while (p.plan(UNBOUNDED, 1.0, hi).sampleSize() <= target) {
            lo = hi;
            hi *= 2;
            if (hi > 1e12) {
                return Double.POSITIVE_INFINITY;
            }
        }
        for (int i = 0; i < 60 && hi - lo > lo * 1e-9; i++) {
            double mid = (lo + hi) / 2;
            if (p.plan(UNBOUNDED, 1.0, mid).sampleSize() <= target) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The largest target whose candidates fit in {@code capacity} records. */
    private long targetFor(int capacity) {
        long t = (long) Math.floor(capacity / spec.headroom());
        while (t > 0 && held(atMostMaxCapacity(t), UNBOUNDED) > capacity) {
            t--;
        }
        return t;
    }

    /**
     * The coefficient of variation ({@code sd / |mean|}, 0 without spread) of {@code values} with
     * {@code x} added (one step of Welford's update; the accumulator is not changed).
     */
    static double cvWith(StratumAccumulator values, double x) {
        long n = values.count();
        if (n == 0) {
            return 0;
        }
        double mean = values.meanTotal();
        double m2 = values.varianceTotal() * (n - 1);
        double d = x - mean;
        double mean2 = mean + d / (n + 1);
        double var = (m2 + d * (x - mean2)) / n;
        if (!(var > 0)) {
            return 0;
        }
        return Math.sqrt(var) / Math.abs(mean2);
    }

    /** Records a cell of {@code count} records of this stratum must deliver, from approx.cv. */
    public int sampleSize(String stratum, long count) {
        return sampleSize(stratum, count, null);
    }

    /**
     * Records a cell of {@code count} records must deliver: n(C) from {@code values} when they are
     * the numbers of all of its records, else from the assumed coefficient of variation.
     */
    public int sampleSize(String stratum, long count, StratumAccumulator values) {
        if (count <= 1) {
            return (int) count;
        }
        MsrPlanner p = planner(spec.emaxOf(stratum));
        long n;
        if (values != null && values.count() == count) {
            double sd = Math.sqrt(values.varianceTotal());
            n =
                    Double.isFinite(sd) && Double.isFinite(values.meanTotal())
                            ? p.plan(count, values.meanTotal(), sd).sampleSize()
                            : count; // values beyond double's range: the whole cell
        } else {
            n = p.heuristic(count).sampleSize();
        }
        return atMostMaxCapacity(Math.min(n, count));
    }

    /** Candidates to send for a target of {@code target} in a cell of {@code count} records. */
    public int held(int target, long count) {
        long h = (long) Math.ceil(target * spec.headroom() - 1e-9);
        return atMostMaxCapacity(Math.min(h, count));
    }

    private static int atMostMaxCapacity(long n) {
        return (int) Math.min(n, MAX_CAPACITY);
    }

    /** {@code n} rounded up to the next power of 2^(1/{@value #STEPS_PER_DOUBLING}). */
    private static long roundUp(long n) {
        if (n <= 64) {
            return n;
        }
        double k = Math.ceil(STEPS_PER_DOUBLING * Math.log(n) / Math.log(2) - 1e-9);
        long q = (long) Math.ceil(Math.pow(2, k / STEPS_PER_DOUBLING));
        return Math.max(q, n);
    }
}
