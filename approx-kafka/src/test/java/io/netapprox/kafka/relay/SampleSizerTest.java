package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.StratumAccumulator;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Sample sizes and reservoir capacities for every e_max a stream spec accepts. */
class SampleSizerTest {
    private static StreamSpec spec(double emax) {
        return new StreamSpec(
                emax,
                Map.of(),
                0.95,
                1.5,
                1.0,
                60_000,
                1000,
                new Stratification(Stratification.Kind.PARTITION, null),
                false,
                1,
                ValueSource.DEFAULT);
    }

    /**
     * Issue 29, item 5: below e_max ~6e-5 the planned sample of an unbounded cell passes 2^31 and
     * sizing the reservoir threw {@code ArithmeticException: integer overflow}. Any accepted e_max
     * works: a sample larger than the cell means the whole cell.
     */
    @Test
    void anyAcceptedEmaxSizesTheReservoirAndTakesWholeCellsWhenNoSampleSuffices() {
        for (double emax : new double[] {6e-5, 1e-5, 1e-9, 1e-300, Double.MIN_VALUE}) {
            SampleSizer plan = new SampleSizer(spec(emax));
            int capacity = plan.capacity("0");
            assertTrue(capacity >= 1_000_000, emax + ": capacity " + capacity);
            assertTrue(capacity <= Integer.MAX_VALUE - 8, emax + ": capacity " + capacity);
            for (long count : new long[] {0, 1, 2, 1000, 1L << 40}) {
                int n = plan.sampleSize("0", count);
                assertEquals(Math.min(count, capacity), n, emax + ", cell of " + count);
                assertTrue(plan.held(n, count) <= capacity, emax + ": candidates fit");
            }
        }
    }

    @Test
    void aModerateEmaxStillSamples() {
        SampleSizer plan = new SampleSizer(spec(0.05));
        int n = plan.sampleSize("0", 1_000_000);
        assertTrue(n > 100 && n < 10_000, "n = " + n);
        assertTrue(plan.capacity("0") >= n, "the reservoir holds the sample");
    }

    private static StratumAccumulator lognormal(int n, double sigma, long seed) {
        java.util.Random rnd = new java.util.Random(seed);
        StratumAccumulator a = new StratumAccumulator();
        for (int i = 0; i < n; i++) {
            a.add(Math.exp(sigma * rnd.nextGaussian()));
        }
        return a;
    }

    /** Issue 29, item 8: a cell is planned from the spread of its own values. */
    @Test
    void aCellWhoseValuesAreKnownIsPlannedFromThem() {
        SampleSizer plan = new SampleSizer(spec(0.1));
        StratumAccumulator heavy = lognormal(5000, 1.5, 1); // cv about 2.9
        StratumAccumulator light = lognormal(5000, 0.5, 2); // cv about 0.53
        int assumed = plan.sampleSize("0", 5000);
        int measuredHeavy = plan.sampleSize("0", 5000, heavy);
        int measuredLight = plan.sampleSize("0", 5000, light);
        assertTrue(measuredHeavy > 1.5 * assumed, measuredHeavy + " vs " + assumed);
        assertTrue(measuredLight < assumed / 3, measuredLight + " vs " + assumed);
        StratumAccumulator constant = new StratumAccumulator();
        for (int i = 0; i < 5000; i++) {
            constant.add(3.0);
        }
        assertEquals(2, plan.sampleSize("0", 5000, constant));
        // values of only some records: the cell is planned from the assumed cv
        assertEquals(plan.sampleSize("0", 6000), plan.sampleSize("0", 6000, heavy));
    }

    @Test
    void theCvLimitIsTheLargestOneTheCapacityPlansForAtAnyCellSize() {
        SampleSizer plan = new SampleSizer(spec(0.1));
        for (int capacity : new int[] {plan.capacity("0"), 3000, 50_000}) {
            double limit = plan.cvLimit("0", capacity);
            for (int count : new int[] {10_000, 1_000_000}) {
                assertTrue(
                        plan.sampleSize("0", count, withCv(limit, count)) <= capacity,
                        capacity + " at " + count);
            }
            int huge = 10_000_000;
            assertTrue(
                    plan.sampleSize("0", huge, withCv(limit * 1.01, huge)) > capacity,
                    capacity + ": 1 % above the limit needs more");
        }
    }

    /** A reservoir grows for heavy tails, and refuses a value that would outgrow it. */
    @Test
    void aFullReservoirGrowsForItsValuesAndThenRefusesValuesItCouldNotPlanFor() {
        SampleSizer plan = new SampleSizer(spec(0.1));
        CellReservoir cell =
                new CellReservoir(0, "0", plan, true, new java.util.SplittableRandom(3));
        java.util.Random rnd = new java.util.Random(4);
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            double v = Math.exp(1.5 * rnd.nextGaussian());
            assertTrue(cell.admits(v));
            cell.offer(
                    v,
                    () ->
                            new SampledRecord(
                                    0,
                                    0,
                                    null,
                                    null,
                                    new byte[0],
                                    new org.apache.kafka.common.header.Header[0],
                                    -1));
        }
        int target = plan.sampleSize("0", n, cell.values());
        assertTrue(cell.size() > plan.capacity("0"), "grown: " + cell.size());
        assertTrue(target <= cell.size(), target + " from " + cell.size());
        assertTrue(target < n, "still a sample");
        assertTrue(!cell.admits(1e9), "a value that alone outweighs the cell is refused");
        assertTrue(cell.admits(Double.NaN), "not a number: planned from the assumed cv");
    }

    /** {@code count} values (even) of mean 1 and coefficient of variation {@code cv}. */
    private static StratumAccumulator withCv(double cv, int count) {
        // 1 - d and 1 + d, equally often: sample variance d^2 n / (n - 1)
        double d = cv * Math.sqrt((count - 1.0) / count);
        StratumAccumulator a = new StratumAccumulator();
        for (int i = 0; i < count; i++) {
            a.add(i % 2 == 0 ? 1 - d : 1 + d);
        }
        return a;
    }
}
