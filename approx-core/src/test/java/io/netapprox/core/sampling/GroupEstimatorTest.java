package io.netapprox.core.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** {@link GroupEstimator} over {@link ShareSample}s, as every integration uses them. */
class GroupEstimatorTest {
    private static final double CONFIDENCE = 0.95;
    private static final ShareSample.Columns ALL =
            new ShareSample.Columns(new boolean[] {true}, new boolean[] {true}, true);

    /** One share's records: a value and a key each. */
    private record Records(double[] values, String[] keys) {}

    /**
     * A share of {@code r}'s records, permuted, in messages of {@code perMessage}; the first {@code
     * delivered} messages arrive (a simple random sample of the messages).
     */
    private static ShareSample share(
            Records r, int perMessage, int delivered, long[] nonFinite, SplittableRandom rnd) {
        int n = r.values().length;
        int[] order = new int[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        int messages = (n + perMessage - 1) / perMessage;
        ShareSample s =
                new ShareSample(messages, n, 1.0, delivered, nonFinite, null, ALL, rnd.nextLong());
        for (int m = 0; m < delivered; m++) {
            s.startMessage();
            for (int i = m * perMessage; i < Math.min(n, (m + 1) * perMessage); i++) {
                s.addRecord(new double[] {r.values()[order[i]]});
                s.addKey(r.keys()[order[i]], 1);
            }
            s.finishMessage();
        }
        return s;
    }

    private static Records uniform(int from, int n, String keyPrefix) {
        double[] v = new double[n];
        String[] k = new String[n];
        for (int i = 0; i < n; i++) {
            v[i] = from + i;
            k[i] = keyPrefix + (i < n / 2 ? "lo" : "hi");
        }
        return new Records(v, k);
    }

    @Test
    void aGroupKnownWholeIsExact() {
        SplittableRandom rnd = new SplittableRandom(1);
        Records a = uniform(1, 40, "a");
        Records b = uniform(41, 8, "b");
        GroupEstimator est =
                new GroupEstimator(
                        List.of(share(a, 4, 10, null, rnd), share(b, 4, 2, null, rnd)),
                        CONFIDENCE,
                        false);
        // 1..48: sum 1176, mean 24.5, median (rank 24) 24
        assertEquals(1176, est.sum(0).mean(), 0);
        assertTrue(est.sum(0).halfWidth() < 1e-9, est.sum(0).toString());
        assertTrue(est.sum(0).contains(1176));
        assertEquals(24.5, est.mean(0).mean(), 1e-12);
        assertEquals(48, est.count().mean());
        ApproxResult median = est.quantile(0, 24, 24, (x, y) -> x);
        assertEquals(24, median.mean());
        assertTrue(median.isExact(), median.toString());
        // Spark's interpolated median of 48 values: between ranks 24 and 25
        ApproxResult mid = est.quantile(0, 24, 25, (x, y) -> (x + y) / 2);
        assertEquals(24.5, mid.mean());
        assertTrue(mid.isExact(), mid.toString());
        List<GroupEstimator.KeyEstimate> top = est.topK(2);
        assertEquals(2, top.size());
        for (GroupEstimator.KeyEstimate k : top) {
            assertTrue(k.key().startsWith("a"), k.toString());
            assertEquals(20, k.count().mean(), 1e-9);
            assertTrue(k.count().isExact(), k.toString());
        }
    }

    /**
     * Shares of one group sampled at different fractions with different distributions: each is
     * weighted by its own fraction, so the intervals of mean, sum, median and top-k counts cover
     * the truth at the stated confidence over seeded trials; a pooled sample (every share's sample
     * as one) would put the median near the large share's and miss almost always.
     */
    @Test
    void sharesSampledAtDifferentFractionsCoverAtTheConfidence() {
        SplittableRandom data = new SplittableRandom(42);
        // a large skewed share (lognormal, 6,000 records, 5 % of its messages), a small one far
        // above it (600 records, 50 %), and a middle one (2,000 records, 20 %)
        Records large = skewed(data, 6_000, 0.0, "L");
        Records small = shifted(data, 600, 200.0, "S");
        Records middle = shifted(data, 2_000, 20.0, "M");
        double[] all = concat(large.values(), small.values(), middle.values());
        double sum = Arrays.stream(all).sum();
        long records = all.length;
        double[] sorted = all.clone();
        Arrays.sort(sorted);
        long rank = (long) Math.ceil(0.5 * records);
        double median = sorted[(int) rank - 1];
        Map<String, Long> keyCounts = new HashMap<>();
        for (Records r : List.of(large, small, middle)) {
            for (String k : r.keys()) {
                keyCounts.merge(k, 1L, Long::sum);
            }
        }

        int trials = 400;
        int coveredMean = 0;
        int coveredSum = 0;
        int coveredMedian = 0;
        int coveredTop = 0;
        int topChecks = 0;
        int pooledMedianCovered = 0;
        for (int t = 0; t < trials; t++) {
            SplittableRandom rnd = new SplittableRandom(1000 + t);
            List<ShareSample> shares =
                    List.of(
                            share(large, 2, 150, null, rnd), // 150 of 3,000 messages
                            share(small, 2, 150, null, rnd), // 150 of 300
                            share(middle, 2, 200, null, rnd)); // 200 of 1,000
            GroupEstimator est = new GroupEstimator(shares, CONFIDENCE, false);
            coveredMean += est.mean(0).contains(sum / records) ? 1 : 0;
            coveredSum += est.sum(0).contains(sum) ? 1 : 0;
            coveredMedian += est.quantile(0, rank, rank, (x, y) -> x).contains(median) ? 1 : 0;
            for (GroupEstimator.KeyEstimate k : est.topK(2)) {
                topChecks++;
                coveredTop += k.count().contains(keyCounts.get(k.key())) ? 1 : 0;
            }
            QuantileAccumulator pooled = new QuantileAccumulator();
            for (ShareSample s : shares) {
                pooled.merge(s.quantileSample(0));
            }
            pooledMedianCovered +=
                    pooled.quantile(0.5, CONFIDENCE, records).contains(median) ? 1 : 0;
        }
        String what =
                String.format(
                        "coverage of %d trials: mean %d, sum %d, median %d, top-k %d/%d;"
                                + " pooled median %d",
                        trials,
                        coveredMean,
                        coveredSum,
                        coveredMedian,
                        coveredTop,
                        topChecks,
                        pooledMedianCovered);
        System.out.println("[core] GroupEstimator, unequal shares: " + what);
        // 95 % nominal; 400 trials have a binomial sd of 1.1 %: accept from 91 %
        assertTrue(coveredMean >= 0.91 * trials, what);
        assertTrue(coveredSum >= 0.91 * trials, what);
        assertTrue(coveredMedian >= 0.91 * trials, what);
        assertTrue(coveredTop >= 0.91 * topChecks, what);
        assertTrue(pooledMedianCovered < 0.5 * trials, "pooling is biased here: " + what);
    }

    private static Records skewed(SplittableRandom rnd, int n, double shift, String key) {
        double[] v = new double[n];
        String[] k = new String[n];
        for (int i = 0; i < n; i++) {
            v[i] = shift + Math.exp(rnd.nextGaussian());
            k[i] = key + (rnd.nextDouble() < 0.6 ? "1" : "2");
        }
        return new Records(v, k);
    }

    private static Records shifted(SplittableRandom rnd, int n, double shift, String key) {
        double[] v = new double[n];
        String[] k = new String[n];
        for (int i = 0; i < n; i++) {
            v[i] = shift + 10 * rnd.nextDouble();
            k[i] = key + (rnd.nextDouble() < 0.5 ? "1" : "2");
        }
        return new Records(v, k);
    }

    private static double[] concat(double[]... parts) {
        return Arrays.stream(parts).flatMapToDouble(Arrays::stream).toArray();
    }

    @Test
    void aShareOfWhichNothingArrivedLeavesTheEstimateUnbounded() {
        SplittableRandom rnd = new SplittableRandom(3);
        Records a = uniform(1, 400, "a");
        Records b = uniform(1, 40, "b");
        ShareSample arrived = share(a, 4, 50, null, rnd);
        ShareSample lost = share(b, 4, 0, null, rnd);
        GroupEstimator est = new GroupEstimator(List.of(arrived, lost), CONFIDENCE, false);
        assertTrue(est.anyShareMissing());
        for (ApproxResult r :
                List.of(est.mean(0), est.sum(0), est.quantile(0, 220, 220, (x, y) -> x))) {
            assertEquals(Double.NEGATIVE_INFINITY, r.low(), r.toString());
            assertEquals(Double.POSITIVE_INFINITY, r.high(), r.toString());
            assertTrue(Double.isFinite(r.mean()), r.toString());
        }
        for (GroupEstimator.KeyEstimate k : est.topK(2)) {
            assertEquals(Double.POSITIVE_INFINITY, k.count().high(), k.toString());
        }
        assertEquals(440, est.count().mean());
        GroupEstimator none = new GroupEstimator(List.of(lost), CONFIDENCE, false);
        assertNull(none.mean(0));
        assertNull(none.sum(0));
        assertNull(none.quantile(0, 20, 20, (x, y) -> x));
        assertNull(none.topK(2));
        assertEquals(40, none.count().mean());
    }

    @Test
    void nonFiniteValuesGiveWhatDoubleArithmeticGives() {
        SplittableRandom rnd = new SplittableRandom(4);
        Records withNan = new Records(new double[] {1, Double.NaN, 3, 4}, new String[4]);
        GroupEstimator nan =
                new GroupEstimator(
                        List.of(share(withNan, 4, 1, new long[] {1, 0, 0}, rnd)),
                        CONFIDENCE,
                        false);
        assertTrue(nan.mean(0).isUndefined());
        assertTrue(nan.sum(0).isUndefined());
        assertEquals(3, nan.quantile(0, 2, 2, (x, y) -> x).mean()); // rank 2 of {1, 3, 4, NaN}
        assertTrue(nan.quantile(0, 4, 4, (x, y) -> x).isUndefined()); // rank 4 is the NaN
        Records withInf =
                new Records(
                        new double[] {1, Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY},
                        new String[3]);
        GroupEstimator inf =
                new GroupEstimator(
                        List.of(share(withInf, 3, 1, new long[] {0, 2, 0}, rnd)),
                        CONFIDENCE,
                        false);
        assertEquals(Double.POSITIVE_INFINITY, inf.sum(0).mean());
        assertEquals(Double.POSITIVE_INFINITY, inf.mean(0).low());
        assertEquals(Double.POSITIVE_INFINITY, inf.quantile(0, 3, 3, (x, y) -> x).mean());
        // a null key is a key of its own, answered as null
        List<GroupEstimator.KeyEstimate> top = inf.topK(1);
        assertNull(top.get(0).key());
        assertEquals(3, top.get(0).count().mean(), 1e-9);
    }

    @Test
    void aSharesExactPartialStandsForItsSampleWhenAsked() {
        SplittableRandom rnd = new SplittableRandom(5);
        Records a = uniform(1, 400, "a");
        ExactSum partial = new ExactSum();
        for (double x : a.values()) {
            partial.add(x);
        }
        ShareSample sampled = share(a, 4, 20, null, rnd);
        ShareSample withPartial =
                new ShareSample(100, 400, 0.2, 20, null, new ExactSum[] {partial}, ALL, 7);
        // the same 20 messages' content does not matter once the partial is used
        withPartial.startMessage();
        withPartial.addRecord(new double[] {1});
        withPartial.finishMessage();
        ApproxResult exact = new GroupEstimator(List.of(withPartial), CONFIDENCE, true).sum(0);
        assertEquals(80_200, exact.mean(), 0);
        // an exact sum's interval is as wide as its floating-point rounding, no wider
        assertTrue(exact.halfWidth() < 1e-12 * exact.mean(), exact.toString());
        ApproxResult estimated = new GroupEstimator(List.of(sampled), CONFIDENCE, true).sum(0);
        assertTrue(estimated.halfWidth() > 100, "no partial: estimated " + estimated);
    }

    @Test
    void aQuantileColumnKeepsAUniformSubsampleBeyondItsCap() throws Exception {
        ShareSample.Columns quantile =
                new ShareSample.Columns(new boolean[] {false}, new boolean[] {true}, false);
        int n = 2 * ShareSample.QUANTILE_VALUES;
        ShareSample s = new ShareSample(n, n, 1.0, n, null, null, quantile, 11);
        for (int i = 0; i < n; i++) {
            s.startMessage();
            s.addRecord(new double[] {i});
            s.finishMessage();
        }
        QuantileAccumulator kept = s.quantileSample(0);
        assertEquals(ShareSample.QUANTILE_VALUES, kept.count());
        assertEquals(n - ShareSample.QUANTILE_VALUES, s.quantileValuesDropped());
        // a uniform subsample of 0..n-1: its median near n/2 (sd of the sample median ~ n/1000)
        GroupEstimator est = new GroupEstimator(List.of(s), CONFIDENCE, false);
        ApproxResult median = est.quantile(0, n / 2, n / 2, (x, y) -> x);
        assertTrue(Math.abs(median.mean() - n / 2.0) < n / 200.0, median.toString());
        assertTrue(median.contains(n / 2.0 - 1), median.toString());
        assertTrue(!median.isExact(), "a subsample is not the census: " + median);

        // Java serialization (Spark) carries the accumulators and the reservoir's state
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(s);
        }
        ShareSample copy;
        try (ObjectInputStream in =
                new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            copy = (ShareSample) in.readObject();
        }
        assertEquals(n, copy.deliveredRecords());
        assertEquals(
                median,
                new GroupEstimator(List.of(copy), CONFIDENCE, false)
                        .quantile(0, n / 2, n / 2, (x, y) -> x));
        copy.startMessage(); // the per-message state is rebuilt after deserialization
        copy.addRecord(new double[] {0});
        copy.finishMessage();
        assertEquals(n + 1, copy.deliveredMessages());
    }

    @Test
    void aMalformedMessageCanBeDiscarded() {
        ShareSample s = new ShareSample(2, 4, 1.0, 2, null, null, ALL, 1);
        s.startMessage();
        s.addKey("a", 2);
        s.discardMessage();
        s.startMessage();
        s.addRecord(new double[] {1});
        s.addRecord(new double[] {2});
        s.addKey("b", 2);
        s.finishMessage();
        assertEquals(1, s.deliveredMessages());
        List<GroupEstimator.KeyEstimate> top =
                new GroupEstimator(List.of(s), CONFIDENCE, false).topK(5);
        assertEquals(List.of("b"), top.stream().map(GroupEstimator.KeyEstimate::key).toList());
        assertEquals(1.5, new GroupEstimator(List.of(s), CONFIDENCE, false).mean(0).mean(), 1e-12);
    }
}
