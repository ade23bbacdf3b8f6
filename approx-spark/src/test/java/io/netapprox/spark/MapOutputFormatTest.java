package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.ExactSum;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The group table (a segment's index and the transfer's DATA_RESPONSE) carries each share's exact
 * partials and non-finite counts to the reducer unchanged; a table from the network that is not one
 * is refused with the field named, never half-read.
 */
class MapOutputFormatTest {

    static MapOutputFormat.Group group(
            String key, long records, long offset, ExactSum[] partials, long[] nf) {
        return new MapOutputFormat.Group(key, 4, 10, records, 0.5, 0.05, offset, 64, nf, partials);
    }

    static byte[] table(MapOutputFormat.Group... groups) throws IOException {
        return MapOutputFormat.tableBytes(new MapOutputFormat.Table(2, false, List.of(groups)));
    }

    @Test
    void partialsAndNonFiniteCountsRoundTrip() throws IOException {
        ExactSum s = new ExactSum();
        for (int i = 0; i < 40; i++) {
            s.add(1e16 + i).add(-1e16).add(0.1 * i);
        }
        byte[] bytes =
                table(
                        group(
                                "a=1",
                                120,
                                0,
                                new ExactSum[] {s, null},
                                new long[] {0, 0, 0, 2, 1, 0}),
                        group("a=2", 40, 64, new ExactSum[2], new long[6]));
        MapOutputFormat.Table t = MapOutputFormat.readTable(bytes, -1);
        MapOutputFormat.Group a = t.groups().get(0);
        assertEquals(s.value(), a.partials()[0].value());
        assertEquals(s.count(), a.partials()[0].count());
        assertEquals(s.roundingBound(), a.partials()[0].roundingBound());
        assertNull(a.partials()[1]);
        assertArrayEquals(new long[] {2, 1, 0}, a.nonFinite(1));
        MapOutputFormat.Group b = t.groups().get(1);
        assertTrue(Arrays.stream(b.partials()).allMatch(p -> p == null));
        assertEquals(a.partials()[0].value(), a.withMsr(0.2).partials()[0].value());
    }

    @Test
    void corruptTablesAreRefused() throws IOException {
        ExactSum s = new ExactSum().add(1).add(2);
        byte[] good = table(group("a=1", 10, 0, new ExactSum[] {s, null}, new long[6]));
        MapOutputFormat.readTable(good, -1);
        // the flags byte follows key, messages, population, records, msr, e_max, offset, length
        int flags = 4 + 4 + 1 + 4 + (2 + 3) + 4 + 8 + 8 + 8 + 8 + 8 + 8;
        assertEquals(2, good[flags]);
        byte[] unknownFlag = good.clone();
        unknownFlag[flags] = 6;
        assertMessage(unknownFlag, "flags");
        // a partial claiming more values than the share has records
        ExactSum eleven = new ExactSum();
        for (int i = 0; i < 11; i++) {
            eleven.add(i);
        }
        byte[] tooMany = table(group("a=1", 10, 0, new ExactSum[] {eleven, null}, new long[6]));
        assertMessage(tooMany, "exact partial of 11 values of 10 records");
        assertThrows(
                IOException.class,
                () -> MapOutputFormat.readTable(Arrays.copyOf(good, good.length - 3), -1));
    }

    static void assertMessage(byte[] table, String part) {
        IOException e = assertThrows(IOException.class, () -> MapOutputFormat.readTable(table, -1));
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
