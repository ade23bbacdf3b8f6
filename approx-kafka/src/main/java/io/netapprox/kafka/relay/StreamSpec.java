package io.netapprox.kafka.relay;

import java.util.Map;
import java.util.Objects;

/**
 * How a consumer wants its partitions sampled; sent to the relay with every stream it opens.
 *
 * @param emax default relative error bound of a stratum's per-window total, in (0, 1)
 * @param groupEmax per-stratum bounds, keyed by the stratum's name (partition number, key or header
 *     value as UTF-8)
 * @param confidence confidence of the bounds, in (0, 1)
 * @param assumedCv coefficient of variation the planner assumes for a cell whose values it cannot
 *     measure (see {@code value}), and until a cell's reservoir is full
 * @param headroom the relay sends up to {@code headroom} times a cell's planned sample, so ATP can
 *     give up lost records instead of retransmitting them (in [1, 4])
 * @param windowMs tumbling window length on record timestamps
 * @param graceMs a window of a caught-up partition closes this long after its end (wall clock)
 * @param stratification what a stratum is
 * @param readCommitted read only committed transactional records ({@code isolation.level})
 * @param seed seed of the sampling; the same seed and offsets give the same sample
 * @param value the number behind each record that the relay measures to plan a cell's sample from
 *     its variance ({@code approx.value})
 */
public record StreamSpec(
        double emax,
        Map<String, Double> groupEmax,
        double confidence,
        double assumedCv,
        double headroom,
        long windowMs,
        long graceMs,
        Stratification stratification,
        boolean readCommitted,
        long seed,
        ValueSource value) {

    public StreamSpec {
        groupEmax = Map.copyOf(groupEmax);
        Objects.requireNonNull(stratification, "stratification");
        Objects.requireNonNull(value, "value");
        checkBound("emax", emax);
        groupEmax.forEach((g, e) -> checkBound("emax of group " + g, e));
        if (!(confidence > 0 && confidence < 1)) {
            throw new IllegalArgumentException("confidence must be in (0, 1): " + confidence);
        }
        if (!(assumedCv > 0) || Double.isInfinite(assumedCv)) {
            throw new IllegalArgumentException(
                    "assumed coefficient of variation must be > 0: " + assumedCv);
        }
        if (!(headroom >= 1 && headroom <= 4)) {
            throw new IllegalArgumentException("headroom must be in [1, 4]: " + headroom);
        }
        if (windowMs < 1 || graceMs < 0) {
            throw new IllegalArgumentException("windowMs >= 1 and graceMs >= 0 required");
        }
    }

    private static void checkBound(String what, double e) {
        if (!(e > 0 && e < 1)) {
            throw new IllegalArgumentException(what + " must be in (0, 1): " + e);
        }
    }

    /** The bound of the stratum named {@code stratum}. */
    public double emaxOf(String stratum) {
        Double e = groupEmax.get(stratum);
        return e == null ? emax : e;
    }

    /** Start (ms) of the window a timestamp falls in. */
    public long windowStart(long timestampMs) {
        return Math.floorDiv(timestampMs, windowMs) * windowMs;
    }
}
