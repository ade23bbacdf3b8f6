package io.netapprox.core.sampling;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The top-k keys of a group whose shares (strata, e.g. Spark map outputs) were sampled at different
 * fractions: each key's record count is the stratified Horvitz-Thompson total {@code sum_m N_m
 * cbar_m(key)} ({@code cbar_m} its mean records per sampled message of share m), with the interval
 * of {@link StratifiedEstimator#sum} (variance {@code sum_m N_m^2 (1 - f_m) s_m^2 / n_m},
 * Welch-Satterthwaite degrees of freedom), the lower bound raised to the records of the key
 * actually seen. Pooling the shares' messages as one sample would weight a share delivered whole
 * like one delivered at its minimum.
 *
 * <p>Ranking, ties and {@link TopKResult#separated()} as in {@link TopKAccumulator}. Not
 * thread-safe.
 *
 * @param <K> key type
 */
public final class StratifiedTopK<K> {

    private final List<TopKAccumulator<K>> samples = new ArrayList<>();
    private final List<Long> populations = new ArrayList<>();

    /** Creates an estimator with no share yet. */
    public StratifiedTopK() {}

    /**
     * @param sample the share's delivered messages
     * @param populationUnits messages the share has, {@code >= sample.messageCount()}; a non-empty
     *     share needs at least one delivered message
     * @return this
     */
    public StratifiedTopK<K> addShare(TopKAccumulator<K> sample, long populationUnits) {
        if (sample == null) {
            throw new IllegalArgumentException("sample must not be null");
        }
        if (populationUnits < sample.messageCount()) {
            throw new IllegalArgumentException(
                    "share population "
                            + populationUnits
                            + " is smaller than its "
                            + sample.messageCount()
                            + " delivered messages");
        }
        if (populationUnits > 0 && sample.messageCount() == 0) {
            throw new IllegalArgumentException(
                    "a share of "
                            + populationUnits
                            + " messages has no delivered message;"
                            + " top-k cannot be estimated");
        }
        if (populationUnits > 0) {
            samples.add(sample);
            populations.add(populationUnits);
        }
        return this;
    }

    /**
     * @param k number of keys, {@code >= 1}
     * @param confidence of each key's count interval
     * @return the estimated top-k (fewer if fewer keys were seen), by estimated count descending
     */
    public TopKResult<K> topK(int k, double confidence) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be >= 1, got " + k);
        }
        ApproxResult.checkConfidence(confidence);
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("no delivered messages; top-k cannot be estimated");
        }
        long messages = 0;
        long population = 0;
        boolean complete = true;
        Map<K, Double> estimate = new HashMap<>();
        for (int m = 0; m < samples.size(); m++) {
            TopKAccumulator<K> s = samples.get(m);
            long pop = populations.get(m);
            messages += s.messageCount();
            population += pop;
            complete &= s.messageCount() == pop;
            double w = (double) pop / s.messageCount();
            for (Map.Entry<K, double[]> e : s.keySums().entrySet()) {
                estimate.merge(e.getKey(), w * e.getValue()[0], Double::sum);
            }
        }
        List<Map.Entry<K, Double>> ranked = new ArrayList<>(estimate.entrySet());
        ranked.sort(
                Comparator.<Map.Entry<K, Double>>comparingDouble(e -> -e.getValue())
                        .thenComparing(e -> String.valueOf(e.getKey())));
        int take = Math.min(ranked.size(), k + 1);
        List<TopKResult.KeyCount<K>> out = new ArrayList<>(take);
        for (int i = 0; i < take; i++) {
            K key = ranked.get(i).getKey();
            out.add(new TopKResult.KeyCount<>(key, count(key, confidence)));
        }
        List<TopKResult.KeyCount<K>> top = out.subList(0, Math.min(k, out.size()));
        TopKResult.KeyCount<K> runnerUp = out.size() > k ? out.get(k) : null;
        boolean separated;
        if (complete) {
            separated = true;
        } else if (runnerUp == null) {
            separated = false; // unseen keys could belong to the top k
        } else {
            separated = top.get(top.size() - 1).count().low() > runnerUp.count().high();
        }
        return new TopKResult<>(
                k, List.copyOf(top), runnerUp, separated, estimate.size(), messages, population);
    }

    /**
     * One key's count: the stratified sum of its records per message, lower bound at least the
     * records seen.
     */
    private ApproxResult count(K key, double confidence) {
        List<StratumSummary> strata = new ArrayList<>(samples.size());
        double seen = 0;
        boolean complete = true;
        long population = 0;
        for (int m = 0; m < samples.size(); m++) {
            TopKAccumulator<K> s = samples.get(m);
            double n = s.messageCount();
            double[] sums = s.keySums().getOrDefault(key, new double[2]);
            seen += sums[0];
            complete &= s.messageCount() == populations.get(m);
            population += populations.get(m);
            double mean = sums[0] / n;
            double var = n < 2 ? 0.0 : Math.max(0.0, (sums[1] - sums[0] * sums[0] / n) / (n - 1));
            strata.add(
                    new StratumSummary(
                            populations.get(m), s.messageCount(), mean, var, 1.0, 0.0, 0.0));
        }
        if (complete) {
            return ApproxResult.exact(
                    seen, confidence, population); // record counts: integers, summed exactly
        }
        ApproxResult r = StratifiedEstimator.sum(strata, confidence);
        double low = Math.min(r.mean(), Math.max(seen, r.low()));
        return new ApproxResult(
                r.mean(), low, r.high(), confidence, r.sampleSize(), r.populationSize());
    }
}
