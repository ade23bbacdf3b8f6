package io.netapprox.core.sampling;

import java.util.ArrayList;
import java.util.List;
import java.util.function.DoubleBinaryOperator;

/**
 * A group's answers from its shares ({@link ShareSample}: one per sender, and per epoch where the
 * integration cuts a window into epochs), the same for every integration. Every aggregate is
 * estimated per share: the shares of a group are sampled at different fractions (a small share at a
 * larger one), so pooling them as one sample would be biased whenever they differ.
 *
 * <ul>
 *   <li>{@link #count}: the group's record count {@code M}, exact (every sender counts its
 *       records);
 *   <li>{@link #mean}, {@link #sum}: the shares whose exact sum is known (the sender's partial,
 *       when the query uses them, or every message delivered) contribute it; the others are
 *       estimated together by the combined ratio estimator with inclusion weights {@code N_s/n_s}
 *       ({@link StratifiedEstimator#mean}, skewness-corrected t interval) and added as {@link
 *       CombinedEstimate} says. A group known whole is exact, its interval as wide as a
 *       floating-point summation's rounding;
 *   <li>{@link #quantile}: the weighted empirical quantile, each share with its own inclusion
 *       weight, and Woodruff's interval ({@link StratifiedQuantile}), at one rank or interpolated
 *       between two;
 *   <li>{@link #topK}: per-key stratified Horvitz-Thompson counts ({@link StratifiedTopK}).
 * </ul>
 *
 * <p>NaN and infinite values (the senders count them over every record) give what double arithmetic
 * gives over all the records: a sum or average with a NaN, or with both infinities, is NaN (an
 * undefined result), with one kind of infinity that infinity; NaN sorts above every number, so a
 * quantile's rank among the NaN values is NaN exactly.
 *
 * <p>A share of which nothing arrived (its deadline passed) leaves the estimate to the other shares
 * and makes the interval infinite: the answer is still given, but promises nothing. When nothing
 * usable of the group arrived at all the estimators return null.
 */
public final class GroupEstimator {
    private final List<ShareSample> shares;
    private final double confidence;
    private final boolean usePartials;
    private final long records;
    private final long sampledRecords;

    /**
     * @param shares the group's shares, at least one
     * @param confidence of the intervals, in (0, 1)
     * @param usePartials whether a share's exact partial ({@link ShareSample#partial}) stands for
     *     its sample in sums and averages
     */
    public GroupEstimator(List<ShareSample> shares, double confidence, boolean usePartials) {
        if (shares.isEmpty()) {
            throw new IllegalArgumentException("a group needs at least one share");
        }
        ApproxResult.checkConfidence(confidence);
        this.shares = List.copyOf(shares);
        this.confidence = confidence;
        this.usePartials = usePartials;
        long m = 0;
        long n = 0;
        for (ShareSample s : shares) {
            m += s.records();
            n += s.deliveredRecords();
        }
        this.records = m;
        this.sampledRecords = n;
    }

    /** The group's records {@code M}. */
    public long records() {
        return records;
    }

    /** Records in the delivered messages. */
    public long sampledRecords() {
        return sampledRecords;
    }

    /** True when some share with records delivered no message. */
    public boolean anyShareMissing() {
        for (ShareSample s : shares) {
            if (missing(s)) {
                return true;
            }
        }
        return false;
    }

    private static boolean missing(ShareSample s) {
        return s.population() > 0 && s.deliveredMessages() == 0;
    }

    /** The group's record count, exact. */
    public ApproxResult count() {
        return new ApproxResult(records, records, records, confidence, sampledRecords, records);
    }

    /** The mean of value column v per record, or null when nothing of the group arrived. */
    public ApproxResult mean(int v) {
        return sumOrMean(v, true);
    }

    /** The total of value column v, or null when nothing of the group arrived. */
    public ApproxResult sum(int v) {
        return sumOrMean(v, false);
    }

    private ApproxResult sumOrMean(int v, boolean perRecord) {
        ApproxResult known = nonFinite(v);
        if (known != null) {
            return known;
        }
        ExactSum exact = new ExactSum();
        long exactRecords = 0;
        long estimatedRecords = 0;
        List<StratumSummary> estimated = new ArrayList<>();
        boolean missing = false;
        for (ShareSample s : shares) {
            ExactSum whole = usePartials && s.partial(v) != null ? s.partial(v) : s.wholeSum(v);
            if (whole != null) {
                exact.merge(whole);
                exactRecords += s.records();
            } else {
                estimatedRecords += s.records();
                if (s.deliveredMessages() > 0) {
                    estimated.add(s.totals(v).summarize(s.population()));
                } else {
                    missing |= missing(s);
                }
            }
        }
        ApproxResult mean = null;
        if (!estimated.isEmpty()) {
            mean = StratifiedEstimator.mean(estimated, confidence);
        } else if (estimatedRecords > 0) {
            if (exactRecords == 0) {
                return null;
            }
            // the unseen shares at the exact shares' mean, unbounded below
            double m = exact.value() / exactRecords;
            mean = new ApproxResult(m, m, m, confidence, 0, 0);
        }
        ApproxResult r =
                perRecord
                        ? CombinedEstimate.mean(exact, estimatedRecords, mean, confidence, records)
                        : CombinedEstimate.total(
                                exact, estimatedRecords, mean, confidence, records);
        return missing ? unbounded(r) : r;
    }

    /**
     * The known result of a sum or mean over column v with NaN or infinite values: NaN for a NaN or
     * for both infinities, else the infinity; null when every value is finite.
     */
    private ApproxResult nonFinite(int v) {
        long nan = 0;
        long pos = 0;
        long neg = 0;
        for (ShareSample s : shares) {
            nan += s.nan(v);
            pos += s.positiveInfinities(v);
            neg += s.negativeInfinities(v);
        }
        if (nan > 0 || (pos > 0 && neg > 0)) {
            return ApproxResult.undefined(confidence, sampledRecords, records);
        }
        if (pos > 0 || neg > 0) {
            double inf = pos > 0 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
            return new ApproxResult(inf, inf, inf, confidence, sampledRecords, records);
        }
        return null;
    }

    /**
     * A quantile of value column v: the value at 1-based ascending rank {@code first} among the
     * group's {@code M} values (NaN above every number), or {@code combine} of the values at ranks
     * {@code first} and {@code second} (an interpolation; {@code first == second} for one rank). A
     * rank among the NaN values is NaN exactly (and so is an interpolation with it). Null when a
     * number is asked for and no number of the group arrived.
     *
     * <p>The interval of an interpolated answer spans the two ranks' intervals ({@link
     * #interpolated}).
     */
    public ApproxResult quantile(int v, long first, long second, DoubleBinaryOperator combine) {
        long nan = 0;
        for (ShareSample s : shares) {
            nan += s.nan(v);
        }
        long numbers = records - nan;
        if (Math.max(first, second) > numbers) {
            return ApproxResult.undefined(confidence, sampledRecords, records);
        }
        StratifiedQuantile est = new StratifiedQuantile();
        boolean missing = false;
        long kept = 0;
        for (ShareSample s : shares) {
            QuantileAccumulator acc = s.quantileSample(v);
            long shareNumbers = s.records() - s.nan(v);
            if (shareNumbers > 0 && acc.count() == 0) {
                missing = true; // nothing (or only NaN) of this share arrived: its numbers unseen
                continue;
            }
            kept += acc.count();
            est.addShare(acc, shareNumbers);
        }
        if (missing) {
            if (kept == 0) {
                return null;
            }
            // the point from the shares that arrived, at the same relative ranks among their
            // numbers; no bound
            double x = est.quantile(Math.min(1.0, (double) first / numbers), confidence).mean();
            double y =
                    first == second
                            ? x
                            : est.quantile(Math.min(1.0, (double) second / numbers), confidence)
                                    .mean();
            return unbounded(
                    new ApproxResult(
                            combine.applyAsDouble(x, y),
                            Double.NEGATIVE_INFINITY,
                            Double.POSITIVE_INFINITY,
                            confidence,
                            sampledRecords,
                            records));
        }
        ApproxResult a = est.quantileAtRank(first, confidence);
        if (first == second) {
            return new ApproxResult(
                    a.mean(), a.low(), a.high(), confidence, sampledRecords, records);
        }
        ApproxResult b = est.quantileAtRank(second, confidence);
        return interpolated(combine, a, b, kept == numbers, confidence, sampledRecords, records);
    }

    /**
     * An interpolated answer from its two ranks' estimates: {@code combine} of the two point
     * estimates, the interval spanning both intervals; exact ({@code low = estimate = high}) when
     * {@code everyValue} was sampled (both estimates are then the values).
     *
     * <p>The answer lies between the two values it interpolates, and each rank's interval misses
     * its value on either side with probability at most (1 - confidence) / 2, so {@code [min low,
     * max high]} misses the answer below (above) only if the lower (upper) of the two values is
     * missed below (above): coverage at least the confidence.
     */
    public static ApproxResult interpolated(
            DoubleBinaryOperator combine,
            ApproxResult first,
            ApproxResult second,
            boolean everyValue,
            double confidence,
            long sampled,
            long population) {
        double estimate = combine.applyAsDouble(first.mean(), second.mean());
        if (everyValue) {
            return new ApproxResult(estimate, estimate, estimate, confidence, sampled, population);
        }
        double low = Math.min(first.low(), second.low());
        double high = Math.max(first.high(), second.high());
        if (!Double.isNaN(estimate)) { // (a rounding of the interpolation outside [a, b])
            low = Math.min(low, estimate);
            high = Math.max(high, estimate);
        }
        return new ApproxResult(estimate, low, high, confidence, sampled, population);
    }

    /** One key of a top-k answer: the key (null for the null key) and its estimated count. */
    public record KeyEstimate(String key, ApproxResult count) {}

    /**
     * The {@code k} keys with the most records, by estimated count descending, each count the
     * stratified Horvitz-Thompson total with each share's own inclusion weight {@code N_s/n_s};
     * null when no share delivered a message.
     */
    public List<KeyEstimate> topK(int k) {
        StratifiedTopK<String> est = new StratifiedTopK<>();
        boolean any = false;
        boolean missing = false;
        for (ShareSample s : shares) {
            if (s.deliveredMessages() > 0) {
                est.addShare(s.topK(), s.population());
                any = true;
            } else {
                missing |= missing(s);
            }
        }
        if (!any) {
            return null;
        }
        List<KeyEstimate> out = new ArrayList<>();
        for (TopKResult.KeyCount<String> kc : est.topK(k, confidence).top()) {
            String key = ShareSample.NULL_KEY.equals(kc.key()) ? null : kc.key();
            out.add(new KeyEstimate(key, missing ? unbounded(kc.count()) : kc.count()));
        }
        return out;
    }

    private static ApproxResult unbounded(ApproxResult r) {
        return r.unbounded();
    }
}
