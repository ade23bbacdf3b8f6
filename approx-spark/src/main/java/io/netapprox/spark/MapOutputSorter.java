package io.netapprox.spark;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.spark.SparkEnv;
import org.apache.spark.memory.MemoryConsumer;
import org.apache.spark.memory.MemoryMode;
import org.apache.spark.memory.TaskMemoryManager;
import org.apache.spark.storage.BlockId;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Tuple2;

/**
 * The map side's record buffer of an approximate shuffle, bounded by Spark's memory manager:
 * records tagged by group are held in on-heap pages granted by the task's {@link
 * TaskMemoryManager}; when a grant is refused (or another consumer of the task needs the memory)
 * the buffer is spilled to a temporary file and emptied. Read back group by group - groups ordered
 * by (reduce partition, key) - each group's records in uniformly random order:
 *
 * <ul>
 *   <li>a group's records in memory are permuted (Fisher-Yates) when they are spilled, and one step
 *       per record as they are read (the part of a group that is read costs what is read);
 *   <li>a spill writes every group's records, permuted, in the group order;
 *   <li>reading merges a group's runs (one per spill that has it, plus memory) by a random riffle:
 *       the next record comes from a run with probability proportional to the records it has left.
 *       A uniformly random interleaving of uniformly random permutations is a uniformly random
 *       permutation of the union, so every prefix of a group is a simple random sample of it.
 * </ul>
 *
 * <p><b>Pre-sample</b> ({@code perGroup > 0}, {@code spark.approx.mapSampleRecords}): each record
 * has a level {@code l} with {@code P(l >= L) = 2^-L} (the leading zeros of a random long,
 * independent of its content; a record below the group's threshold is skipped by a geometric gap
 * without a draw, {@link #admit}). A group keeps the records whose level is at least its threshold
 * {@code L_g}, the smallest {@code L} with fewer than {@code perGroup} of the group's records at
 * level {@code >= L + 1}: between {@code perGroup} and about twice as many records (all of a group
 * with fewer). The threshold only rises as records arrive, so a record below the current threshold
 * is never buffered, buffered records that fall below it are dropped when spilled or read, and the
 * final kept set is exactly {@code {level >= L_g}} for the final {@code L_g}. {@code L_g} is a
 * symmetric function of the group's i.i.d. levels, so given its size the kept set is a uniformly
 * random subset of the group's records: a simple random sample, read back in random order like a
 * whole group. Records below a risen threshold are dropped from memory when they reach half the
 * buffer ({@link #compact}: no randomness is drawn, so the kept set is unchanged), so the buffer
 * holds at most about {@code 4 perGroup} records per group (and {@link #COMPACT_MIN_RECORDS} more),
 * whatever the input size - without the compaction it grew as {@code perGroup (1 + ln(records /
 * perGroup))}.
 *
 * <p>Memory: the pages plus 8 bytes per buffered record (its address) plus a few words per group
 * (and 64 level counters under the pre-sample); the groups themselves (key, counts) stay in memory,
 * so the bound is per group, not per record. Spills go through Spark's {@code SerializerManager}
 * (spill compression and I/O encryption as configured). Not thread-safe: the task's thread inserts
 * and reads; {@link #spill(long, MemoryConsumer)} is called by the memory manager on that thread.
 */
final class MapOutputSorter extends MemoryConsumer implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(MapOutputSorter.class);

    /** Page size (a record larger than a page gets a page of its own). */
    static final int PAGE_BYTES = 1 << 20;

    /** Memory is requested in steps of this many bytes at least. */
    static final long GRANT_STEP = 4L << 20;

    /**
     * The pre-sample's buffer is not compacted below this many records (a scan is not worth it).
     */
    static final long COMPACT_MIN_RECORDS = 1 << 16;

    private final SplittableRandom rnd;
    private final long perGroup;
    private final Map<String, Integer> ids = new HashMap<>();
    private final List<String> keys = new ArrayList<>();
    private int[] partitionOf = new int[16];

    /** Per group: records inserted. */
    private long[] records = new long[16];

    /** Per group: records buffered or in spills (inserted and not dropped). */
    private long[] stored = new long[16];

    // pre-sample, per group: the threshold level, the records seen at each level, and how many of
    // them are at a level above the threshold
    private int[] threshold = new int[16];
    private long[][] levelCounts = new long[16][];
    private long[] aboveThreshold = new long[16];

    // per group: the records still to come below the threshold before the next one at or above it
    // (a geometric gap: a record the pre-sample drops draws nothing, see admit)
    private long[] skip = new long[16];

    /** {@code log(1 - 2^-t)} per threshold t (the gap's parameter; t = 0 has no gap). */
    private static final double[] LOG_BELOW = new double[64];

    static {
        for (int t = 1; t < 64; t++) {
            LOG_BELOW[t] = Math.log1p(-Math.scalb(1.0, -t));
        }
    }

    // in memory: pages of [int length][record bytes], and per group the records' addresses
    // (page << 32 | offset)
    private final List<byte[]> pages = new ArrayList<>();
    private int pageUsed;
    private long[][] addresses = new long[16][];
    private int[] buffered = new int[16];
    private long bufferedRecords;
    private long footprint;
    // the pre-sample's buffer is compacted when it reaches this many records (twice what the last
    // compaction left, at least compactMin): amortised O(1) per record
    private final long compactMin;
    private long compactAt;
    private long peakBufferedRecords;
    private int compactions;

    private final List<File> spills = new ArrayList<>();
    private final List<BlockId> spillIds = new ArrayList<>();
    private long spilledBytes;
    private long memorySpilled;
    private long peakMemory;
    private boolean reading;
    private final Scratch scratch = new Scratch();
    private final DataOutputStream scratchOut = new DataOutputStream(scratch);

    /** Keeps every record. */
    MapOutputSorter(TaskMemoryManager memory, SplittableRandom rnd) {
        this(memory, rnd, 0);
    }

    /**
     * @param perGroup the pre-sample's size per group (see the class comment); 0 keeps every record
     */
    MapOutputSorter(TaskMemoryManager memory, SplittableRandom rnd, long perGroup) {
        this(memory, rnd, perGroup, COMPACT_MIN_RECORDS);
    }

    /**
     * @param compactMin the fewest buffered records the pre-sample's buffer is compacted at ({@link
     *     Long#MAX_VALUE}: never; tests use small values)
     */
    MapOutputSorter(
            TaskMemoryManager memory, SplittableRandom rnd, long perGroup, long compactMin) {
        super(memory, memory.pageSizeBytes(), MemoryMode.ON_HEAP);
        if (perGroup < 0) {
            throw new IllegalArgumentException("perGroup must be >= 0, got " + perGroup);
        }
        if (compactMin < 1) {
            throw new IllegalArgumentException("compactMin must be >= 1, got " + compactMin);
        }
        this.rnd = rnd;
        this.perGroup = perGroup;
        this.compactMin = compactMin;
        this.compactAt = compactMin;
    }

    /**
     * Takes one record of {@code group} (whose reduce partition is {@code partition}): buffers it,
     * unless the group's pre-sample already leaves it out. ({@link #group}, {@link #admit} and
     * {@link #store} in one.)
     */
    void insert(int partition, String group, ApproxRow row, boolean withKey) throws IOException {
        int gid = group(group, partition);
        int level = admit(gid);
        if (level >= 0) {
            store(gid, level, row.values, withKey ? (row.key == null ? "" : row.key) : null);
        }
    }

    /**
     * The sorter's id of {@code group} (whose reduce partition is {@code partition}), made on its
     * first call: the writer looks a group up once, not per record.
     */
    int group(String group, int partition) {
        if (reading) {
            throw new IllegalStateException("insert after reading started");
        }
        return groupId(group, partition);
    }

    /**
     * Counts one record of group {@code gid} and draws its pre-sample level: the level when the
     * record is to be stored ({@link #store}, before the next call), -1 when the pre-sample leaves
     * it out - then two counter updates are all the record costs. Without a pre-sample every record
     * is stored (level 0).
     *
     * <p>Under threshold {@code t} a record is at level {@code >= t} with probability {@code p =
     * 2^-t}, independently, so the records until the next such one are a geometric gap ({@code
     * P(gap = k) = (1 - p)^k p}): drawn once, after a record at or above the threshold (the
     * threshold only moves then), and the records in it are dropped without a draw (nothing reads
     * the counts of levels below the threshold). The record after the gap draws its level given
     * that it is {@code >= t}: {@code t} plus the leading zeros of a random long. The same
     * distribution of kept sets as one level drawn per record; the same draws while the threshold
     * is 0.
     */
    int admit(int gid) {
        if (reading) {
            throw new IllegalStateException("insert after reading started");
        }
        records[gid]++;
        if (perGroup == 0) {
            return 0;
        }
        if (skip[gid] > 0) {
            skip[gid]--;
            return -1;
        }
        int t = threshold[gid];
        int level = t + Long.numberOfLeadingZeros(rnd.nextLong());
        if (level > 63) {
            level = 63;
        }
        long[] c = levelCounts[gid];
        c[level]++;
        if (level > t) {
            aboveThreshold[gid]++;
        }
        while (aboveThreshold[gid] >= perGroup && t < 63) {
            t++;
            aboveThreshold[gid] -= c[t];
        }
        threshold[gid] = t;
        if (t > 0) {
            // 1 - nextDouble() is in (0, 1]: a gap of 0 when it is 1; the cast saturates
            skip[gid] = (long) (Math.log(1.0 - rnd.nextDouble()) / LOG_BELOW[t]);
        }
        return level < t ? -1 : level;
    }

    /**
     * Buffers the record {@link #admit} just let in: its values and, with a top-k column, its key
     * ({@code topKey} non-null; written as {@link ApproxRow#write} writes it).
     */
    void store(int gid, int level, double[] values, String topKey) throws IOException {
        buffer(gid, encode(level, values, topKey));
    }

    /**
     * As {@link #store(int, int, double[], String)}, the top-k key given as Spark's string (read in
     * place from the input row): its bytes are copied as they are when they are what {@link
     * java.io.DataOutputStream#writeUTF} writes of it (ASCII without NUL, the common case: no
     * {@code String} is made), else it is converted as before.
     */
    void store(int gid, int level, double[] values, UTF8String topKey) throws IOException {
        buffer(gid, encode(level, values, topKey));
    }

    /** Buffers the record just encoded ({@link #encoded}, {@code length} bytes) of group gid. */
    private void buffer(int gid, int length) throws IOException {
        // reserve before touching the buffer: a refused grant spills (and empties) it
        long need = 0;
        if (pages.isEmpty() || pageUsed + 4 + length > pages.get(pages.size() - 1).length) {
            need += Math.max(PAGE_BYTES, 4 + length);
        }
        long[] a = addresses[gid];
        if (a == null || buffered[gid] == a.length) {
            need += 8L * Math.max(8, a == null ? 0 : a.length);
        }
        reserve(need);
        append(gid, length);
        stored[gid]++;
        peakBufferedRecords = Math.max(peakBufferedRecords, bufferedRecords);
        if (perGroup > 0 && bufferedRecords >= compactAt) {
            compact();
        }
    }

    /**
     * Drops group {@code g}'s buffered records that fell below its risen pre-sample threshold (from
     * its addresses, in place, the others in their order); returns how many it keeps.
     */
    private int dropBelowThreshold(int g) {
        long[] a = addresses[g];
        int keep = 0;
        for (int i = 0; i < buffered[g]; i++) {
            if (levelAt(a[i]) >= threshold[g]) {
                a[keep++] = a[i];
            }
        }
        stored[g] -= buffered[g] - keep;
        bufferedRecords -= buffered[g] - keep;
        buffered[g] = keep;
        return keep;
    }

    /**
     * Drops the buffered records below their group's risen pre-sample threshold (those a spill or
     * the read would drop) and slides the others down over the freed bytes, returning the memory of
     * the pages left empty. Each group's addresses are in insertion order, i.e. increasing (the
     * buffer is permuted only when spilled, and emptied then), so a merge of the groups by address
     * visits the records in page order, and each moves to a place at or before its own. No
     * randomness is drawn: the kept set and everything after are as without the compaction.
     */
    private void compact() {
        int groups = keys.size();
        long live = 0;
        for (int g = 0; g < groups; g++) {
            live += dropBelowThreshold(g);
        }
        compactAt = Math.max(compactMin, 2 * live);
        compactions++;
        // merge the groups by their next address (a binary min-heap of group ids keyed by that
        // address: addresses are distinct, so the visiting order is the pages' order whatever the
        // heap's ties); slide each record to the write cursor
        int[] next = new int[groups];
        long[] head = new long[groups];
        int[] heap = new int[groups];
        int size = 0;
        for (int g = 0; g < groups; g++) {
            if (buffered[g] > 0) {
                head[g] = addresses[g][0];
                heap[size] = g;
                siftUp(heap, size++, head);
            }
        }
        int wPage = 0;
        int wAt = 0;
        while (size > 0) {
            int g = heap[0];
            long a = head[g];
            int rPage = (int) (a >>> 32);
            int rAt = (int) a;
            byte[] from = pages.get(rPage);
            int length = 4 + lengthAt(from, rAt);
            if (wPage < rPage && wAt + length > pages.get(wPage).length) {
                // the next page that holds it, at its start (its own page does, at or before it)
                wPage++;
                wAt = 0;
                while (wPage < rPage && length > pages.get(wPage).length) {
                    wPage++;
                }
            }
            System.arraycopy(from, rAt, pages.get(wPage), wAt, length); // overlap-safe
            addresses[g][next[g]] = ((long) wPage << 32) | wAt;
            wAt += length;
            if (++next[g] < buffered[g]) {
                head[g] = addresses[g][next[g]];
            } else {
                heap[0] = heap[--size];
            }
            siftDown(heap, size, head);
        }
        if (live == 0) {
            pages.clear();
            pageUsed = 0;
        } else {
            pages.subList(wPage + 1, pages.size()).clear();
            pageUsed = wAt;
        }
        // footprint: the pages kept and the address arrays, shrunk to twice what they hold
        long bytes = 0;
        for (byte[] p : pages) {
            bytes += p.length;
        }
        for (int g = 0; g < groups; g++) {
            long[] a = addresses[g];
            if (a != null && a.length > 8 && a.length > 4 * buffered[g]) {
                addresses[g] = Arrays.copyOf(a, Math.max(8, 2 * buffered[g]));
            }
            bytes += addresses[g] == null ? 0 : 8L * addresses[g].length;
        }
        footprint = bytes;
        long excess = getUsed() - footprint;
        if (excess > GRANT_STEP) {
            freeMemory(excess - GRANT_STEP);
        }
    }

    /** Moves {@code heap[i]} up to its place in the min-heap keyed by {@code key[group]}. */
    private static void siftUp(int[] heap, int i, long[] key) {
        int g = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (key[heap[parent]] <= key[g]) {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = g;
    }

    /** Moves {@code heap[0]} down to its place in the min-heap of {@code size} groups. */
    private static void siftDown(int[] heap, int size, long[] key) {
        if (size == 0) {
            return;
        }
        int g = heap[0];
        int i = 0;
        while (true) {
            int c = 2 * i + 1;
            if (c >= size) {
                break;
            }
            if (c + 1 < size && key[heap[c + 1]] < key[heap[c]]) {
                c++;
            }
            if (key[heap[c]] >= key[g]) {
                break;
            }
            heap[i] = heap[c];
            i = c;
        }
        heap[i] = g;
    }

    /** Records of group {@code gid} its pre-sample keeps (all, without one). */
    private long kept(int gid) {
        if (perGroup == 0) {
            return records[gid];
        }
        int t = threshold[gid];
        return aboveThreshold[gid] + levelCounts[gid][t];
    }

    private int groupId(String group, int partition) {
        Integer id = ids.get(group);
        if (id != null) {
            return id;
        }
        int gid = keys.size();
        ids.put(group, gid);
        keys.add(group);
        if (gid == partitionOf.length) {
            int n = gid * 2;
            partitionOf = Arrays.copyOf(partitionOf, n);
            records = Arrays.copyOf(records, n);
            stored = Arrays.copyOf(stored, n);
            threshold = Arrays.copyOf(threshold, n);
            levelCounts = Arrays.copyOf(levelCounts, n);
            aboveThreshold = Arrays.copyOf(aboveThreshold, n);
            skip = Arrays.copyOf(skip, n);
            addresses = Arrays.copyOf(addresses, n);
            buffered = Arrays.copyOf(buffered, n);
        }
        partitionOf[gid] = partition;
        if (perGroup > 0) {
            levelCounts[gid] = new long[64];
        }
        return gid;
    }

    /** Makes {@code bytes} more of footprint fit the grant, spilling if the grant is refused. */
    private void reserve(long bytes) throws IOException {
        if (bytes == 0 || footprint + bytes <= getUsed()) {
            return;
        }
        long want = Math.max(GRANT_STEP, footprint + bytes - getUsed());
        long got = acquireMemory(want); // may call spill(..., this): the buffer is then empty
        peakMemory = Math.max(peakMemory, getUsed());
        if (footprint + bytes <= getUsed()) {
            return;
        }
        if (got < want && bufferedRecords > 0) {
            spillToDisk();
            if (footprint + bytes > getUsed()) {
                acquireMemory(Math.max(GRANT_STEP, footprint + bytes - getUsed()));
                peakMemory = Math.max(peakMemory, getUsed());
            }
        }
        // Still short with an empty buffer: proceed (a task must make progress with one page).
    }

    private void append(int gid, int length) {
        if (pages.isEmpty() || pageUsed + 4 + length > pages.get(pages.size() - 1).length) {
            byte[] p = new byte[Math.max(PAGE_BYTES, 4 + length)];
            pages.add(p);
            pageUsed = 0;
            footprint += p.length;
        }
        long[] a = addresses[gid];
        if (a == null || buffered[gid] == a.length) {
            int n = a == null ? 8 : a.length * 2;
            addresses[gid] = a == null ? new long[n] : Arrays.copyOf(a, n);
            footprint += 8L * (n - (a == null ? 0 : a.length));
        }
        int page = pages.size() - 1;
        byte[] p = pages.get(page);
        int at = pageUsed;
        p[at] = (byte) (length >>> 24);
        p[at + 1] = (byte) (length >>> 16);
        p[at + 2] = (byte) (length >>> 8);
        p[at + 3] = (byte) length;
        System.arraycopy(encoded, 0, p, at + 4, length);
        pageUsed = at + 4 + length;
        addresses[gid][buffered[gid]++] = ((long) page << 32) | at;
        bufferedRecords++;
    }

    private static final java.lang.invoke.VarHandle LONG_BE =
            java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
                    long[].class, java.nio.ByteOrder.BIG_ENDIAN);

    /** The record being inserted, encoded ({@link #encode}). */
    private byte[] encoded = new byte[256];

    /**
     * Encodes a record into {@link #encoded} - its level byte, then {@link ApproxRow#write}'s form
     * - and returns its length. Without a key the values are written in place (the per-record hot
     * path: no stream), with the bytes {@link java.io.DataOutputStream#writeDouble} writes.
     */
    private int encode(int level, double[] values, String topKey) throws IOException {
        if (topKey != null) {
            scratch.reset();
            scratchOut.writeByte(level);
            for (double v : values) {
                scratchOut.writeDouble(v);
            }
            scratchOut.writeUTF(topKey);
            scratchOut.flush();
            int length = scratch.size();
            if (encoded.length < length) {
                encoded = new byte[Math.max(length, 2 * encoded.length)];
            }
            System.arraycopy(scratch.buffer(), 0, encoded, 0, length);
            return length;
        }
        int length = 1 + Double.BYTES * values.length;
        encodeValues(level, values, length);
        return length;
    }

    /**
     * {@link #encode(int, double[], String)} of {@code topKey.toString()}, with the key's bytes
     * copied from Spark's string when they are the modified UTF-8 that {@link
     * java.io.DataOutputStream#writeUTF} writes: every byte in 1..127 (ASCII without NUL; a longer
     * character, NUL or a key over 65535 bytes goes through the string as before).
     */
    private int encode(int level, double[] values, UTF8String topKey) throws IOException {
        int n = topKey.numBytes();
        if (n > 0xFFFF) {
            return encode(level, values, topKey.toString());
        }
        int at = 1 + Double.BYTES * values.length;
        int length = at + 2 + n;
        encodeValues(level, values, length);
        encoded[at] = (byte) (n >>> 8);
        encoded[at + 1] = (byte) n;
        topKey.writeToMemory(encoded, Platform.BYTE_ARRAY_OFFSET + at + 2);
        for (int i = at + 2; i < length; i++) {
            if (encoded[i] <= 0) {
                return encode(level, values, topKey.toString());
            }
        }
        return length;
    }

    /** The level byte and the values into {@link #encoded}, grown to hold {@code length} bytes. */
    private void encodeValues(int level, double[] values, int length) {
        if (encoded.length < length) {
            encoded = new byte[Math.max(length, 2 * encoded.length)];
        }
        encoded[0] = (byte) level;
        for (int i = 0; i < values.length; i++) {
            LONG_BE.set(encoded, 1 + Double.BYTES * i, Double.doubleToLongBits(values[i]));
        }
    }

    /** The encoding buffer of one record with a key, read in place. */
    private static final class Scratch extends ByteArrayOutputStream {
        Scratch() {
            super(256);
        }

        byte[] buffer() {
            return buf;
        }
    }

    /** Groups in output order (reduce partition, then key), among {@code gids}. */
    private int[] sorted(int[] gids) {
        Integer[] boxed = new Integer[gids.length];
        for (int i = 0; i < gids.length; i++) {
            boxed[i] = gids[i];
        }
        Arrays.sort(
                boxed,
                Comparator.<Integer>comparingInt(g -> partitionOf[g]).thenComparing(keys::get));
        int[] out = new int[gids.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = boxed[i];
        }
        return out;
    }

    private int[] bufferedGroups() {
        int n = 0;
        for (int g = 0; g < keys.size(); g++) {
            if (buffered[g] > 0) {
                n++;
            }
        }
        int[] out = new int[n];
        n = 0;
        for (int g = 0; g < keys.size(); g++) {
            if (buffered[g] > 0) {
                out[n++] = g;
            }
        }
        return sorted(out);
    }

    private void permute(int gid) {
        long[] a = addresses[gid];
        for (int i = buffered[gid] - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            long t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /**
     * Called by the memory manager (on the task's thread) when this task needs memory: spills the
     * buffer unless reading has started (then the buffer is being read and stays).
     */
    @Override
    public long spill(long size, MemoryConsumer trigger) throws IOException {
        if (reading || bufferedRecords == 0) {
            return 0;
        }
        return spillToDisk();
    }

    private long spillToDisk() throws IOException {
        Tuple2<BlockId, File> f = SpillFiles.create();
        spills.add(f._2());
        spillIds.add(f._1());
        long n = bufferedRecords;
        try (DataOutputStream out =
                new DataOutputStream(
                        SpillFiles.wrap(
                                f._1(),
                                new BufferedOutputStream(new FileOutputStream(f._2()), 1 << 16)))) {
            for (int gid : bufferedGroups()) {
                // drop what fell below the risen threshold, then permute what is kept (the draws
                // then depend on the kept records only, not on whether a compaction ran before)
                int keep = dropBelowThreshold(gid);
                long[] a = addresses[gid];
                if (keep == 0) {
                    continue;
                }
                permute(gid);
                out.writeInt(gid);
                out.writeInt(keep);
                for (int i = 0; i < keep; i++) {
                    byte[] p = pages.get((int) (a[i] >>> 32));
                    int at = (int) a[i];
                    out.write(p, at, 4 + lengthAt(p, at));
                }
            }
            out.writeInt(-1);
        }
        spilledBytes += f._2().length();
        long freed = getUsed();
        memorySpilled += freed;
        clearBuffer();
        freeMemory(freed);
        LOG.info(
                "NetApprox map output: spilled {} records ({} bytes on disk, spill {})",
                n,
                f._2().length(),
                spills.size());
        return freed;
    }

    private void clearBuffer() {
        pages.clear();
        pageUsed = 0;
        for (int g = 0; g < keys.size(); g++) {
            addresses[g] = null;
            buffered[g] = 0;
        }
        bufferedRecords = 0;
        footprint = 0;
    }

    /** The pre-sample level of the buffered record at {@code address}. */
    private int levelAt(long address) {
        return pages.get((int) (address >>> 32))[(int) address + 4];
    }

    private static int lengthAt(byte[] p, int at) {
        return ((p[at] & 0xff) << 24)
                | ((p[at + 1] & 0xff) << 16)
                | ((p[at + 2] & 0xff) << 8)
                | (p[at + 3] & 0xff);
    }

    int spillCount() {
        return spills.size();
    }

    /** Bytes of spill files written (Spark's "spill (disk)"). */
    long spilledBytes() {
        return spilledBytes;
    }

    /** Memory released by spilling, summed over the spills (Spark's "spill (memory)"). */
    long memorySpilled() {
        return memorySpilled;
    }

    /** The most records the buffer held at once. */
    long peakBufferedRecords() {
        return peakBufferedRecords;
    }

    /** How many times the pre-sample's buffer was compacted. */
    int compactions() {
        return compactions;
    }

    /** The largest grant this sorter held (Spark's "peak execution memory"). */
    long peakMemory() {
        return peakMemory;
    }

    /** One group while reading: its records in random order. */
    interface GroupVisitor {
        /**
         * @param partition the group's reduce partition
         * @param key the group key
         * @param count its records kept by the pre-sample (all without one)
         * @param inserted all its records inserted
         * @param records yields the {@code count} kept ones in random order; the visitor may stop
         *     early (any prefix is a simple random sample), the rest is skipped
         */
        void visit(int partition, String key, long count, long inserted, RecordStream records)
                throws IOException;
    }

    /** The records of one group, each as its encoded bytes. */
    interface RecordStream {
        /** Reads the next record into {@code buf} (grown as needed) and returns its length. */
        int next(byte[][] buf) throws IOException;
    }

    /**
     * Visits every group in output order (reduce partition, then key). Call once, after the last
     * insert.
     */
    void read(GroupVisitor visitor) throws IOException {
        reading = true;
        List<DataInputStream> runs = new ArrayList<>();
        try {
            for (int i = 0; i < spills.size(); i++) {
                runs.add(
                        new DataInputStream(
                                SpillFiles.wrap(
                                        spillIds.get(i),
                                        new BufferedInputStream(
                                                new FileInputStream(spills.get(i)), 1 << 16))));
            }
            int[] runGroup = new int[runs.size()];
            int[] runLeft = new int[runs.size()];
            for (int r = 0; r < runs.size(); r++) {
                runGroup[r] = runs.get(r).readInt();
                runLeft[r] = runGroup[r] >= 0 ? runs.get(r).readInt() : 0;
            }
            int[] all = new int[keys.size()];
            for (int g = 0; g < all.length; g++) {
                all[g] = g;
            }
            for (int gid : sorted(all)) {
                // (the records in memory are permuted as they are drawn: Fisher-Yates one step
                // per record, so a group read in part is not permuted whole)
                long[] left = new long[runs.size() + 1];
                long total = 0;
                for (int r = 0; r < runs.size(); r++) {
                    if (runGroup[r] == gid) {
                        left[r] = runLeft[r];
                        total += left[r];
                    }
                }
                left[runs.size()] = buffered[gid];
                total += buffered[gid];
                if (total != stored[gid]) {
                    throw new IOException(
                            "NetApprox map output: group "
                                    + keys.get(gid)
                                    + " has "
                                    + stored[gid]
                                    + " records stored but its runs hold "
                                    + total);
                }
                final int g = gid;
                final int min = threshold[gid];
                final long count = kept(gid);
                final long[] remaining = {total};
                final long[] keptLeft = {count};
                final int[] fromMemory = {0};
                // the next stored record in random order: copied into buf without its level byte
                // when its level is the final threshold's or above (returns its length), else
                // skipped uncopied (returns -1); the same draws either way
                RecordStream stored =
                        buf -> {
                            int src = runs.size();
                            if (left[src] != remaining[0]) {
                                // the riffle: a run with probability proportional to its records
                                // left (no draw when every record left is in memory: the unspilled
                                // case, where the choice is certain)
                                long pick = rnd.nextLong(remaining[0]);
                                src = 0;
                                while (pick >= left[src]) {
                                    pick -= left[src];
                                    src++;
                                }
                            }
                            left[src]--;
                            remaining[0]--;
                            if (src == runs.size()) {
                                long[] addr = addresses[g];
                                int i = fromMemory[0]++;
                                int j = i + rnd.nextInt(buffered[g] - i);
                                long a = addr[j];
                                addr[j] = addr[i];
                                addr[i] = a;
                                byte[] p = pages.get((int) (a >>> 32));
                                int at = (int) a;
                                if (p[at + 4] < min) {
                                    return -1;
                                }
                                int len = lengthAt(p, at) - 1;
                                ensure(buf, len);
                                System.arraycopy(p, at + 5, buf[0], 0, len);
                                return len;
                            }
                            DataInputStream in = runs.get(src);
                            int len = in.readInt();
                            if (len < 1 || len > (64 << 20)) {
                                throw new IOException(
                                        "corrupt NetApprox spill: record of " + len + " bytes");
                            }
                            if (in.readByte() < min) {
                                in.skipNBytes(len - 1);
                                return -1;
                            }
                            ensure(buf, len - 1);
                            in.readFully(buf[0], 0, len - 1);
                            return len - 1;
                        };
                visitor.visit(
                        partitionOf[gid],
                        keys.get(gid),
                        count,
                        records[gid],
                        buf -> {
                            if (keptLeft[0] == 0) {
                                throw new IllegalStateException("no record left");
                            }
                            while (true) {
                                if (remaining[0] == 0) {
                                    throw new IOException(
                                            "NetApprox map output: group "
                                                    + keys.get(g)
                                                    + " is missing kept records");
                                }
                                int len = stored.next(buf);
                                if (len >= 0) {
                                    keptLeft[0]--;
                                    return len;
                                }
                            }
                        });
                // the kept records the visitor left unread, and those below the final threshold
                // (counted in place, run by run: their order no longer matters)
                long unread = 0;
                for (int i = fromMemory[0]; i < buffered[gid]; i++) {
                    if (levelAt(addresses[gid][i]) >= min) {
                        unread++;
                    }
                }
                for (int r = 0; r < runs.size(); r++) {
                    DataInputStream in = runs.get(r);
                    for (; left[r] > 0; left[r]--) {
                        int len = in.readInt();
                        if (len < 1 || len > (64 << 20)) {
                            throw new IOException(
                                    "corrupt NetApprox spill: record of " + len + " bytes");
                        }
                        if (in.readByte() >= min) {
                            unread++;
                        }
                        in.skipNBytes(len - 1);
                    }
                }
                if (unread != keptLeft[0]) {
                    throw new IOException(
                            "NetApprox map output: group "
                                    + keys.get(gid)
                                    + " has "
                                    + (count - keptLeft[0] + unread)
                                    + " kept records, counted "
                                    + count);
                }
                for (int r = 0; r < runs.size(); r++) {
                    if (runGroup[r] == gid) {
                        runGroup[r] = runs.get(r).readInt();
                        runLeft[r] = runGroup[r] >= 0 ? runs.get(r).readInt() : 0;
                    }
                }
            }
        } finally {
            for (DataInputStream in : runs) {
                try {
                    in.close();
                } catch (IOException e) {
                    LOG.debug("closing a spill", e);
                }
            }
        }
    }

    private static void ensure(byte[][] buf, int len) {
        if (buf[0] == null || buf[0].length < len) {
            buf[0] = new byte[Math.max(len, 256)];
        }
    }

    /** Frees the memory and deletes the spill files. Idempotent. */
    @Override
    public void close() {
        clearBuffer();
        long used = getUsed();
        if (used > 0) {
            freeMemory(used);
        }
        for (File f : spills) {
            if (f.exists() && !f.delete()) {
                LOG.warn("NetApprox: could not delete spill file {}", f);
            }
        }
        spills.clear();
        spillIds.clear();
    }

    /** Spill files where Spark puts its own (the block manager's local directories). */
    static final class SpillFiles {
        private SpillFiles() {}

        static Tuple2<BlockId, File> create() throws IOException {
            SparkEnv env = SparkEnv.get();
            if (env == null) {
                File f = File.createTempFile("netapprox-spill", ".bin");
                f.deleteOnExit();
                return new Tuple2<>(null, f);
            }
            Tuple2<?, File> t = env.blockManager().diskBlockManager().createTempShuffleBlock();
            return new Tuple2<>((BlockId) t._1(), t._2());
        }

        static OutputStream wrap(BlockId id, OutputStream out) {
            SparkEnv env = SparkEnv.get();
            return env == null || id == null ? out : env.serializerManager().wrapStream(id, out);
        }

        static InputStream wrap(BlockId id, InputStream in) {
            SparkEnv env = SparkEnv.get();
            return env == null || id == null ? in : env.serializerManager().wrapStream(id, in);
        }
    }
}
