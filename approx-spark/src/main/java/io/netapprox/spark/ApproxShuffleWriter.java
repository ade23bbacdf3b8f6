package io.netapprox.spark;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
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
 * Map side of an approximate shuffle. Buckets the task's records by reduce partition and group,
 * randomly permutes each group (so that any subset of messages is a simple random sample of
 * records), frames the records into messages of {@code recordsPerMessage}, and gives each group's
 * share its MSR: the one the statistics pass planned for it over all map outputs ({@link
 * SamplingPlan}), or one planned from this share alone ({@code spark.approx.planning=local}). The
 * group table also carries each value column's NaN and infinity counts (the reducer then knows a
 * non-finite result exactly). The output is one data file committed through Spark's {@link
 * IndexShuffleBlockResolver}; the {@link MapStatus} reports its true partition lengths and a {@link
 * BlockManagerId} whose topology info carries this executor's NetApprox control address.
 *
 * <p>Memory: the task's records are held until the end of {@link #write} (no spill); see
 * docs/spark.md.
 */
final class ApproxShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(ApproxShuffleWriter.class);
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
        List<Map<String, List<ApproxRow>>> buckets = new ArrayList<>(numPartitions);
        for (int p = 0; p < numPartitions; p++) {
            buckets.add(new LinkedHashMap<>());
        }
        long n = 0;
        while (records.hasNext()) {
            Product2<K, V> r = records.next();
            String key = (String) r._1();
            ApproxRow row = (ApproxRow) r._2();
            buckets.get(partitioner.getPartition(key))
                    .computeIfAbsent(key, k -> new ArrayList<>())
                    .add(row);
            n++;
        }
        long t0 = System.nanoTime();
        int mapIndex = context.partitionId();
        SplittableRandom rnd =
                new SplittableRandom(
                        spec.seed() * 0x9E3779B97F4A7C15L
                                + ((long) handle.shuffleId() << 32)
                                + mapIndex);
        File output = resolver.getDataFile(handle.shuffleId(), mapId);
        File tmp = resolver.createTempFile(output);
        lengths = new long[numPartitions];
        long[] checksums = new long[numPartitions];
        String algo =
                SparkEnv.get() == null
                        ? "ADLER32"
                        : SparkEnv.get().conf().get("spark.shuffle.checksum.algorithm", "ADLER32");
        boolean withKey = spec.hasTopK();
        int rpm = conf.recordsPerMessage();
        SamplingPlan plan = spec.plan();
        long bytes = 0;
        try (DataOutputStream file =
                new DataOutputStream(
                        new BufferedOutputStream(new FileOutputStream(tmp), 1 << 16))) {
            for (int p = 0; p < numPartitions; p++) {
                Map<String, List<ApproxRow>> groups = buckets.get(p);
                if (groups.isEmpty()) {
                    continue;
                }
                ByteArrayOutputStream seg = new ByteArrayOutputStream();
                List<MapOutputFormat.Group> table = new ArrayList<>();
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                DataOutputStream bodyOut = new DataOutputStream(body);
                for (Map.Entry<String, List<ApproxRow>> e : groups.entrySet()) {
                    List<ApproxRow> rows = e.getValue();
                    shuffle(rows, rnd);
                    int messages = (rows.size() + rpm - 1) / rpm;
                    double msr =
                            msr(
                                    plan,
                                    spec,
                                    e.getKey(),
                                    mapIndex,
                                    () -> {
                                        ShareStatistics.Builder stats =
                                                new ShareStatistics.Builder(spec, rpm);
                                        for (ApproxRow r : rows) {
                                            stats.add(r);
                                        }
                                        return stats.build();
                                    });
                    long[] nonFinite = nonFinite(rows, spec.numValues());
                    table.add(
                            new MapOutputFormat.Group(
                                    e.getKey(),
                                    messages,
                                    rows.size(),
                                    msr,
                                    spec.errorBound(e.getKey()),
                                    nonFinite));
                    ByteArrayOutputStream msg = new ByteArrayOutputStream();
                    DataOutputStream msgOut = new DataOutputStream(msg);
                    for (int m = 0; m < messages; m++) {
                        msg.reset();
                        int from = start(m, rows.size(), messages);
                        int to = start(m + 1, rows.size(), messages);
                        msgOut.writeInt(to - from);
                        for (int i = from; i < to; i++) {
                            rows.get(i).write(msgOut, withKey);
                        }
                        msgOut.flush();
                        bodyOut.writeInt(msg.size());
                        msg.writeTo(bodyOut);
                    }
                }
                bodyOut.flush();
                DataOutputStream segOut = new DataOutputStream(seg);
                MapOutputFormat.writeHeader(segOut, spec.numValues(), withKey, table);
                segOut.flush();
                body.writeTo(seg);
                byte[] b = seg.toByteArray();
                file.write(b);
                lengths[p] = b.length;
                Checksum c =
                        switch (algo.toUpperCase(java.util.Locale.ROOT)) {
                            case "CRC32" -> new CRC32();
                            case "CRC32C" -> new CRC32C();
                            default -> new Adler32();
                        };
                c.update(b, 0, b.length);
                checksums[p] = c.getValue();
                bytes += b.length;
            }
        }
        resolver.writeMetadataFileAndCommit(handle.shuffleId(), mapId, lengths, checksums, tmp);
        if (tmp.exists()) {
            // another attempt committed first: its file (and lengths, copied into ours) stand
            tmp.delete();
        }
        metrics.incBytesWritten(bytes);
        metrics.incRecordsWritten(n);
        metrics.incWriteTime(System.nanoTime() - t0);
    }

    /**
     * MSR of one group's share in this map output: the one planned for it over all map outputs
     * ({@code planning=shares}); else (planning=local, or a share the statistics pass did not see,
     * e.g. because the input is not deterministic) planned from this share alone, as if it held the
     * whole group.
     */
    static double msr(
            SamplingPlan plan,
            ApproxSpec spec,
            String group,
            int mapIndex,
            java.util.function.Supplier<ShareStatistics> share) {
        if (plan != null) {
            double r = plan.rate(group, mapIndex);
            if (!Double.isNaN(r)) {
                return r;
            }
            LOG.warn(
                    "NetApprox: group {} in map output {} was not planned by the statistics pass (is the input "
                            + "deterministic?); planning this share on its own",
                    group,
                    mapIndex);
        }
        return SamplingPlan.allocate(spec, group, List.of(share.get())).rate(0);
    }

    /** Per value column: how many values are NaN, +Infinity, -Infinity (3 counts per column). */
    static long[] nonFinite(List<ApproxRow> rows, int numValues) {
        long[] c = new long[3 * numValues];
        for (ApproxRow r : rows) {
            for (int v = 0; v < numValues; v++) {
                double x = r.values[v];
                if (!Double.isFinite(x)) {
                    c[3 * v + (Double.isNaN(x) ? 0 : x > 0 ? 1 : 2)]++;
                }
            }
        }
        return c;
    }

    /**
     * First record of message m when n records are spread evenly over k messages (sizes differ by
     * <= 1).
     */
    static int start(int m, int n, int k) {
        return (int) ((long) m * n / k);
    }

    private static void shuffle(List<ApproxRow> rows, SplittableRandom rnd) {
        for (int i = rows.size() - 1; i > 0; i--) {
            Collections.swap(rows, i, rnd.nextInt(i + 1));
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
