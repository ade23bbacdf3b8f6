package io.netapprox.core.job;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class IdSetTest {

    private static List<int[]> ranges(IdSet s) {
        List<int[]> out = new ArrayList<>();
        s.forEachRange((f, l) -> out.add(new int[] {f, l}));
        return out;
    }

    @Test
    void rangesAndBitmapsDescribeTheSameSets() {
        SplittableRandom r = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            int base = r.nextInt(1000);
            int span = 1 + r.nextInt(3000);
            long[] words = new long[(span + 63) / 64];
            List<Integer> ids = new ArrayList<>();
            double density = r.nextDouble();
            for (int i = 0; i < span; i++) {
                if (r.nextDouble() < density) {
                    words[i >>> 6] |= 1L << (i & 63);
                    ids.add(base + i);
                }
            }
            IdSet fromBitmap = IdSet.ofBitmap(base, span, words);
            IdSet fromIds = IdSet.of(ids.stream().mapToInt(Integer::intValue).toArray());
            assertEquals(fromIds, fromBitmap);
            assertEquals(ids.size(), fromBitmap.cardinality());
            List<int[]> rs = ranges(fromBitmap);
            assertEquals(rs.size(), fromBitmap.rangeCount());
            int[] f = rs.stream().mapToInt(a -> a[0]).toArray();
            int[] l = rs.stream().mapToInt(a -> a[1]).toArray();
            assertEquals(fromIds, IdSet.ofRanges(f, l));
            if (!ids.isEmpty()) {
                assertEquals(ids.get(0), fromBitmap.first());
                assertEquals(ids.get(ids.size() - 1), fromBitmap.last());
                assertEquals(ids.get(ids.size() - 1), fromIds.last());
            }
        }
    }

    @Test
    void rangesAreMaximalRuns() {
        IdSet s = IdSet.of(1, 2, 3, 7, 9, 10);
        List<int[]> rs = ranges(s);
        assertEquals(3, rs.size());
        assertArrayEquals(new int[] {1, 3}, rs.get(0));
        assertArrayEquals(new int[] {7, 7}, rs.get(1));
        assertArrayEquals(new int[] {9, 10}, rs.get(2));
        assertThrows(NoSuchElementException.class, () -> IdSet.empty().first());
        assertTrue(IdSet.ofBitmap(5, 3, new long[] {0}).isEmpty());
    }

    @Test
    void rejectsMalformedRangesAndBitmaps() {
        assertThrows(
                IllegalArgumentException.class,
                () -> IdSet.ofRanges(new int[] {0, 5}, new int[] {4, 6}));
        assertThrows(
                IllegalArgumentException.class,
                () -> IdSet.ofRanges(new int[] {5, 0}, new int[] {6, 1}));
        assertThrows(
                IllegalArgumentException.class,
                () -> IdSet.ofRanges(new int[] {-1}, new int[] {1}));
        assertThrows(
                IllegalArgumentException.class, () -> IdSet.ofRanges(new int[] {3}, new int[] {2}));
        assertThrows(IllegalArgumentException.class, () -> IdSet.ofBitmap(0, 0, new long[0]));
        assertThrows(IllegalArgumentException.class, () -> IdSet.ofBitmap(0, 3, new long[] {8}));
        assertThrows(IllegalArgumentException.class, () -> IdSet.ofBitmap(0, 65, new long[] {1}));
        assertThrows(
                IllegalArgumentException.class,
                () -> IdSet.ofBitmap(Integer.MAX_VALUE, 2, new long[] {1}));
    }
}
