package io.netapprox.core.sampling;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Counts keys in the delivered messages of one stratum and estimates the stratum's top-k keys by
 * record count, with a confidence interval for each key's count and a flag telling whether the k-th
 * and (k+1)-th keys are statistically separated.
 *
 * <p><b>Estimator.</b> For key {@code x}, let {@code c_i(x)} be its number of records in sampled
 * message {@code i} (0 if absent). Its stratum count is estimated by {@code N_g * mean_i c_i(x)}
 * with variance {@code N_g^2 (1 - f) s_x^2 / n} ({@code s_x^2} the sample variance of {@code
 * c_i(x)} over all {@code n} sampled messages, zeros included), i.e. the {@link
 * StratifiedEstimator#sum} estimator applied to the key's indicator; intervals use Student's t with
 * {@code n - 1} degrees of freedom (Normal from 100). The lower bound is raised to the number of
 * records of the key actually seen, which the true count cannot be below.
 *
 * <p><b>Caveats.</b> Each key's interval holds at the stated confidence on its own, not
 * simultaneously for all keys; the Wald interval is poor for keys seen in only a handful of
 * messages (such keys are rarely top-k candidates). Keys that no sampled message contains are
 * invisible; therefore, unless the sample is the whole stratum, the result is only reported as
 * separated when at least k + 1 distinct keys were seen.
 *
 * <p>Memory is proportional to the number of distinct keys seen. Mergeable and serializable (when
 * the keys are); not thread-safe.
 *
 * @param <K> key type; must have consistent {@code equals}/{@code hashCode}
 */
public final class TopKAccumulator<K> implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Per key: sum of c_i and sum of c_i^2 over sampled messages. */
    private final HashMap<K, double[]> keys = new HashMap<>();

    private long messages;

    /** Creates an empty accumulator. */
    public TopKAccumulator() {}

    /**
     * Adds a delivered message that carries one record with the given key.
     *
     * @param key the record's key, not null
     * @return this accumulator
     */
    public TopKAccumulator<K> add(K key) {
        if (key == null) {
            throw new IllegalArgumentException("key must not be null");
        }
        messages++;
        bump(key, 1);
        return this;
    }

    /**
     * Adds a delivered message with its per-key record counts.
     *
     * @param recordsPerKey records per key in the message; keys not null, counts {@code >= 0}
     * @return this accumulator
     */
    public TopKAccumulator<K> addMessage(Map<K, ? extends Number> recordsPerKey) {
        if (recordsPerKey == null) {
            throw new IllegalArgumentException("recordsPerKey must not be null");
        }
        for (Map.Entry<K, ? extends Number> e : recordsPerKey.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new IllegalArgumentException(
                        "null key or count in message: " + recordsPerKey);
            }
            double c = e.getValue().doubleValue();
            if (!(c >= 0) || Double.isInfinite(c)) {
                throw new IllegalArgumentException(
                        "record count of key " + e.getKey() + " must be finite and >= 0, got " + c);
            }
        }
        messages++;
        for (Map.Entry<K, ? extends Number> e : recordsPerKey.entrySet()) {
            double c = e.getValue().doubleValue();
            if (c > 0) {
                bump(e.getKey(), c);
            }
        }
        return this;
    }

    private void bump(K key, double c) {
        double[] s = keys.computeIfAbsent(key, k -> new double[2]);
        s[0] += c;
        s[1] += c * c;
    }

    /**
     * @param other accumulator of the same stratum (unchanged)
     * @return this accumulator
     */
    public TopKAccumulator<K> merge(TopKAccumulator<K> other) {
        if (other == null) {
            throw new IllegalArgumentException("cannot merge a null accumulator");
        }
        messages += other.messages;
        for (Map.Entry<K, double[]> e : other.keys.entrySet()) {
            double[] s = keys.computeIfAbsent(e.getKey(), k -> new double[2]);
            s[0] += e.getValue()[0];
            s[1] += e.getValue()[1];
        }
        return this;
    }

    /**
     * @return number of messages added.
     */
    public long messageCount() {
        return messages;
    }

    /**
     * @return per key seen: {sum of its records per message, sum of their squares} (live view, do
     *     not modify).
     */
    Map<K, double[]> keySums() {
        return keys;
    }

    /**
     * @return number of distinct keys seen.
     */
    public int distinctKeys() {
        return keys.size();
    }

    /**
     * Estimates the top-k keys of the stratum by record count.
     *
     * @param k number of keys wanted, {@code >= 1}
     * @param confidence confidence level of each key's count interval, in (0, 1)
     * @param populationUnits {@code N_g}: messages in the stratum, {@code >= messageCount()}
     * @return the estimated top-k (fewer if fewer keys were seen), ordered by estimated count,
     *     descending
     */
    public TopKResult<K> topK(int k, double confidence, long populationUnits) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be >= 1, got " + k);
        }
        ApproxResult.checkConfidence(confidence);
        if (messages == 0) {
            throw new IllegalArgumentException("no delivered messages; top-k cannot be estimated");
        }
        if (populationUnits < messages) {
            throw new IllegalArgumentException(
                    "population size N_g="
                            + populationUnits
                            + " is smaller than the number of delivered messages "
                            + messages);
        }
        boolean complete = populationUnits == messages;
        double n = messages;
        double nPop = populationUnits;
        double crit =
                messages >= 2 ? CriticalValues.twoSided(confidence, messages - 1) : Double.NaN;
        List<Map.Entry<K, double[]>> entries = new ArrayList<>(keys.entrySet());
        entries.sort(
                Comparator.<Map.Entry<K, double[]>>comparingDouble(e -> -e.getValue()[0])
                        .thenComparing(e -> String.valueOf(e.getKey())));
        int take = Math.min(entries.size(), k + 1);
        List<TopKResult.KeyCount<K>> estimates = new ArrayList<>(take);
        for (int i = 0; i < take; i++) {
            Map.Entry<K, double[]> e = entries.get(i);
            double sum = e.getValue()[0];
            double sumSq = e.getValue()[1];
            double estimate = nPop * sum / n;
            ApproxResult r;
            if (complete) {
                r = ApproxResult.exact(sum, confidence, populationUnits);
            } else if (messages < 2) {
                r =
                        new ApproxResult(
                                estimate,
                                sum,
                                Double.POSITIVE_INFINITY,
                                confidence,
                                messages,
                                populationUnits);
            } else {
                double var = Math.max(0.0, (sumSq - sum * sum / n) / (n - 1));
                double half = crit * Math.sqrt(nPop * nPop * (1 - n / nPop) * var / n);
                double low = Math.max(sum, estimate - half);
                r =
                        new ApproxResult(
                                estimate,
                                Math.min(low, estimate),
                                estimate + half,
                                confidence,
                                messages,
                                populationUnits);
            }
            estimates.add(new TopKResult.KeyCount<>(e.getKey(), r));
        }
        List<TopKResult.KeyCount<K>> top = estimates.subList(0, Math.min(k, estimates.size()));
        TopKResult.KeyCount<K> runnerUp = estimates.size() > k ? estimates.get(k) : null;
        boolean separated;
        if (complete) {
            separated = true;
        } else if (runnerUp == null) {
            separated = false; // unseen keys could belong to the top k
        } else {
            separated = top.get(top.size() - 1).count().low() > runnerUp.count().high();
        }
        return new TopKResult<>(
                k, List.copyOf(top), runnerUp, separated, keys.size(), messages, populationUnits);
    }
}
