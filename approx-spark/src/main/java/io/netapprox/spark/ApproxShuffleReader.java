package io.netapprox.spark;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.Partitioner;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;

/**
 * Reduce side of an approximate shuffle: for every non-empty (map output, reduce partition) block
 * in the requested map-index and partition ranges (Spark's {@code MapOutputTracker} decides which,
 * so partial map ranges are honoured and missing outputs fail the usual way), takes each group's
 * target - {@code ceil(MSR N_g)} messages, the MSR the driver planned for the share ({@link
 * SamplingPlan}) or, without a plan, the one in the map output's group table - and stops there.
 * Blocks this executor wrote are read from its local disk, as Spark reads local blocks; the others
 * are pulled over ATP ({@link RemotePulls}). Every message taken is aggregated into its stratum's
 * accumulators as it is read ({@link StratumSample}); yields {@code (groupKey, StratumSample)} per
 * group and map output. A failed pull becomes a {@link FetchFailedException} for that block, so
 * Spark reruns the map stage as it would for sort shuffle. Counts what it did into Spark's shuffle
 * read metrics and the shuffle's {@link ApproxShuffleMetrics}.
 */
final class ApproxShuffleReader<K, C> implements ShuffleReader<K, C> {
    private static final Logger LOG = LoggerFactory.getLogger(ApproxShuffleReader.class);

    private final ApproxShuffleHandle<K, ?, C> handle;
    private final int startMapIndex;
    private final int endMapIndex;
    private final int startPartition;
    private final int endPartition;
    private final TaskContext context;
    private final ShuffleReadMetricsReporter metrics;
    private final ExecutorTransport transport;

    ApproxShuffleReader(
            ApproxShuffleHandle<K, ?, C> handle,
            int startMapIndex,
            int endMapIndex,
            int startPartition,
            int endPartition,
            TaskContext context,
            ShuffleReadMetricsReporter metrics,
            ExecutorTransport transport) {
        this.handle = handle;
        this.startMapIndex = startMapIndex;
        this.endMapIndex = endMapIndex;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.context = context;
        this.metrics = metrics;
        this.transport = transport;
    }

    @Override
    @SuppressWarnings("unchecked")
    public scala.collection.Iterator<Product2<K, C>> read() {
        long tStart = System.nanoTime();
        long startedAtMs = System.currentTimeMillis();
        int shuffleId = handle.shuffleId();
        ApproxSpec spec = handle.spec();
        // the time bound counts from here: the start of this reduce task's fetch
        long deadline = spec.withinNanos() > 0 ? tStart + spec.withinNanos() : 0;
        List<RemotePulls.Block> local = new ArrayList<>();
        List<RemotePulls.Block> remote = new ArrayList<>();
        scala.collection.Iterator<
                        Tuple2<
                                BlockManagerId,
                                scala.collection.Seq<Tuple3<BlockId, Object, Object>>>>
                it =
                        SparkEnv.get()
                                .mapOutputTracker()
                                .getMapSizesByExecutorId(
                                        shuffleId,
                                        startMapIndex,
                                        endMapIndex,
                                        startPartition,
                                        endPartition);
        while (it.hasNext()) {
            Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>> e =
                    it.next();
            BlockManagerId loc = e._1();
            boolean isLocal = transport.isLocal(loc);
            scala.collection.Iterator<Tuple3<BlockId, Object, Object>> blocks = e._2().iterator();
            while (blocks.hasNext()) {
                Tuple3<BlockId, Object, Object> b = blocks.next();
                if (!(b._1() instanceof ShuffleBlockId sb)) {
                    throw new IllegalStateException(
                            "unexpected block " + b._1() + " in approximate shuffle " + shuffleId);
                }
                long size = (Long) b._2();
                if (size == 0) {
                    continue;
                }
                RemotePulls.Block block = new RemotePulls.Block(loc, sb, (Integer) b._3(), size);
                (isLocal ? local : remote).add(block);
            }
        }
        long tStatuses = System.nanoTime();
        Map<Integer, Map<String, Double>> planned = plannedMsrs(spec);
        List<Product2<K, C>> out = new ArrayList<>();
        RemotePulls.ReadTally tally = new RemotePulls.ReadTally();
        long t0 = System.nanoTime();
        RemotePulls.Sink sink =
                new RemotePulls.Sink() {
                    @Override
                    public void stratum(StratumSample s) {
                        out.add((Product2<K, C>) (Product2<?, ?>) new Tuple2<>(s.group, s));
                    }

                    @Override
                    public RuntimeException fetchFailed(
                            RemotePulls.Block b, String message, Throwable cause) {
                        return ApproxShuffleReader.this.fetchFailed(b, message, cause);
                    }

                    @Override
                    public void missing(String group) {
                        out.add(
                                (Product2<K, C>)
                                        (Product2<?, ?>)
                                                new Tuple2<>(
                                                        group == null ? "" : group,
                                                        new GroupAggregator.MissingShare(group)));
                    }
                };
        final long until = deadline;
        RemotePulls.PendingCounters counters = null;
        try (RemotePulls pulls =
                new RemotePulls(
                        spec,
                        transport,
                        remote,
                        b ->
                                new BlockRequest(
                                        shuffleId,
                                        b.id().mapId(),
                                        b.id().reduceId(),
                                        planned.getOrDefault(b.mapIndex(), Map.of()),
                                        until == 0 ? 0 : Math.max(1, until - System.nanoTime())),
                        sink,
                        tally,
                        deadline)) {
            pulls.start(); // the remote pulls run while this thread reads the local blocks
            for (RemotePulls.Block b : local) {
                readLocal(spec, b, planned.getOrDefault(b.mapIndex(), Map.of()), sink, tally);
                pulls.drainAvailable();
            }
            long tl = System.nanoTime();
            pulls.finish();
            long tf = System.nanoTime();
            if (spec.metrics() != null) {
                // Asked now, awaited when the task completes: the answers travel while the task
                // aggregates and builds its result (they only feed the UI's metrics).
                counters = pulls.askServedCounters();
            }
            long tc = System.nanoTime();
            if (LOG.isDebugEnabled()) {
                LOG.debug(
                        "NetApprox reduce task {} partitions [{}, {}): read() at {} (epoch ms), map"
                                + " statuses {} ms, plan {} ms; {} local blocks read in {} ms, then"
                                + " {} ms waiting for {} remote blocks, {} ms asking the sender"
                                + " counters; {} ms in all",
                        context.taskAttemptId(),
                        startPartition,
                        endPartition,
                        startedAtMs,
                        RemotePulls.ms(tStatuses - tStart),
                        RemotePulls.ms(t0 - tStatuses),
                        local.size(),
                        RemotePulls.ms(tl - t0),
                        RemotePulls.ms(tf - tl),
                        remote.size(),
                        RemotePulls.ms(tc - tf),
                        RemotePulls.ms(tc - tStart));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading approximate shuffle", e);
        }
        metrics.incRemoteBlocksFetched(tally.remoteBlocks);
        metrics.incLocalBlocksFetched(tally.localBlocks);
        metrics.incRemoteBytesRead(tally.bytesRead - tally.localBytes);
        metrics.incLocalBytesRead(tally.localBytes);
        long records = 0;
        long exactBytes = 0;
        for (Product2<K, C> p : out) {
            if (!(p._2() instanceof StratumSample s)) {
                continue; // a share missing at the deadline
            }
            records += s.sampledRecords();
            exactBytes += s.exactBytes();
        }
        // never below what the map side wrote of these blocks (group tables, partials)
        exactBytes = Math.max(exactBytes, tally.blockBytes);
        metrics.incRecordsRead(records);
        metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        ApproxShuffleMetrics m = spec.metrics();
        if (m != null) {
            m.messagesPlanned.add(tally.planned);
            m.messagesDelivered.add(tally.delivered);
            m.messagesUsed.add(tally.used);
            m.messagesLocal.add(tally.localMessages);
            m.messagesBeyondTarget.add(tally.beyond);
            m.blocksOverAtp.add(tally.remoteBlocks - tally.tcpBlocks);
            m.blocksOverTcp.add(tally.tcpBlocks);
            m.blocksCutAtDeadline.add(tally.cutAtDeadline);
            m.blockBytes.add(tally.blockBytes);
            m.exactBytes.add(exactBytes);
            m.bytesRead.add(tally.bytesRead);
            m.bytesSaved.add(exactBytes - tally.bytesRead);
            if (counters != null && counters.any()) {
                awaitCountersOnCompletion(m, counters);
            }
        }
        scala.collection.Iterator<Product2<K, C>> sit = ScalaInterop.iterator(out.iterator());
        return new InterruptibleIterator<>(context, sit);
    }

    /**
     * Adds the sender counters to the shuffle's metrics when the task completes: Spark runs a
     * task's completion listeners (TaskContext.runTaskWithListeners, inside Task.run) before the
     * executor collects its accumulator updates (Executor.TaskRunner, after Task.run returns;
     * checked in Spark 3.5.8 and 4.1.3), so the counters still reach the driver with this task's
     * metrics. A failed or killed task gives the queries up instead of waiting. The wait is for
     * exact numbers: each serving executor answers once the transfers are final (at most {@code
     * fetchTimeoutMs}); what it cannot give is counted in {@code transfers without sender
     * counters}, so {@code messages sent} and the packet counts are exact when that is 0.
     */
    private void awaitCountersOnCompletion(
            ApproxShuffleMetrics m, RemotePulls.PendingCounters counters) {
        long taskId = context.taskAttemptId();
        context.addTaskCompletionListener(
                new org.apache.spark.util.TaskCompletionListener() {
                    @Override
                    public void onTaskCompletion(TaskContext ctx) {
                        if (ctx.isFailed() || ctx.isInterrupted()) {
                            counters.cancel();
                            return;
                        }
                        long t = System.nanoTime();
                        RemotePulls.PendingCounters.Result result = counters.await();
                        ServedTransfers.Counters served = result.counters();
                        m.messagesSent.add(served.messagesSubmitted());
                        m.packetsSent.add(served.packetsSent());
                        m.packetsRetransmitted.add(served.packetsRetransmitted());
                        m.packetsLost.add(served.packetsLost());
                        m.tcpMessagesWritten.add(served.tcpMessagesWritten());
                        m.transfersWithoutSenderCounters.add(result.missing());
                        if (LOG.isDebugEnabled()) {
                            LOG.debug(
                                    "NetApprox reduce task {}: sender counters awaited {} ms at"
                                            + " completion, {} (epoch ms)",
                                    taskId,
                                    RemotePulls.ms(System.nanoTime() - t),
                                    System.currentTimeMillis());
                        }
                    }
                });
    }

    /**
     * The planned MSR of every share of this reader's groups, by map index then group (empty
     * without a plan).
     */
    private Map<Integer, Map<String, Double>> plannedMsrs(ApproxSpec spec) {
        Map<Integer, Map<String, Double>> m = new HashMap<>();
        SamplingPlan plan = spec.plan();
        if (plan == null) {
            return m;
        }
        Partitioner partitioner = handle.dependency().partitioner();
        plan.forEachShare(
                g -> {
                    int p = partitioner.getPartition(g);
                    return p >= startPartition && p < endPartition;
                },
                (g, map, msr) -> m.computeIfAbsent(map, k -> new HashMap<>()).put(g, msr));
        return m;
    }

    /** Reads each group's target from a block this executor wrote, from its local disk. */
    private void readLocal(
            ApproxSpec spec,
            RemotePulls.Block b,
            Map<String, Double> msrs,
            RemotePulls.Sink sink,
            RemotePulls.ReadTally tally) {
        List<StratumSample> strata = new ArrayList<>();
        long bytes = 0;
        try (SegmentFile seg =
                SegmentFile.open(transport.resolver().getBlockData(b.id(), Option.empty()))) {
            MapOutputFormat.Table t = seg.table();
            byte[] buf = new byte[4096];
            for (int g = 0; g < t.groups().size(); g++) {
                MapOutputFormat.Group gr = t.groups().get(g);
                Double planned = msrs.get(gr.key());
                if (planned == null && !msrs.isEmpty()) {
                    LOG.warn(
                            "NetApprox: group {} in map output {} was not planned (is the input deterministic?);"
                                    + " using the MSR planned from the share alone",
                            gr.key(),
                            b.mapIndex());
                }
                StratumSample s =
                        new StratumSample(
                                spec,
                                planned == null ? gr : gr.withMsr(planned),
                                b.mapIndex(),
                                t.numValues(),
                                t.withKey());
                try (DataInputStream in = seg.stream(g)) {
                    for (int i = 0; i < s.target; i++) {
                        int len = in.readInt();
                        if (len <= 0 || len > gr.length()) {
                            throw new IOException(
                                    "corrupt NetApprox segment: message of " + len + " bytes");
                        }
                        if (buf.length < len) {
                            buf = new byte[len];
                        }
                        in.readFully(buf, 0, len);
                        s.addMessage(new DataInputStream(new ByteArrayInputStream(buf, 0, len)));
                        bytes += len;
                    }
                }
                strata.add(s);
            }
        } catch (IOException | RuntimeException e) {
            throw fetchFailed(b, "reading local map output: " + e, e);
        }
        for (StratumSample s : strata) {
            sink.stratum(s);
            tally.planned += s.target;
            tally.delivered += s.deliveredMessages();
            tally.localMessages += s.deliveredMessages();
            tally.used += s.deliveredMessages();
        }
        tally.bytesRead += bytes;
        tally.localBytes += bytes;
        tally.blockBytes += b.size();
        tally.localBlocks++;
    }

    private RuntimeException fetchFailed(RemotePulls.Block b, String msg, Throwable cause) {
        LOG.warn("NetApprox: pull of {} from {} failed: {}", b.id(), b.loc(), msg);
        FetchFailedException f =
                new FetchFailedException(
                        b.loc(),
                        handle.shuffleId(),
                        b.id().mapId(),
                        b.mapIndex(),
                        b.id().reduceId(),
                        "NetApprox pull failed: " + msg,
                        cause);
        return ApproxShuffleReader.<RuntimeException>sneaky(f);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
