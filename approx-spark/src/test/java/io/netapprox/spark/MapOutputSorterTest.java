package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.memory.UnifiedMemoryManager;
import org.junit.jupiter.api.Test;

/**
 * The map side's sorter under a real Spark memory manager: with a grant far below the data it
 * spills, and every group still comes back whole (each record exactly once) and in uniformly random
 * order across the spills (records inserted early - all in the first spill - are spread evenly over
 * the output, not bunched at its start); its memory is returned and its spill files deleted.
 */
class MapOutputSorterTest {
    private static final int RECORDS = 300_000;

    private static TaskMemoryManager memory(long bytes) {
        SparkConf conf = new SparkConf(false).set("spark.buffer.pageSize", "1m");
        return new TaskMemoryManager(new UnifiedMemoryManager(conf, bytes, bytes / 2, 1), 0);
    }

    /**
     * A top-k key given in place (Spark's string, {@link MapOutputSorter#store(int, int, double[],
     * org.apache.spark.unsafe.types.UTF8String)}) is buffered as the same bytes as the same key
     * given as a {@code String} ({@link java.io.DataOutputStream#writeUTF}'s form): ASCII keys
     * copied as they are, keys with NUL, a two- or three-byte character or a supplementary one (4
     * bytes in UTF-8, 6 in modified UTF-8) through the string; the same seed gives the same output,
     * byte for byte, spilled or not, and every key reads back as itself.
     */
    @Test
    void aKeyInPlaceIsBufferedAsTheSameBytesAsItsString() throws IOException {
        String[] keys = {
            "zone-17-pppp", "", "nul\u0000inside", "caf\u00e9", "\u20ac5", "x\ud83d\ude00y"
        };
        for (long grant : new long[] {64L << 20, 2L << 20}) {
            List<String> asString = new ArrayList<>();
            List<String> inPlace = new ArrayList<>();
            int[] spills = new int[2];
            spills[0] = keyedThrough(memory(grant), keys, false, asString);
            spills[1] = keyedThrough(memory(grant), keys, true, inPlace);
            assertEquals(asString, inPlace, "grant " + grant + ": the same records, same order");
            assertEquals(spills[0], spills[1]);
            assertTrue(
                    grant > (8L << 20) ? spills[0] == 0 : spills[0] > 0, "spilled: " + spills[0]);
        }
    }

    /**
     * Inserts 60 000 records with a pre-sample of 2 000 per group (value i, key {@link #key}), the
     * key in place or as a string; adds every output record (group and bytes, hex; each checked to
     * read back as its key) to out; returns the spills.
     */
    private static int keyedThrough(
            TaskMemoryManager tmm, String[] keys, boolean inPlace, List<String> out)
            throws IOException {
        try (MapOutputSorter s = new MapOutputSorter(tmm, new SplittableRandom(5), 2_000)) {
            for (int i = 0; i < 60_000; i++) {
                int gid = s.group("g=" + i % 3, i % 2);
                int level = s.admit(gid);
                if (level < 0) {
                    continue;
                }
                String key = key(keys, i);
                double[] v = {i, -i};
                if (inPlace) {
                    s.store(
                            gid,
                            level,
                            v,
                            org.apache.spark.unsafe.types.UTF8String.fromString(key));
                } else {
                    s.store(gid, level, v, key);
                }
            }
            int spills = s.spillCount();
            s.read(
                    (partition, group, count, inserted, stream) -> {
                        byte[][] buf = new byte[1][];
                        for (int i = 0; i < count; i++) {
                            int len = stream.next(buf);
                            ApproxRow r =
                                    ApproxRow.read(
                                            new DataInputStream(
                                                    new ByteArrayInputStream(buf[0], 0, len)),
                                            2,
                                            true);
                            String expected = key(keys, (int) r.values[0]);
                            assertEquals(expected, r.key, "the key reads back as itself");
                            out.add(
                                    group
                                            + " "
                                            + java.util.HexFormat.of()
                                                    .formatHex(
                                                            java.util.Arrays.copyOf(buf[0], len)));
                        }
                    });
            return spills;
        }
    }

    /** Record i's key: keys[i % n], up to 299 more chars, and i but for every 7th record. */
    private static String key(String[] keys, int i) {
        return keys[i % keys.length]
                + "p".repeat(i % 300)
                + (i % 7 == 0 ? "" : Integer.toString(i));
    }

    /** Inserts RECORDS records, record i of group "g=" + i % 3, value i; returns the output. */
    private static List<double[]> sortThrough(TaskMemoryManager tmm, long grant, int[] spills)
            throws IOException {
        List<double[]> groups = new ArrayList<>();
        List<String> order = new ArrayList<>();
        try (MapOutputSorter s = new MapOutputSorter(tmm, new SplittableRandom(7))) {
            for (int i = 0; i < RECORDS; i++) {
                int g = i % 3;
                s.insert(g == 2 ? 0 : 1, "g=" + g, new ApproxRow(new double[] {i}, null), false);
            }
            spills[0] = s.spillCount();
            assertTrue(
                    s.peakMemory() > 0 && s.peakMemory() <= grant,
                    "peak " + s.peakMemory() + " within the grant " + grant);
            s.read(
                    (partition, key, count, inserted, stream) -> {
                        order.add(partition + ":" + key);
                        double[] v = new double[(int) count];
                        byte[][] buf = new byte[1][];
                        for (int i = 0; i < count; i++) {
                            int len = stream.next(buf);
                            v[i] = MapOutputSorterTest.firstValue(buf[0], len);
                        }
                        groups.add(v);
                    });
            assertTrue(tmm.getMemoryConsumptionForThisTask() > 0 || spills[0] > 0);
        }
        assertEquals(0, tmm.getMemoryConsumptionForThisTask(), "memory returned on close");
        assertEquals(List.of("0:g=2", "1:g=0", "1:g=1"), order, "partition, then key order");
        return groups;
    }

    private static void checkWholeAndShuffled(List<double[]> groups) {
        BitSet seen = new BitSet(RECORDS);
        for (double[] g : groups) {
            for (double x : g) {
                int i = (int) x;
                assertTrue(!seen.get(i), "record " + i + " came back twice");
                seen.set(i);
            }
        }
        assertEquals(RECORDS, seen.cardinality(), "every record came back");
        // the records inserted first (the earliest 10% of each group) must be spread over the
        // group's output: among its first tenth, about a tenth of them (binomial, +-5 SD)
        for (double[] g : groups) {
            int n = g.length;
            int tenth = n / 10;
            int early = 0;
            for (int i = 0; i < tenth; i++) {
                if (g[i] < RECORDS / 10.0) {
                    early++;
                }
            }
            double mean = tenth * 0.1;
            double sd = Math.sqrt(tenth * 0.1 * 0.9);
            assertTrue(
                    Math.abs(early - mean) < 5 * sd,
                    "early records in the first tenth: " + early + ", expected " + mean);
        }
    }

    @Test
    void spillsUnderASmallGrantAndKeepsEveryGroupWholeAndRandom() throws IOException {
        int[] spills = new int[1];
        List<double[]> groups = sortThrough(memory(2L << 20), 2L << 20, spills);
        assertTrue(spills[0] >= 2, "spilled under a 2 MB grant: " + spills[0] + " spills");
        checkWholeAndShuffled(groups);
        System.out.printf(
                "[spark] sorter: %d records through a 2 MB grant, %d spills%n", RECORDS, spills[0]);
    }

    @Test
    void staysInMemoryUnderALargeGrant() throws IOException {
        int[] spills = new int[1];
        List<double[]> groups = sortThrough(memory(512L << 20), 512L << 20, spills);
        assertEquals(0, spills[0]);
        checkWholeAndShuffled(groups);
    }

    /**
     * The writer may stop reading a group early (it writes a prefix of the random order): the
     * group's other records, in memory and in every spill, are skipped and the next group starts at
     * its own records.
     */
    @Test
    void aGroupReadOnlyInPartSkipsToTheNextGroup() throws IOException {
        TaskMemoryManager tmm = memory(2L << 20);
        List<String> order = new ArrayList<>();
        try (MapOutputSorter s = new MapOutputSorter(tmm, new SplittableRandom(11))) {
            for (int i = 0; i < RECORDS; i++) {
                int g = i % 3;
                s.insert(g == 2 ? 0 : 1, "g=" + g, new ApproxRow(new double[] {i}, null), false);
            }
            assertTrue(s.spillCount() > 0, "spilled");
            s.read(
                    (partition, key, count, inserted, stream) -> {
                        order.add(key);
                        int g = key.charAt(2) - '0';
                        byte[][] buf = new byte[1][];
                        for (int i = 0; i < 100; i++) { // 100 of the group's 100,000
                            int len = stream.next(buf);
                            double x = MapOutputSorterTest.firstValue(buf[0], len);
                            assertEquals(g, (int) x % 3, key + ": a record of another group");
                        }
                    });
        }
        assertEquals(List.of("g=2", "g=0", "g=1"), order);
    }

    /** The first value of a record as the sorter wrote it (one value, no key). */
    static double firstValue(byte[] record, int len) throws IOException {
        return ApproxRow.read(
                        new DataInputStream(new ByteArrayInputStream(record, 0, len)), 1, false)
                .values[0];
    }
}
