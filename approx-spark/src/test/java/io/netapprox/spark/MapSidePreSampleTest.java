package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.commons.math3.distribution.ChiSquaredDistribution;
import org.apache.spark.SparkConf;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.junit.jupiter.api.Test;

/**
 * The map side's pre-sample ({@link MapOutputSorter} with a per-group bound, under a real Spark
 * memory manager): a group larger than the bound keeps between the bound and about twice it, each
 * record at most once, the inserted count is reported whole, a group below the bound is kept whole,
 * memory is returned; and over many seeded trials the kept set is a simple random sample: every
 * record is kept equally often (chi-square over positions of insertion, with and without spills),
 * and the kept records' mean is an unbiased estimate of the group's.
 */
class MapSidePreSampleTest {
    private static TaskMemoryManager memory(long bytes) {
        SparkConf conf = new SparkConf(false).set("spark.buffer.pageSize", "1m");
        return new TaskMemoryManager(new UnifiedMemoryManager(conf, bytes, bytes / 2, 1), 0);
    }

    /** Per group key: {kept count, inserted count, then the kept values}. */
    private static Map<String, double[]> run(
            long grant, long bound, long seed, int big, int small, int[] spills)
            throws IOException {
        return run(grant, bound, seed, big, small, spills, -1);
    }

    /** As above; {@code spillAt >= 0}: the buffer is spilled after that many records of "big". */
    private static Map<String, double[]> run(
            long grant, long bound, long seed, int big, int small, int[] spills, int spillAt)
            throws IOException {
        TaskMemoryManager tmm = memory(grant);
        Map<String, double[]> out = new HashMap<>();
        try (MapOutputSorter s = new MapOutputSorter(tmm, new SplittableRandom(seed), bound)) {
            for (int i = 0; i < big; i++) {
                s.insert(0, "big", new ApproxRow(new double[] {i}, null), false);
                if (i < small) {
                    s.insert(1, "small", new ApproxRow(new double[] {i}, null), false);
                }
                if (i + 1 == spillAt) {
                    s.spill(Long.MAX_VALUE, s); // as the memory manager does when memory is short
                }
            }
            spills[0] = s.spillCount();
            s.read(
                    (partition, key, count, inserted, stream) -> {
                        double[] v = new double[(int) count + 2];
                        v[0] = count;
                        v[1] = inserted;
                        byte[][] buf = new byte[1][];
                        for (int i = 0; i < count; i++) {
                            int len = stream.next(buf);
                            v[i + 2] = MapOutputSorterTest.firstValue(buf[0], len);
                        }
                        out.put(key, v);
                    });
        }
        assertEquals(0, tmm.getMemoryConsumptionForThisTask(), "memory returned on close");
        return out;
    }

    @Test
    void keepsBetweenTheBoundAndTwiceItAndSmallGroupsWhole() throws IOException {
        int[] spills = new int[1];
        long bound = 20_000;
        Map<String, double[]> out = run(2L << 20, bound, 3, 2_000_000, 1500, spills);
        assertTrue(spills[0] >= 1, "spilled under a 2 MB grant: " + spills[0]);
        double[] big = out.get("big");
        long kept = (long) big[0];
        assertEquals(2_000_000, (long) big[1], "inserted records counted whole");
        assertTrue(
                kept >= bound && kept <= 2 * bound + 6 * Math.sqrt(2 * bound),
                "kept " + kept + " of 2000000 with bound " + bound);
        BitSet seen = new BitSet();
        for (int i = 2; i < big.length; i++) {
            int x = (int) big[i];
            assertTrue(!seen.get(x), "record " + x + " came back twice");
            seen.set(x);
        }
        double[] small = out.get("small");
        assertEquals(1500, (long) small[0], "a group below the bound is kept whole");
        assertEquals(1500, (long) small[1]);
        System.out.printf(
                "[spark] pre-sample: kept %d of 2000000 (bound %d), %d spills%n",
                kept, bound, spills[0]);
    }

    @Test
    void theKeptSetIsASimpleRandomSampleOverSeededTrials() throws IOException {
        int n = 20_000;
        long bound = 300;
        int trials = 200;
        int bins = 20;
        long[] keptPerBin = new long[bins];
        long keptTotal = 0;
        double meanError = 0;
        double meanErrorSq = 0;
        double truth = (n - 1) / 2.0;
        int[] spills = new int[1];
        int spilledTrials = 0;
        for (int t = 0; t < trials; t++) {
            // odd trials: the buffer is spilled after 40% of the records (those kept so far are
            // read back from the spill, the later ones from memory); even trials: all in memory
            int spillAt = t % 2 == 1 ? 2 * n / 5 : -1;
            double[] big = run(64L << 20, bound, 100 + t, n, 0, spills, spillAt).get("big");
            spilledTrials += spills[0] > 0 ? 1 : 0;
            long kept = (long) big[0];
            keptTotal += kept;
            double sum = 0;
            for (int i = 2; i < big.length; i++) {
                keptPerBin[(int) big[i] * bins / n]++;
                sum += big[i];
            }
            // relative error of the sample mean, in units of its SRSWOR standard error
            double sd = Math.sqrt((double) n * (n + 1) / 12.0);
            double se = sd * Math.sqrt((1.0 / kept) * (1 - (double) kept / n));
            double z = (sum / kept - truth) / se;
            meanError += z;
            meanErrorSq += z * z;
        }
        double chi2 = 0;
        double expected = (double) keptTotal / bins;
        for (long c : keptPerBin) {
            chi2 += (c - expected) * (c - expected) / expected;
        }
        double p = 1 - new ChiSquaredDistribution(bins - 1).cumulativeProbability(chi2);
        double zMean = meanError / trials;
        double zRms = Math.sqrt(meanErrorSq / trials);
        System.out.printf(
                "[spark] pre-sample uniformity: %d trials, %.0f kept per trial on average (bound"
                        + " %d of %d), chi-square over %d insertion-order bins %.1f (p %.3f);"
                        + " mean error %.3f SE (0 +- %.3f), rms %.3f (1); %d trials spilled%n",
                trials,
                (double) keptTotal / trials,
                bound,
                n,
                bins,
                chi2,
                p,
                zMean,
                1 / Math.sqrt(trials),
                zRms,
                spilledTrials);
        assertTrue(spilledTrials >= trials / 2, "the spill path is exercised: " + spilledTrials);
        // uniform inclusion over the order of insertion (p-value above 0.001: seeded, not flaky)
        assertTrue(p > 0.001, "inclusion uniform over insertion order: chi2 " + chi2);
        // the sample mean is unbiased (4 SE of the trials' mean z) and its spread is SRSWOR's
        assertTrue(Math.abs(zMean) < 4 / Math.sqrt(trials), "mean error " + zMean + " SE");
        assertTrue(zRms > 0.85 && zRms < 1.15, "rms error " + zRms + " SE");
    }
}
