package io.netapprox.spark;

import io.netapprox.core.sampling.MsrPlan;
import io.netapprox.core.sampling.MsrPlanner;
import io.netapprox.core.sampling.StratumAccumulator;
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
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.storage.BlockManagerId;
import scala.Option;
import scala.Product2;

/**
 * Map side of an approximate shuffle. Buckets the task's records by reduce partition and group,
 * randomly permutes each group (so that any subset of messages is a simple random sample of
 * records), frames the records into messages of {@code recordsPerMessage}, computes per-group
 * statistics of the per-message totals and derives the group's MSR from its e_max ({@link
 * MsrPlanner}, with Cochran's skewness rule). The output is one data file committed through Spark's
 * {@link IndexShuffleBlockResolver}; the {@link MapStatus} reports its true partition lengths and a
 * {@link BlockManagerId} whose topology info carries this executor's NetApprox control address.
 *
 * <p>Memory: the task's records are held until the end of {@link #write} (no spill); see
 * docs/spark.md.
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
        int maps =
                conf.planning() == ApproxConf.Planning.BALANCED ? Math.max(1, handle.numMaps()) : 1;
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
                    double msr = plan(spec, e.getKey(), rows, rpm, messages, maps);
                    table.add(
                            new MapOutputFormat.Group(
                                    e.getKey(),
                                    messages,
                                    rows.size(),
                                    msr,
                                    spec.errorBound(e.getKey())));
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
     * MSR of one group's share in this map output from the statistics of its messages: the largest
     * plan over the requested aggregates. With {@code maps} = M > 1 (balanced planning) the share
     * is planned for {@code e_max * sqrt(M)} and Cochran's skewness rule for the M-fold combined
     * sample (skewness / sqrt(M)): if the M shares of the group are equal, the variances add up to
     * exactly the group's budget {@code (e_max T / c)^2}; M = 1 plans every share for e_max on its
     * own (conservative by up to sqrt(M)).
     */
    static double plan(
            ApproxSpec spec, String group, List<ApproxRow> rows, int rpm, int messages, int maps) {
        if (messages <= 1) {
            return 1.0;
        }
        double scale = Math.sqrt(maps);
        MsrPlanner planner =
                MsrPlanner.of(Math.min(0.99, spec.errorBound(group) * scale), spec.confidence());
        double msr = planner.plan(messages, 1.0, 0.0).msr(); // the minimum sample (2 messages)
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            int v = a.valueIndex();
            switch (a.kind()) {
                case SUM -> {
                    StratumAccumulator acc = new StratumAccumulator();
                    for (int m = 0; m < messages; m++) {
                        double y = 0;
                        for (int i = start(m, rows.size(), messages);
                                i < start(m + 1, rows.size(), messages);
                                i++) {
                            y += rows.get(i).values[v];
                        }
                        acc.add(y);
                    }
                    msr =
                            Math.max(
                                    msr,
                                    planOf(
                                            planner,
                                            messages,
                                            acc.meanTotal(),
                                            Math.sqrt(acc.varianceTotal()),
                                            acc.skewnessTotal() / scale));
                }
                case AVG, QUANTILE -> {
                    // ratio estimator of the per-record mean: residuals d_i = y_i - R m_i
                    // (docs/sampling.md)
                    double total = 0;
                    for (ApproxRow r : rows) {
                        total += r.values[v];
                    }
                    double ratio = total / rows.size();
                    StratumAccumulator acc = new StratumAccumulator();
                    for (int m = 0; m < messages; m++) {
                        double y = 0;
                        int cnt = 0;
                        for (int i = start(m, rows.size(), messages);
                                i < start(m + 1, rows.size(), messages);
                                i++) {
                            y += rows.get(i).values[v];
                            cnt++;
                        }
                        acc.add(y - ratio * cnt);
                    }
                    msr =
                            Math.max(
                                    msr,
                                    planOf(
                                            planner,
                                            messages,
                                            total / messages,
                                            Math.sqrt(acc.varianceTotal()),
                                            acc.skewnessTotal() / scale));
                }
                default -> {
                    // COUNT is known exactly from the group table; TOPK gets what the other
                    // aggregates need
                }
            }
        }
        return Math.min(1.0, msr);
    }

    /**
     * First record of message m when n records are spread evenly over k messages (sizes differ by
     * <= 1).
     */
    static int start(int m, int n, int k) {
        return (int) ((long) m * n / k);
    }

    private static double planOf(MsrPlanner planner, int n, double mean, double sd, double skew) {
        if (!Double.isFinite(mean) || !Double.isFinite(sd)) {
            return 1.0;
        }
        MsrPlan p =
                Double.isFinite(skew) ? planner.plan(n, mean, sd, skew) : planner.plan(n, mean, sd);
        return p.msr();
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
        return Option.apply(MapStatus$.MODULE$.apply(loc, lengths, mapId, 0L));
    }

    @Override
    public long[] getPartitionLengths() {
        return lengths;
    }
}
