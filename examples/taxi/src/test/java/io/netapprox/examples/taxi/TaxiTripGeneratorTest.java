package io.netapprox.examples.taxi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

class TaxiTripGeneratorTest {

    private static List<TaxiTrip> all(long rows, int partitions, long seed) {
        List<TaxiTrip> out = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            TaxiTripGenerator.partition(rows, partitions, p, seed).forEachRemaining(out::add);
        }
        return out;
    }

    @Test
    void sameSeedSameTripsAndEveryRowOnce() {
        List<TaxiTrip> a = all(10_001, 7, 3);
        assertEquals(10_001, a.size());
        assertEquals(a, all(10_001, 7, 3));
        assertTrue(!a.equals(all(10_001, 7, 4)));
    }

    @Test
    void tripsHaveTheDocumentedShape() {
        List<TaxiTrip> t = all(200_000, 4, 1);
        long[] perHour = new long[24];
        long tail = 0;
        for (TaxiTrip x : t) {
            assertTrue(x.hour() >= 0 && x.hour() < 24);
            assertTrue(x.zone() >= 1 && x.zone() <= TaxiTripGenerator.ZONES);
            assertTrue(x.distance() >= 0 && x.distance() <= 200);
            assertTrue(
                    x.fare() >= 3.0 + 2.5 * x.distance() - 0.01, "fare grows with distance: " + x);
            perHour[x.hour()]++;
            if (x.distance() >= 8) {
                tail++;
            }
        }
        // night hours 2-5 are rare strata (~0.5% each), the evening peak ~7%: seeded, so exact
        // bounds are safe
        for (int h = 2; h <= 5; h++) {
            assertTrue(perHour[h] < 0.01 * t.size(), "hour " + h + ": " + perHour[h]);
        }
        assertTrue(perHour[18] > 0.06 * t.size() && perHour[18] < 0.08 * t.size());
        assertTrue(
                tail > 0.02 * t.size() && tail < 0.08 * t.size(), "a long-distance tail: " + tail);
    }

    @Test
    void rejectsBadPartitions() {
        assertThrows(
                IllegalArgumentException.class, () -> TaxiTripGenerator.partition(10, 2, 2, 1));
        assertThrows(
                IllegalArgumentException.class, () -> TaxiTripGenerator.partition(-1, 2, 0, 1));
        Iterator<TaxiTrip> empty = TaxiTripGenerator.partition(0, 1, 0, 1);
        assertTrue(!empty.hasNext());
    }
}
