package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Sample sizes and reservoir capacities for every e_max a stream spec accepts. */
class SamplingPlanTest {
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
                1);
    }

    /**
     * Issue 29, item 5: below e_max ~6e-5 the planned sample of an unbounded cell passes 2^31 and
     * sizing the reservoir threw {@code ArithmeticException: integer overflow}. Any accepted e_max
     * works: a sample larger than the cell means the whole cell.
     */
    @Test
    void anyAcceptedEmaxSizesTheReservoirAndTakesWholeCellsWhenNoSampleSuffices() {
        for (double emax : new double[] {6e-5, 1e-5, 1e-9, 1e-300, Double.MIN_VALUE}) {
            SamplingPlan plan = new SamplingPlan(spec(emax));
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
        SamplingPlan plan = new SamplingPlan(spec(0.05));
        int n = plan.sampleSize("0", 1_000_000);
        assertTrue(n > 100 && n < 10_000, "n = " + n);
        assertTrue(plan.capacity("0") >= n, "the reservoir holds the sample");
    }
}
