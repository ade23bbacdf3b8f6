package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
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
        return run(
                grant,
                bound,
                seed,
                big,
                small,
                spills,
                spillAt,
                MapOutputSorter.COMPACT_MIN_RECORDS,
                new long[2]);
    }

    /**
     * As above, the buffer compacted from {@code compactMin} records on; {@code buffer} gets the
     * most records buffered at once and the number of compactions.
     */
    private static Map<String, double[]> run(
            long grant,
            long bound,
            long seed,
            int big,
            int small,
            int[] spills,
            int spillAt,
            long compactMin,
            long[] buffer)
            throws IOException {
        TaskMemoryManager tmm = memory(grant);
        Map<String, double[]> out = new HashMap<>();
        try (MapOutputSorter s =
                new MapOutputSorter(tmm, new SplittableRandom(seed), bound, compactMin)) {
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
            buffer[0] = s.peakBufferedRecords();
            buffer[1] = s.compactions();
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

    /**
     * The compaction drops from memory only what a spill or the read would drop and draws no
     * randomness: the same seed keeps the same records, counted the same, with and without it (also
     * across a spill) - while the buffer stays within about 4 x the bound per group instead of
     * growing with the input (the buffer without it is the check that this can fail).
     */
    @Test
    void compactionKeepsTheSameSampleAndBoundsTheBuffer() throws IOException {
        long bound = 2_000;
        int big = 2_000_000;
        for (int spillAt : new int[] {-1, 800_000}) {
            int[] spills = new int[1];
            long[] off = new long[2];
            long[] on = new long[2];
            Map<String, double[]> without =
                    run(256L << 20, bound, 5, big, 1500, spills, spillAt, Long.MAX_VALUE, off);
            Map<String, double[]> with =
                    run(256L << 20, bound, 5, big, 1500, spills, spillAt, 1_000, on);
            for (String g : List.of("big", "small")) {
                double[] a = without.get(g);
                double[] b = with.get(g);
                assertEquals(a[0], b[0], g + ": kept");
                assertEquals(a[1], b[1], g + ": inserted");
                double[] sa = Arrays.copyOfRange(a, 2, a.length);
                double[] sb = Arrays.copyOfRange(b, 2, b.length);
                Arrays.sort(sa);
                Arrays.sort(sb);
                assertArrayEquals(sa, sb, g + ": the same records kept (spill at " + spillAt + ")");
            }
            long bounded = 4 * bound * 2 + 1_000;
            assertEquals(0, off[1], "no compaction when disabled");
            assertTrue(on[1] > 0, "compacted: " + on[1]);
            assertTrue(
                    on[0] <= bounded,
                    "buffer " + on[0] + " records with compaction, bound " + bounded);
            assertTrue(
                    spillAt >= 0 || off[0] > bounded,
                    "without compaction the buffer grows past the bound: " + off[0]);
            System.out.printf(
                    "[spark] pre-sample buffer, spill at %d: peak %d records without compaction,"
                            + " %d with (%d compactions)%n",
                    spillAt, off[0], on[0], on[1]);
        }
    }

    /**
     * The compaction slides records of different lengths (keys of 0-2 000 chars, and a few records
     * larger than a page, each on a page of its own) and keeps every byte: the kept records are the
     * same byte strings with and without it.
     */
    @Test
    void compactionKeepsRecordsOfAnyLengthIntact() throws IOException {
        long[][] without = keptRecordHashes(Long.MAX_VALUE);
        long[][] with = keptRecordHashes(500);
        int pageSized = 0;
        for (int g = 0; g < without.length; g++) {
            assertTrue(without[g].length > 0);
            assertArrayEquals(without[g], with[g], "group " + g + ": the same records kept");
            for (long h : with[g]) {
                pageSized += (h >>> 32) > MapOutputSorter.PAGE_BYTES ? 1 : 0;
            }
        }
        assertTrue(pageSized > 0, "some kept record is larger than a page");
    }

    /** Per group, the sorted (length, hash) of every kept record. */
    private static long[][] keptRecordHashes(long compactMin) throws IOException {
        TaskMemoryManager tmm = memory(256L << 20);
        SplittableRandom data = new SplittableRandom(17);
        long[][] out = new long[3][];
        try (MapOutputSorter s =
                new MapOutputSorter(tmm, new SplittableRandom(9), 300, compactMin)) {
            for (int i = 0; i < 120_000; i++) {
                double[] v = new double[i % 2_003 == 2_002 ? 150_000 : 1 + data.nextInt(4)];
                v[0] = i;
                String key = "k".repeat(data.nextInt(2_000));
                s.insert(i % 3, "g" + (i % 3), new ApproxRow(v, key), true);
            }
            assertTrue(compactMin == Long.MAX_VALUE || s.compactions() > 0, "compacted");
            s.read(
                    (partition, key, count, inserted, stream) -> {
                        long[] h = new long[(int) count];
                        byte[][] buf = new byte[1][];
                        for (int i = 0; i < count; i++) {
                            int len = stream.next(buf);
                            h[i] =
                                    ((long) len << 32)
                                            | (Arrays.hashCode(Arrays.copyOf(buf[0], len))
                                                    & 0xffffffffL);
                        }
                        Arrays.sort(h);
                        out[partition] = h;
                    });
        }
        assertEquals(0, tmm.getMemoryConsumptionForThisTask(), "memory returned on close");
        return out;
    }

    @Test
    void keepsBetweenTheBoundAndTwiceItAndSmallGroupsWhole() throws IOException {
        int[] spills = new int[1];
        long bound = 20_000;
        // without the compaction, so that the 2 MB grant makes it spill (with it the buffer of
        // about 4 x 20 000 records would fit)
        Map<String, double[]> out =
                run(2L << 20, bound, 3, 2_000_000, 1500, spills, -1, Long.MAX_VALUE, new long[2]);
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
