package io.netapprox.kafka.relay;

/**
 * One (window, stratum) cell of a segment: how many records of it the segment's offset range holds
 * ({@code count}, exact) and how many of them were sampled ({@code sampled}, a simple random sample
 * without replacement of those {@code count}).
 *
 * @param windowStart window start, ms
 * @param stratum stratum name (see {@link Stratifier})
 * @param count exact number of records of this cell in the segment
 * @param sampled number of records sampled
 */
public record Cell(long windowStart, String stratum, long count, int sampled) {
    public Cell {
        if (count < 0 || sampled < 0 || sampled > count) {
            throw new IllegalArgumentException(
                    "cell counts out of range: count " + count + ", sampled " + sampled);
        }
    }

    /** Horvitz-Thompson weight of a sampled record: count / sampled. */
    public double weight() {
        return sampled == 0 ? 0 : (double) count / sampled;
    }
}
