package io.netapprox.spark;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.Adler32;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;
import org.apache.spark.Partitioner;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.storage.BlockManagerId;
import scala.Option;
import scala.Product2;

/**
 * Map side of an approximate shuffle. Every record goes into its group's share statistics ({@link
 * ShareStatistics}: counts, moments, the non-finite counts - census numbers) and into a {@link
 * MapOutputSorter} (memory granted by Spark's memory manager, spilled to disk beyond it), which
 * keeps a uniform pre-sample of each group ({@code spark.approx.mapSampleRecords}: between that
 * many and about twice as many records, all of a smaller group) and gives it back group by group in
 * uniformly random order; the first of each group's kept records feed the sketch of the quantile
 * columns, and a prefix of them - {@code spark.approx.mapSampleFactor} times what the plan could
 * ask of the share ({@link #recordsToWrite}) - is framed into messages of {@code
 * recordsPerMessage}. So the bytes written scale with the plan, not the input; the group table
 * carries the share's full record count and N_g (its {@code population}), so the reducer's
 * estimators weigh the sample by the share it stands for (a simple random sample of the sample is
 * one of the share). The statistics go to the driver ({@link ShareStatisticsAccumulator}, under
 * {@code planning=shares}), which plans every group over its map outputs before the reduce stage;
 * the group table at the end of each segment ({@link MapOutputFormat}) carries the share's counts
 * and the MSR planned from the share alone (used under {@code planning=local}). The output is one
 * data file committed through Spark's {@link IndexShuffleBlockResolver}; the {@link MapStatus}
 * reports its true partition lengths and a {@link BlockManagerId} whose topology info carries this
 * executor's NetApprox control address.
 *
 * <p>Per row: with one integral group column and 1-3 value columns the pre-sample is decided in
 * Spark's generated code ({@link PreSampleGate}: this writer opens the task's gate, whose {@code
 * decide} finds the group's slot by its value, adds the values to the census statistics and draws
 * the level), so a dropped row never leaves Spark's loop; a kept row is stored by the gate too when
 * the query has no top-k column (its record is its values), else it arrives here to be stored with
 * its key. Otherwise (and for a row the gate leaves undecided) the records are {@link MapRecord}s,
 * one object per task refilled row by row ({@link ApproxQuery.MapRecords}); the group's slot
 * (statistics, reduce partition, sorter id) is found by the group's index, the values go into the
 * census statistics and the sorter draws the pre-sample level ({@link MapOutputSorter#admit}). Only
 * a kept row is encoded, its top-k key copied from Spark's string ({@link MapOutputSorter#store}).
 * A dropped row makes no record: on the gate's path its only objects are the UDF's boxed arguments
 * (Spark passes a Java UDF's arguments as objects), on the writer's path none.
 *
 * <p>Memory: the sorter's grant, one message, the census statistics of every group of the task
 * (moments: a few dozen numbers per group and value column; the sketch of the group being written
 * is bounded), the pre-sample's 64 level counters per group, and the held records of the group
 * being written (at most {@link ShareStatistics#SKETCH_SAMPLE}, about 2K under the default cap).
 */
final class ApproxShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    private final ApproxShuffleHandle<K, V, ?> handle;
    private final long mapId;
    private final TaskContext context;
    private final ShuffleWriteMetricsReporter metrics;
    private final IndexShuffleBlockResolver resolver;
    private final ApproxConf conf;
    private final ExecutorTransport transport;
    private long[] lengths;
    private boolean stopping;

    ApproxShuffleWriter(
            ApproxShuffleHandle<K, V, ?> handle,
            long mapId,
            TaskContext context,
            ShuffleWriteMetricsReporter metrics,
            IndexShuffleBlockResolver resolver,
            ApproxConf conf,
            ExecutorTransport transport) {
        this.handle = handle;
        this.mapId = mapId;
        this.context = context;
        this.metrics = metrics;
        this.resolver = resolver;
        this.conf = conf;
        this.transport = transport;
    }

    @Override
    public void write(scala.collection.Iterator<Product2<K, V>> records) throws IOException {
        ApproxSpec spec = handle.spec();
        Partitioner partitioner = handle.dependency().partitioner();
        int numPartitions = partitioner.numPartitions();
        int mapIndex = context.partitionId();
        boolean withKey = spec.hasTopK();
        SplittableRandom rnd =
                new SplittableRandom(
                        spec.seed() * 0x9E3779B97F4A7C15L
                                + ((long) handle.shuffleId() << 32)
                                + mapIndex);
        Map<String, ShareStatistics.Builder> shares = new HashMap<>();
        try (MapOutputSorter sorter =
                new MapOutputSorter(context.taskMemoryManager(), rnd, conf.mapSampleRecords())) {
            // per group, once: its statistics, reduce partition and sorter slot; per row: the
            // census statistics and the pre-sample's level, and bytes only for a kept row
            Map<String, Slot> byKey = new HashMap<>();
            Slot[] indexed = new Slot[ApproxQuery.RowRecords.KEY_CACHE];
            // rows decided in Spark's generated code (PreSampleGate): the same slots, statistics
            // and draws, reached by the group's value
            Slot[] byValue = new Slot[ApproxQuery.RowRecords.KEY_CACHE];
            PreSampleGate.Gate gate =
                    new PreSampleGate.Gate(spec.numValues()) {
                        @Override
                        int decide(String prefix, long group) {
                            if (group < 0 || group >= byValue.length) {
                                return PreSampleGate.UNDECIDED;
                            }
                            Slot s = byValue[(int) group];
                            if (s == null) {
                                s = slot(prefix + group, byKey, shares, spec, partitioner, sorter);
                                if (s.gid >= PreSampleGate.MAX_GROUPS) {
                                    return PreSampleGate.UNDECIDED;
                                }
                                byValue[(int) group] = s;
                            }
                            s.stats.add(values);
                            int level = sorter.admit(s.gid);
                            if (level < 0) {
                                dropped++;
                                return PreSampleGate.TAKEN;
                            }
                            if (withKey) {
                                // the writer stores it, its key read in place from the row
                                return PreSampleGate.kept(s.gid, level);
                            }
                            // a kept row is its values: stored now, in the order the writer
                            // would store it (before the next row's draw), so the same records
                            try {
                                sorter.store(s.gid, level, values, (String) null);
                            } catch (IOException e) {
                                throw new StoreFailed(e);
                            }
                            stored++;
                            return PreSampleGate.TAKEN;
                        }
                    };
            long task = context.taskAttemptId();
            PreSampleGate.open(task, gate);
            try {
                pull(records, spec, partitioner, sorter, shares, byKey, indexed, withKey);
            } catch (RuntimeException e) {
                // the gate's store (a spill) failed inside Spark's loop, whose UDF call may wrap it
                for (Throwable c = e; c != null; c = c.getCause()) {
                    if (c instanceof StoreFailed f) {
                        throw f.getCause();
                    }
                }
                throw e;
            } finally {
                PreSampleGate.close(task, gate);
            }
            long t0 = System.nanoTime();
            long written;
            File output = resolver.getDataFile(handle.shuffleId(), mapId);
            File tmp = resolver.createTempFile(output);
            lengths = new long[numPartitions];
            long[] checksums = new long[numPartitions];
            SegmentOutput out = new SegmentOutput(tmp, checksumAlgorithm());
            try (out) {
                written = writeSegments(spec, mapIndex, sorter, shares, out, checksums);
            }
            resolver.writeMetadataFileAndCommit(handle.shuffleId(), mapId, lengths, checksums, tmp);
            if (tmp.exists()) {
                // another attempt committed first: its file (and lengths, copied into ours) stand
                tmp.delete();
            }
            context.taskMetrics().incDiskBytesSpilled(sorter.spilledBytes());
            context.taskMetrics().incMemoryBytesSpilled(sorter.memorySpilled());
            context.taskMetrics().incPeakExecutionMemory(sorter.peakMemory());
            metrics.incBytesWritten(out.total());
            metrics.incRecordsWritten(written);
            metrics.incWriteTime(System.nanoTime() - t0);
        }
    }

    /**
     * Takes the map task's rows: per group, once, its statistics, reduce partition and sorter slot;
     * per row the census statistics and the pre-sample's level, and bytes only for a kept row. A
     * row the gate decided in Spark's code ({@link PreSampleGate}: counted and drawn there, only a
     * kept one arrives) is only stored.
     */
    private void pull(
            scala.collection.Iterator<Product2<K, V>> records,
            ApproxSpec spec,
            Partitioner partitioner,
            MapOutputSorter sorter,
            Map<String, ShareStatistics.Builder> shares,
            Map<String, Slot> byKey,
            Slot[] indexed,
            boolean withKey)
            throws IOException {
        while (records.hasNext()) {
            Product2<K, V> r = records.next();
            double[] values;
            Slot slot;
            if (r instanceof MapRecord m) {
                if (m.decision >= 0) {
                    int gid = PreSampleGate.gid(m.decision);
                    int level = PreSampleGate.level(m.decision);
                    if (withKey) {
                        sorter.store(gid, level, m.values, m.topKeyInPlace());
                    } else {
                        sorter.store(gid, level, m.values, (String) null);
                    }
                    continue;
                }
                values = m.values;
                slot = m.group >= 0 ? indexed[m.group] : null;
                if (slot == null) {
                    slot = slot(m.key, byKey, shares, spec, partitioner, sorter);
                    if (m.group >= 0) {
                        indexed[m.group] = slot;
                    }
                }
            } else {
                values = ((ApproxRow) r._2()).values;
                slot = slot((String) r._1(), byKey, shares, spec, partitioner, sorter);
            }
            slot.stats.add(values);
            int level = sorter.admit(slot.gid);
            if (level < 0) {
                continue;
            }
            if (withKey && r instanceof MapRecord m) {
                sorter.store(slot.gid, level, values, m.topKeyInPlace());
            } else {
                sorter.store(slot.gid, level, values, withKey ? topKey(r) : null);
            }
        }
    }

    /** The top-k column's value of a kept record (made now; "" for none, as ApproxRow writes). */
    private static String topKey(Product2<?, ?> r) {
        String k = r instanceof MapRecord m ? m.topKey() : ((ApproxRow) r._2()).key;
        return k == null ? "" : k;
    }

    /** The gate's store failed (thrown through Spark's generated code, unwrapped by write). */
    private static final class StoreFailed extends UncheckedIOException {
        private static final long serialVersionUID = 1L;

        StoreFailed(IOException cause) {
            super(cause);
        }
    }

    /** A group of the map task: its share's statistics and its slot in the sorter. */
    private record Slot(ShareStatistics.Builder stats, int gid) {}

    private Slot slot(
            String key,
            Map<String, Slot> byKey,
            Map<String, ShareStatistics.Builder> shares,
            ApproxSpec spec,
            Partitioner partitioner,
            MapOutputSorter sorter) {
        Slot s = byKey.get(key);
        if (s == null) {
            ShareStatistics.Builder b = new ShareStatistics.Builder(spec);
            shares.put(key, b);
            s = new Slot(b, sorter.group(key, partitioner.getPartition(key)));
            byKey.put(key, s);
        }
        return s;
    }

    /**
     * @return the records written (the pre-sample)
     */
    private long writeSegments(
            ApproxSpec spec,
            int mapIndex,
            MapOutputSorter sorter,
            Map<String, ShareStatistics.Builder> shares,
            SegmentOutput out,
            long[] checksums)
            throws IOException {
        int rpm = conf.recordsPerMessage();
        int nv = spec.numValues();
        boolean withKey = spec.hasTopK();
        List<MapOutputFormat.Group> table = new ArrayList<>();
        int[] current = {-1};
        byte[][] buf = new byte[1][];
        ByteArrayOutputStream msg = new ByteArrayOutputStream();
        DataOutputStream msgOut = new DataOutputStream(msg);
        long[] written = {0};
        HeldRecords held = new HeldRecords();
        int mapTasks = handle.mapTasks();
        sorter.read(
                (partition, key, count, inserted, stream) -> {
                    if (partition != current[0]) {
                        if (current[0] >= 0) {
                            finishSegment(out, current[0], nv, withKey, table, checksums);
                        }
                        current[0] = partition;
                        out.startSegment();
                    }
                    long offset = out.segmentBytes();
                    ShareStatistics.Builder stats = shares.remove(key);
                    if (stats == null || stats.records() != inserted) {
                        throw new IllegalStateException(
                                "group " + key + ": statistics out of step with the sorter");
                    }
                    // the pre-sample comes in random order: with a quantile column its first
                    // records (the sketch's sample) are held, so the share's plan is known before
                    // deciding how many records to write (a prefix: still a simple random sample
                    // of the share); without one the plan needs only the census statistics, and
                    // only the prefix written is read
                    held.reset();
                    int sketched =
                            stats.sketching()
                                    ? (int) Math.min(count, ShareStatistics.SKETCH_SAMPLE)
                                    : 0;
                    for (int i = 0; i < sketched; i++) {
                        int len = stream.next(buf);
                        stats.sample(buf[0], len);
                        held.add(buf[0], len);
                    }
                    long keep =
                            recordsToWrite(
                                    spec, key, mapIndex, stats, inserted, count, rpm, mapTasks);
                    int messages = (int) ((keep + rpm - 1) / rpm);
                    long next = 0;
                    for (int m = 0; m < messages; m++) {
                        msg.reset();
                        long from = start(m, keep, messages);
                        long to = start(m + 1, keep, messages);
                        msgOut.writeInt((int) (to - from));
                        for (long i = from; i < to; i++, next++) {
                            if (next < sketched) {
                                held.writeTo((int) next, msgOut);
                            } else {
                                int len = stream.next(buf);
                                msgOut.write(buf[0], 0, len);
                            }
                        }
                        msgOut.flush();
                        out.writeInt(msg.size());
                        msg.writeTo(out);
                    }
                    written[0] += keep;
                    long population = MapOutputFormat.Group.population(inserted, keep, messages);
                    ShareStatistics share = stats.build(population, messages);
                    double msr = SamplingPlan.rates(spec, key, List.of(share))[0];
                    long[] nonFinite = new long[3 * nv];
                    for (int v = 0; v < nv; v++) {
                        System.arraycopy(share.nonFinite(v), 0, nonFinite, 3 * v, 3);
                    }
                    table.add(
                            new MapOutputFormat.Group(
                                    key,
                                    messages,
                                    population,
                                    inserted,
                                    msr,
                                    spec.errorBound(key),
                                    offset,
                                    out.segmentBytes() - offset,
                                    nonFinite,
                                    stats.partials()));
                    if (spec.statistics() != null) {
                        spec.statistics().add(mapIndex, key, share);
                    }
                });
        if (current[0] >= 0) {
            finishSegment(out, current[0], nv, withKey, table, checksums);
        }
        return written[0];
    }

    /**
     * The most map outputs a group is assumed spread over when sizing a share's pre-sample under
     * {@code mapSampleSpread}: the plan asks less of each share the more shares a group has, so a
     * cap only writes more.
     */
    static final int MAX_ALIKE_SHARES = 64;

    /**
     * Records of a share to write out of its pre-sample of {@code kept}: {@code
     * spark.approx.mapSampleFactor} times what the plan asks of the share as if it were the whole
     * group (with {@code mapSampleSpread}: as if every map output held a share like this one), at
     * least 2 messages, at most the pre-sample. For shares of alike distributions the plan asks
     * less of a share the more of the group the others hold, so the whole-group plan bounds what
     * any split asks; the factor covers the shares' statistics differing. Not covered: shares of
     * clearly different distributions, and under {@code mapSampleSpread} a group held by fewer map
     * outputs (counted as {@code groups short of plan}). Depends on the share's census statistics
     * and the sketch of its pre-sample only: given its size, the written prefix is still a simple
     * random sample. When the map stage runs again because its first output was short of the plan
     * ({@link WritePlan}), the plan's size for the share (with its margin) is written instead.
     */
    private long recordsToWrite(
            ApproxSpec spec,
            String key,
            int mapIndex,
            ShareStatistics.Builder stats,
            long records,
            long kept,
            int rpm,
            int mapTasks) {
        double factor = conf.mapSampleFactor();
        if (factor == 0 || kept <= 2L * rpm) {
            return kept;
        }
        WritePlan planned = spec.writePlan();
        long sized = planned == null ? -1 : planned.records(key, mapIndex);
        if (sized >= 0) {
            return Math.min(kept, Math.max(2L * rpm, sized));
        }
        long units = (records + rpm - 1) / rpm; // the share's messages were it written whole
        ShareStatistics whole = stats.build(units);
        int alike =
                conf.planning() == ApproxConf.Planning.LOCAL
                                || !conf.mapSampleSpread()
                                || spec.wholeGroupSizing()
                        ? 1
                        : Math.max(1, Math.min(mapTasks, MAX_ALIKE_SHARES));
        long asked =
                spec.needsSample()
                        ? SamplingPlan.allocate(spec, key, Collections.nCopies(alike, whole))
                                .units(0)
                        : 0;
        double need = Math.max(2.0 * rpm, factor * asked * (double) records / units);
        return Math.min(kept, (long) Math.ceil(need));
    }

    /**
     * A share's first pre-sampled records, held while its plan is worked out (at most {@link
     * ShareStatistics#SKETCH_SAMPLE} records: the sketch's sample).
     */
    private static final class HeldRecords {
        private byte[] bytes = new byte[1 << 12];
        private int[] starts = new int[64];
        private int count;

        void reset() {
            count = 0;
        }

        void add(byte[] b, int len) {
            if (count + 1 >= starts.length) {
                starts = Arrays.copyOf(starts, starts.length * 2);
            }
            int at = starts[count];
            if (at + len > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, at + len));
            }
            System.arraycopy(b, 0, bytes, at, len);
            count++;
            starts[count] = at + len;
        }

        void writeTo(int i, DataOutputStream out) throws IOException {
            out.write(bytes, starts[i], starts[i + 1] - starts[i]);
        }
    }

    private void finishSegment(
            SegmentOutput out,
            int partition,
            int nv,
            boolean withKey,
            List<MapOutputFormat.Group> table,
            long[] checksums)
            throws IOException {
        byte[] t =
                MapOutputFormat.tableBytes(
                        new MapOutputFormat.Table(nv, withKey, List.copyOf(table)));
        out.write(t);
        out.writeInt(t.length);
        out.writeInt(MapOutputFormat.MAGIC);
        lengths[partition] = out.segmentBytes();
        checksums[partition] = out.checksum();
        table.clear();
    }

    private static String checksumAlgorithm() {
        return SparkEnv.get() == null
                ? "ADLER32"
                : SparkEnv.get().conf().get("spark.shuffle.checksum.algorithm", "ADLER32");
    }

    /**
     * First record of message m when n records are spread evenly over k messages (sizes differ by
     * <= 1).
     */
    static long start(long m, long n, long k) {
        return m * n / k;
    }

    /**
     * The data file being written: counts each segment's bytes and keeps its checksum (Spark's
     * algorithm, per reduce partition, as sort shuffle does).
     */
    private static final class SegmentOutput extends FilterOutputStream {
        private final String algorithm;
        private final DataOutputStream data;
        private Checksum checksum;
        private long segment;
        private long total;

        SegmentOutput(File file, String algorithm) throws IOException {
            super(new BufferedOutputStream(new FileOutputStream(file), 1 << 16));
            this.algorithm = algorithm.toUpperCase(Locale.ROOT);
            this.data = new DataOutputStream(this);
        }

        void startSegment() {
            checksum =
                    switch (algorithm) {
                        case "CRC32" -> new CRC32();
                        case "CRC32C" -> new CRC32C();
                        default -> new Adler32();
                    };
            segment = 0;
        }

        long segmentBytes() {
            return segment;
        }

        long checksum() {
            return checksum.getValue();
        }

        long total() {
            return total;
        }

        void writeInt(int v) throws IOException {
            data.writeInt(v);
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            checksum.update(b);
            segment++;
            total++;
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            checksum.update(b, off, len);
            segment += len;
            total += len;
        }
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        if (stopping) {
            return Option.empty();
        }
        stopping = true;
        if (!success || lengths == null) {
            return Option.empty();
        }
        BlockManagerId loc = transport.advertisedLocation();
        return Option.apply(SparkCompat.mapStatus(loc, lengths, mapId));
    }

    @Override
    public long[] getPartitionLengths() {
        return lengths;
    }
}
