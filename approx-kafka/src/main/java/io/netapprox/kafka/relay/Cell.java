package io.netapprox.kafka.relay;

/**
 * One (window, stratum) cell of a segment: how many records of it the segment's offset range holds
 * ({@code count}, exact), how many the sample sizer asks for ({@code target}) and how many of them
 * the segment carries ({@code sampled}, a simple random sample without replacement of those {@code
 * count}). The relay sends {@code sampled >= target} candidates over ATP, which delivers at least
 * {@code target} of them; what the consumer returns is what arrived, so there {@code sampled} is
 * the delivered count.
 *
 * @param windowStart window start, ms
 * @param stratum stratum name (see {@link Stratifier})
 * @param count exact number of records of this cell in the segment
 * @param target records the sample sizer asks for ({@link SampleSizer#sampleSize})
 * @param sampled records of the cell the segment carries
 */
public record Cell(long windowStart, String stratum, long count, int target, int sampled) {
    public Cell {
        if (count < 0 || target < 0 || sampled < 0 || target > count || sampled > count) {
            throw new IllegalArgumentException(
                    "cell counts out of range: count "
                            + count
                            + ", target "
                            + target
                            + ", sampled "
                            + sampled);
        }
    }

    /** Horvitz-Thompson weight of a sampled record: count / sampled. */
    public double weight() {
        return sampled == 0 ? 0 : (double) count / sampled;
    }
}
