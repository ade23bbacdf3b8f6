package io.netapprox.core.sampling;

import java.util.List;

/**
 * Estimated top-k keys of one stratum.
 *
 * @param k requested number of keys
 * @param top up to {@code k} keys ordered by estimated count, descending
 * @param runnerUp the (k+1)-th key by estimated count, or {@code null} if at most k keys were seen
 * @param separated whether membership is statistically clear: the sample is complete, or the k-th
 *     key's lower bound exceeds the (k+1)-th key's upper bound. When false, the boundary of the
 *     top-k set is uncertain at this confidence
 * @param distinctKeysSeen distinct keys in the delivered messages
 * @param sampleSize delivered messages
 * @param populationSize messages in the stratum
 * @param <K> key type
 */
public record TopKResult<K>(
        int k,
        List<KeyCount<K>> top,
        KeyCount<K> runnerUp,
        boolean separated,
        long distinctKeysSeen,
        long sampleSize,
        long populationSize) {

    /** Copies {@code top} and validates. */
    public TopKResult {
        if (k < 1) {
            throw new IllegalArgumentException("k must be >= 1, got " + k);
        }
        if (top == null || top.size() > k) {
            throw new IllegalArgumentException("top must hold at most k=" + k + " entries");
        }
        top = List.copyOf(top);
    }

    /**
     * @return the keys of {@link #top()}, in order.
     */
    public List<K> keys() {
        return top.stream().map(KeyCount::key).toList();
    }

    /**
     * One key's estimated count.
     *
     * @param key the key
     * @param count estimated number of records with this key in the stratum, with its interval
     * @param <K> key type
     */
    public record KeyCount<K>(K key, ApproxResult count) {
        /** Validates. */
        public KeyCount {
            if (key == null || count == null) {
                throw new IllegalArgumentException("key and count must not be null");
            }
        }
    }
}
