package io.netapprox.kafka.relay;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * Reservoir sampling (Vitter's algorithm R) of one (window, stratum) cell: after {@code count}
 * records it holds a simple random sample without replacement of {@code min(count, capacity)} of
 * them. {@link #sample(int)} then draws {@code n} of those at random, which is again a simple
 * random sample of all {@code count}.
 */
final class CellReservoir {
    final long windowStart;
    final String stratum;
    private final int capacity;
    private final SplittableRandom random;
    private final ArrayList<SampledRecord> slots;
    private long count;
    private long bytes;

    CellReservoir(long windowStart, String stratum, int capacity, SplittableRandom random) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity must be >= 1");
        }
        this.windowStart = windowStart;
        this.stratum = stratum;
        this.capacity = capacity;
        this.random = random;
        this.slots = new ArrayList<>(Math.min(capacity, 64));
    }

    /**
     * Offers the next record of the cell; returns the change of bytes held. {@code copy} makes the
     * record to keep and is called only if the reservoir keeps it (records read from the fetched
     * batch are copied out of it only then).
     */
    long offer(Supplier<SampledRecord> copy) {
        count++;
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
