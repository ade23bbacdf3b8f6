package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.MsrPlannerTest.assertMessage;
import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;
import org.apache.commons.math3.stat.correlation.Covariance;
import org.apache.commons.math3.stat.descriptive.moment.Skewness;
import org.apache.commons.math3.stat.descriptive.moment.Variance;
import org.junit.jupiter.api.Test;

/** Mergeability, numerical agreement with commons-math, serialization and input validation. */
class AccumulatorAndValidationTest {

    @Test
    void mergeEqualsSequentialAndMatchesCommonsMath() {
        RandomGenerator r = new Well19937c(501);
        int n = 1000;
        double[] y = new double[n];
        double[] m = new double[n];
        StratumAccumulator all = new StratumAccumulator();
        StratumAccumulator[] parts = {
            new StratumAccumulator(), new StratumAccumulator(), new StratumAccumulator()
        };
        for (int i = 0; i < n; i++) {
            m[i] = 1 + r.nextInt(10);
            y[i] = 1e6 + m[i] * r.nextGaussian(); // large offset: tests numerical stability
            all.add(y[i], (long) m[i]);
            parts[i % 3].add(y[i], (long) m[i]);
        }
        StratumAccumulator merged =
                new StratumAccumulator().merge(parts[0]).merge(parts[1].copy()).merge(parts[2]);
        StratumSummary a = all.summarize(5000);
        StratumSummary b = merged.summarize(5000);
        assertEquals(a.meanTotal(), b.meanTotal(), 1e-6);
        assertEquals(a.varianceTotal(), b.varianceTotal(), 1e-9 * a.varianceTotal());
        assertEquals(a.covariance(), b.covariance(), 1e-9 * Math.abs(a.covariance()));
        assertEquals(new Variance().evaluate(y), a.varianceTotal(), 1e-8 * a.varianceTotal());
        assertEquals(new Variance().evaluate(m), a.varianceRecords(), 1e-10);
        assertEquals(
                new Covariance().covariance(y, m), a.covariance(), 1e-8 * Math.abs(a.covariance()));
    }

    @Test
    void higherMomentsMatchTwoPassComputationForAddAndMerge() {
        RandomGenerator r = new Well19937c(502);
        int n = 777;
        double[] y = new double[n];
        long[] m = new long[n];
        StratumAccumulator seq = new StratumAccumulator();
        StratumAccumulator fromSingles = new StratumAccumulator();
        StratumAccumulator[] parts = {
            new StratumAccumulator(), new StratumAccumulator(), new StratumAccumulator()
        };
        for (int i = 0; i < n; i++) {
            m[i] = 1 + r.nextInt(8);
            y[i] = 1e5 + m[i] * Math.exp(r.nextGaussian()); // skewed, correlated with m,
            // large offset
            seq.add(y[i], m[i]);
            fromSingles.merge(new StratumAccumulator().add(y[i], m[i]));
            parts[(i * 7) % 3].add(y[i], m[i]);
        }
        StratumAccumulator merged = parts[2].copy().merge(parts[0]).merge(parts[1]);
        double my = 0;
        double mm = 0;
        for (int i = 0; i < n; i++) {
            my += y[i] / n;
            mm += (double) m[i] / n;
        }
        double[][] direct = new double[5][5];
        for (int i = 0; i < n; i++) {
            for (int a = 0; a <= 4; a++) {
                for (int b = 0; a + b <= 4; b++) {
                    direct[a][b] += Math.pow(y[i] - my, a) * Math.pow(m[i] - mm, b) / n;
                }
            }
        }
        for (StratumAccumulator acc : List.of(seq, fromSingles, merged)) {
            StratumSummary.HigherMoments h = acc.summarize(5000).higherMoments();
            double[] got = {
                h.m30(), h.m21(), h.m12(), h.m03(), h.m40(), h.m31(), h.m22(), h.m13(), h.m04()
            };
            double[] want = {
                direct[3][0],
                direct[2][1],
                direct[1][2],
                direct[0][3],
                direct[4][0],
                direct[3][1],
                direct[2][2],
                direct[1][3],
                direct[0][4]
            };
            for (int k = 0; k < got.length; k++) {
                assertEquals(want[k], got[k], 1e-7 * Math.abs(want[k]) + 1e-9, "moment " + k);
            }
        }
        assertEquals(
                new Skewness().evaluate(y),
                seq.skewnessTotal() * Math.sqrt((double) n * (n - 1)) / (n - 2),
                1e-8);
        assertEquals(
                seq.summarize(5000).varianceTotal(),
                fromSingles.summarize(5000).varianceTotal(),
                1e-9 * seq.summarize(5000).varianceTotal());
        // Residual moments for a ratio R: the moments of y - R m computed directly.
        double rr = my / mm;
        double m3 = 0;
        double m4 = 0;
        for (int i = 0; i < n; i++) {
            double d = (y[i] - my) - rr * (m[i] - mm);
            m3 += d * d * d / n;
            m4 += d * d * d * d / n;
        }
        StratumSummary.HigherMoments h = seq.summarize(5000).higherMoments();
        assertEquals(m3, h.residualThird(rr), 1e-6 * Math.abs(m3) + 1e-6);
        assertEquals(m4, h.residualFourth(rr), 1e-6 * m4);
        assertTrue(Double.isNaN(new StratumAccumulator().add(1).add(2).skewnessTotal()));
        assertEquals(
                StratumSummary.HigherMoments.NONE,
                new StratumAccumulator().add(1).add(2).summarize(9).higherMoments());
    }

    @Test
    void intervalShapeFollowsSkewnessAndKurtosis() {
        // No higher moments: the classical symmetric t interval.
        StratumSummary plain = StratumSummary.ofSingleRecordMessages(10_000, 200, 5.0, 4.0);
        ApproxResult p = StratifiedEstimator.mean(plain, 0.95);
        double tHalf =
                CriticalValues.twoSided(0.95, 199) * 2.0 / Math.sqrt(200) * Math.sqrt(1 - 0.02);
        assertEquals(tHalf, p.high() - p.mean(), 1e-12);
        assertEquals(tHalf, p.mean() - p.low(), 1e-12);
        // Skewness and kurtosis within Normal sampling noise (|g1| < 2 se, g2 < 2 se): the same
        // interval.
        ApproxResult noise =
                StratifiedEstimator.mean(
                        StratumSummary.ofSingleRecordMessages(10_000, 200, 5.0, 4.0, 0.2, 0.4),
                        0.95);
        assertEquals(p.low(), noise.low(), 1e-12);
        assertEquals(p.high(), noise.high(), 1e-12);
        // Right skew: the interval extends further on the high side; left skew mirrors it.
        ApproxResult right =
                StratifiedEstimator.mean(
                        StratumSummary.ofSingleRecordMessages(10_000, 200, 5.0, 4.0, 3.0, 0.0),
                        0.95);
        ApproxResult left =
                StratifiedEstimator.mean(
                        StratumSummary.ofSingleRecordMessages(10_000, 200, 5.0, 4.0, -3.0, 0.0),
                        0.95);
        assertTrue(
                right.high() - right.mean() > tHalf && right.mean() - right.low() < tHalf,
                right.toString());
        assertEquals(right.high() - right.mean(), left.mean() - left.low(), 1e-12);
        assertEquals(right.mean() - right.low(), left.high() - left.mean(), 1e-12);
        // Heavy tails (large excess kurtosis) lower the df: a wider symmetric interval.
        ApproxResult heavy =
                StratifiedEstimator.mean(
                        StratumSummary.ofSingleRecordMessages(10_000, 200, 5.0, 4.0, 0.0, 30.0),
                        0.95);
        assertTrue(heavy.halfWidth() > 1.03 * tHalf, heavy.toString());
        assertEquals(heavy.high() - heavy.mean(), heavy.mean() - heavy.low(), 1e-12);
        // A census stays exact whatever the moments.
        assertTrue(
                StratifiedEstimator.sum(
                                StratumSummary.ofSingleRecordMessages(
                                        200, 200, 5.0, 4.0, 3.0, 30.0),
                                0.95)
                        .isExact());
        // Proportions keep the Normal-theory df (their variance is a function of p).
        StratumAccumulator rare = new StratumAccumulator();
        for (int i = 0; i < 300; i++) {
            rare.add(i % 30 == 0 ? 1 : 0);
        }
        StratumSummary withMoments = rare.summarize(5000);
        StratumSummary without =
                new StratumSummary(
                        5000,
                        300,
                        withMoments.meanTotal(),
                        withMoments.varianceTotal(),
                        1.0,
                        0.0,
                        0.0);
        assertEquals(
                StratifiedEstimator.proportion(without, 0.95),
                StratifiedEstimator.proportion(withMoments, 0.95));
    }

    @Test
    void accumulatorsAreSerializable() throws Exception {
        StratumAccumulator acc = new StratumAccumulator().add(1).add(5).add(9);
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bos)) {
            out.writeObject(acc);
        }
        StratumAccumulator back;
        try (ObjectInputStream in =
                new ObjectInputStream(new ByteArrayInputStream(bos.toByteArray()))) {
            back = (StratumAccumulator) in.readObject();
        }
        assertEquals(acc.summarize(10), back.summarize(10));
    }

    @Test
    void rareStrataEdgeCases() {
        // n = 1 of N > 1: variance unknown -> infinite interval, not a fake zero-width one.
        StratumSummary one = new StratumAccumulator().add(4).summarize(10);
        ApproxResult r = StratifiedEstimator.mean(one, 0.95);
        assertEquals(4.0, r.mean());
        assertTrue(Double.isInfinite(r.low()) && Double.isInfinite(r.high()));
        // N = 1 delivered: exact.
        assertTrue(
                StratifiedEstimator.sum(new StratumAccumulator().add(4).summarize(1), 0.95)
                        .isExact());
        // Empty strata are ignored, undelivered non-empty strata are rejected.
        StratumSummary empty = new StratumAccumulator().summarize(0);
        StratumSummary full = new StratumAccumulator().add(1).add(3).summarize(2);
        assertEquals(4.0, StratifiedEstimator.sum(List.of(full, empty), 0.95).mean());
        assertMessage(
                () ->
                        StratifiedEstimator.sum(
                                List.of(full, new StratumAccumulator().summarize(5)), 0.95),
                "no delivered message");
        assertMessage(() -> StratifiedEstimator.sum(List.of(), 0.95), "at least one stratum");
        assertMessage(() -> StratifiedEstimator.sum(List.of(empty), 0.95), "all strata are empty");
        // Proportion with no positives observed still gets a non-degenerate Wilson upper bound.
        StratumAccumulator zeros = new StratumAccumulator();
        for (int i = 0; i < 50; i++) {
            zeros.add(0);
        }
        ApproxResult p = StratifiedEstimator.proportion(zeros.summarize(1000), 0.95);
        assertEquals(0.0, p.mean());
        assertEquals(0.0, p.low());
        assertTrue(p.high() > 0.03 && p.high() < 0.1, "Wilson upper bound " + p.high());
        assertMessage(
                () ->
                        StratifiedEstimator.proportion(
                                new StratumAccumulator().add(3).add(0).summarize(10), 0.95),
                "proportion needs");
    }

    @Test
    void validation() {
        assertMessage(() -> new StratumAccumulator().add(Double.NaN), "finite");
        assertMessage(() -> new StratumAccumulator().add(1, -1), "records per message");
        assertMessage(() -> new StratumAccumulator().merge(null), "null");
        assertMessage(() -> new StratumAccumulator().add(1).add(2).summarize(1), "smaller than");
        assertMessage(() -> new StratumSummary(10, 11, 0, 0, 1, 0, 0), "sampledUnits");
        assertMessage(() -> new StratumSummary(10, 5, Double.NaN, 0, 1, 0, 0), "meanTotal");
        assertMessage(() -> new StratumSummary(10, 5, 0, -1, 1, 0, 0), "varianceTotal");
        assertMessage(() -> new StratumSummary(10, 5, 0, 1, 1, 0, 0, null), "higherMoments");
        assertMessage(
                () -> new StratumSummary.HigherMoments(Double.NaN, 0, 0, 0, 0, 0, 0, 0, 0), "m30");
        assertMessage(() -> new StratumSummary.HigherMoments(0, 0, 0, 0, -1, 0, 0, 0, 0), "m40");
        assertMessage(() -> new ApproxResult(1, 2, 3, 0.95, 1, 1), "low <= mean <= high");
        assertMessage(() -> new ApproxResult(1, 0, 3, 1.5, 1, 1), "confidence");
        assertMessage(() -> new ApproxResult(1, 0, 3, 0.95, 5, 1), "exceeds populationSize");
        assertMessage(
                () -> new ApproxResult(Double.NaN, 0, 3, 0.95, 1, 1),
                "NaN only as an undefined result");
        assertMessage(
                () ->
                        StratifiedEstimator.mean(
                                StratumSummary.ofSingleRecordMessages(10, 5, 1, 1), 0),
                "confidence");
        assertMessage(() -> CriticalValues.studentT(0.95, 0), "degrees of freedom");
        assertEquals(1.959963984540054, CriticalValues.normal(0.95), 1e-12);
        assertEquals(2.262157162740992, CriticalValues.studentT(0.95, 9), 1e-9);
        assertEquals(CriticalValues.normal(0.95), CriticalValues.twoSided(0.95, 100));
        ApproxResult ok = new ApproxResult(10, 9, 12, 0.95, 5, 50);
        assertEquals(0.2, ok.relativeErrorBound(), 1e-12);
        assertEquals(1.5, ok.halfWidth(), 1e-12);
        assertFalse(ok.isExact());
    }
}
