package io.netapprox.kafka.relay;

import io.netapprox.core.sampling.StratumAccumulator;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Reservoir sampling (Vitter's algorithm R) of one (window, stratum) cell, with the moments of the
 * cell's values for its plan ({@link SampleSizer}). After {@code count} records it holds a simple
 * random sample without replacement of {@code min(count, capacity)} of them; {@link #sample(int)}
 * then draws {@code n} of those at random, which is again a simple random sample of all {@code
 * count}.
 *
 * <p>The capacity may grow only while the reservoir holds every record offered (before its first
 * eviction), so the sample stays simple random: when it is full, the measured values may call for a
 * larger one ({@link SampleSizer#grownCapacity}); once it evicts, the capacity is fixed, and {@link
 * #admits} refuses a value that would need more candidates than it holds.
 */
final class CellReservoir {
    final long windowStart;
    final String stratum;
    private final SampleSizer plan;
    private final SplittableRandom random;
    private final ArrayList<SampledRecord> slots;
    private int capacity;

    /**
     * Every offered record's value, or null when the cell is not measured (nothing to measure, or a
     * record whose value was not a number): then it is planned from the assumed coefficient of
     * variation, which the initial capacity covers.
     */
    private StratumAccumulator values;

    /** The capacity no longer grows: the reservoir evicts. */
    private boolean fixed;

    /** Once fixed, the largest coefficient of variation the capacity can plan for. */
    private double cvLimit = Double.POSITIVE_INFINITY;

    private long count;
    private long bytes;

    CellReservoir(
            long windowStart,
            String stratum,
            SampleSizer plan,
            boolean measured,
            SplittableRandom random) {
        this.windowStart = windowStart;
        this.stratum = stratum;
        this.plan = plan;
        this.capacity = plan.capacity(stratum);
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1");
        }
        this.values = measured ? new StratumAccumulator() : null;
        this.random = random;
        this.slots = new ArrayList<>(Math.min(capacity, 64));
    }

    /**
     * Whether a record with this value (NaN: none) can join the cell with the cell's planned
     * candidates still within the reservoir; if not, its segment closes before the record.
     */
    boolean admits(double value) {
        if (!fixed || values == null || !Double.isFinite(value)) {
            return true; // still a census, or planned from the assumed cv (the capacity covers it)
        }
        return SampleSizer.cvWith(values, value) <= cvLimit;
    }

    /**
     * Offers the next record of the cell, with its value (NaN: none); returns the change of bytes
     * held. {@code copy} makes the record to keep and is called only if the reservoir keeps it
     * (records read from the fetched batch are copied out of it only then).
     */
    long offer(double value, Supplier<SampledRecord> copy) {
        count++;
        if (values != null) {
            if (Double.isFinite(value)) {
                values.add(value);
            } else {
                values = null;
            }
        }
        if (!fixed && slots.size() == capacity) {
            // full, and still every record: it may grow before it evicts (then it stays a census)
            if (values != null) {
                capacity = Math.max(capacity, plan.grownCapacity(stratum, values));
            }
            if (slots.size() == capacity) {
                fixed = true;
                if (values != null) {
                    cvLimit = plan.cvLimit(stratum, capacity);
                }
            }
        }
        if (slots.size() < capacity) {
            SampledRecord r = copy.get();
            slots.add(r);
            bytes += r.sizeBytes();
            return r.sizeBytes();
        }
        long j =
                random.nextLong(
                        count); // uniform in [0, count): the record is kept w.p. capacity/count
        if (j < capacity) {
            SampledRecord r = copy.get();
            SampledRecord old = slots.set((int) j, r);
            long delta = r.sizeBytes() - old.sizeBytes();
            bytes += delta;
            return delta;
        }
        return 0;
    }

    long count() {
        return count;
    }

    /** The numbers of all records offered, or null if the cell is not measured. */
    StratumAccumulator values() {
        return values;
    }

    /** Records held: {@code min(count, capacity)}. */
    int size() {
        return slots.size();
    }

    long bytes() {
        return bytes;
    }

    /**
     * {@code n} records drawn without replacement from the reservoir, in no particular order (the
     * segment sorts all its cells' records once).
     */
    List<SampledRecord> sample(int n) {
        if (n > slots.size()) {
            throw new IllegalArgumentException(
                    "sample of " + n + " from a reservoir of " + slots.size());
        }
        ArrayList<SampledRecord> s = new ArrayList<>(slots);
        for (int i = 0; i < n; i++) { // partial Fisher-Yates
            int j = i + random.nextInt(s.size() - i);
            SampledRecord t = s.get(i);
            s.set(i, s.get(j));
            s.set(j, t);
        }
        return s.subList(0, n);
    }
}
