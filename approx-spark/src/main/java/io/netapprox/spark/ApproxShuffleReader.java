package io.netapprox.spark;

import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.TransferListener;
import io.netapprox.core.transport.TransferReport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.spark.InterruptibleIterator;
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
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;

/**
 * Reduce side of an approximate shuffle: for every non-empty (map output, reduce partition) block
 * in the requested map-index and partition ranges (Spark's {@code MapOutputTracker} decides which,
 * so partial map ranges are honoured and missing outputs fail the usual way), pull the block over
 * ATP from the executor that wrote it; the engine stops once every group has its MSR target. Yields
 * {@code (groupKey, StratumSample)} per group and map. Any failure of a pull (peer gone, refused,
 * timeout) becomes a {@link FetchFailedException} for that block, so Spark reruns the map stage as
 * it would for sort shuffle.
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

    /** Outstanding pulls per reduce task. */
    static final int MAX_IN_FLIGHT = 32;

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

    private record Pull(
            BlockManagerId loc,
            ShuffleBlockId block,
            int mapIndex,
            long size,
            CompletableFuture<IncomingTransfer> transfer,
            ConcurrentLinkedQueue<Object[]> messages) {}

    private Pull start(BlockManagerId loc, ShuffleBlockId sb, int mapIndex, long size) {
        ConcurrentLinkedQueue<Object[]> q = new ConcurrentLinkedQueue<>();
        CompletableFuture<IncomingTransfer> tf;
        InetSocketAddress ctl = ExecutorTransport.controlAddressOf(loc).orElse(null);
        if (ctl == null) {
            tf =
                    CompletableFuture.failedFuture(
                            new IOException(
                                    "map output "
                                            + sb
                                            + " at "
                                            + loc
                                            + " carries no NetApprox control address"));
        } else {
            TransferListener l =
                    new TransferListener() {
                        @Override
                        public void onMessage(IncomingTransfer t, AtpMessage m) {
                            try {
                                byte[] bytes = new byte[m.content().readableBytes()];
                                m.content().getBytes(m.content().readerIndex(), bytes);
                                q.add(new Object[] {m.groupId(), bytes});
                            } finally {
                                m.release();
                            }
                        }
                    };
            byte[] req = ExecutorTransport.request(handle.shuffleId(), sb.mapId(), sb.reduceId());
            tf = transport.peer(ctl).thenApply((ApproxPeer p) -> p.request(req, l));
        }
        return new Pull(loc, sb, mapIndex, size, tf, q);
    }

    @Override
    @SuppressWarnings("unchecked")
    public scala.collection.Iterator<Product2<K, C>> read() {
        int shuffleId = handle.shuffleId();
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
        List<Object[]> blocksToPull = new ArrayList<>();
        long t0 = System.nanoTime();
        while (it.hasNext()) {
            Tuple2<BlockManagerId, scala.collection.Seq<Tuple3<BlockId, Object, Object>>> e =
                    it.next();
            BlockManagerId loc = e._1();
            scala.collection.Iterator<Tuple3<BlockId, Object, Object>> blocks = e._2().iterator();
            while (blocks.hasNext()) {
                Tuple3<BlockId, Object, Object> b = blocks.next();
                if (!(b._1() instanceof ShuffleBlockId sb)) {
                    throw new IllegalStateException(
                            "unexpected block " + b._1() + " in approximate shuffle " + shuffleId);
                }
                long size = (Long) b._2();
                int mapIndex = (Integer) b._3();
                if (size == 0) {
                    continue;
                }
                blocksToPull.add(new Object[] {loc, sb, mapIndex, size});
            }
        }
        List<Product2<K, C>> out = new ArrayList<>();
        long bytesRead = 0;
        long recordsRead = 0;
        List<Pull> pulls = new ArrayList<>();
        for (int pi = 0; pi < blocksToPull.size(); pi++) {
            // keep at most MAX_IN_FLIGHT pulls outstanding (each map executor queues a bounded
            // number of requests)
            while (pulls.size() < blocksToPull.size() && pulls.size() < pi + MAX_IN_FLIGHT) {
                Object[] b = blocksToPull.get(pulls.size());
                pulls.add(
                        start(
                                (BlockManagerId) b[0],
                                (ShuffleBlockId) b[1],
                                (Integer) b[2],
                                (Long) b[3]));
            }
            Pull p = pulls.get(pi);
            // fetchTimeoutMs bounds each block's pull (from the moment this task waits for it)
            long deadline =
                    System.nanoTime()
                            + TimeUnit.MILLISECONDS.toNanos(transport.conf().fetchTimeoutMs());
            boolean retried = false;
            while (true) {
                try {
                    IncomingTransfer in =
                            p.transfer().get(remaining(deadline), TimeUnit.NANOSECONDS);
                    TransferReport report =
                            in.report().get(remaining(deadline), TimeUnit.NANOSECONDS);
                    if (!report.isSuccess()) {
                        throw new IOException("transfer ended with status " + report.status());
                    }
                    MapOutputFormat.Header h =
                            ExecutorTransport.readHeader(
                                    in.response().get(remaining(deadline), TimeUnit.NANOSECONDS));
                    // every delivered message is dispatched before the job's report; wait briefly
                    // if not yet seen
                    long want = report.delivered();
                    while (p.messages().size() < want && System.nanoTime() < deadline) {
                        Thread.sleep(1);
                    }
                    List<List<ApproxRow[]>> byGroup = new ArrayList<>();
                    for (int g = 0; g < h.groups().size(); g++) {
                        byGroup.add(new ArrayList<>());
                    }
                    for (Object[] m : p.messages()) {
                        int g = (int) (long) (Long) m[0];
                        byte[] bytes = (byte[]) m[1];
                        bytesRead += bytes.length;
                        ApproxRow[] rows =
                                MapOutputFormat.decodeMessage(bytes, h.numValues(), h.withKey());
                        recordsRead += rows.length;
                        byGroup.get(g).add(rows);
                    }
                    for (int g = 0; g < h.groups().size(); g++) {
                        MapOutputFormat.Group gr = h.groups().get(g);
                        out.add(
                                (Product2<K, C>)
                                        (Product2<?, ?>)
                                                new Tuple2<>(
                                                        gr.key(),
                                                        new StratumSample(
                                                                gr.key(),
                                                                p.mapIndex(),
                                                                gr.messages(),
                                                                gr.records(),
                                                                gr.msr(),
                                                                gr.errorBound(),
                                                                byGroup.get(g),
                                                                gr.nonFinite())));
                    }
                    break;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw fetchFailed(p, "interrupted", e);
                } catch (TimeoutException e) {
                    throw fetchFailed(
                            p, "no answer within " + transport.conf().fetchTimeoutMs() + " ms", e);
                } catch (ExecutionException | IOException | RuntimeException e) {
                    Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                    if (retried || System.nanoTime() >= deadline) {
                        throw fetchFailed(p, String.valueOf(cause), cause);
                    }
                    // One fresh pull (new connection if the old one ended) before giving up: a
                    // transient transport
                    // failure then costs one block, not a map-stage rerun. A dead executor fails
                    // the reconnect fast.
                    LOG.warn(
                            "NetApprox: pull of {} from {} failed ({}); retrying once",
                            p.block(),
                            p.loc(),
                            cause.toString());
                    retried = true;
                    p = start(p.loc(), p.block(), p.mapIndex(), p.size());
                }
            }
        }
        metrics.incRemoteBlocksFetched(pulls.size());
        metrics.incRemoteBytesRead(bytesRead);
        metrics.incRecordsRead(recordsRead);
        metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        scala.collection.Iterator<Product2<K, C>> sit =
                scala.jdk.javaapi.CollectionConverters.asScala(out.iterator());
        return new InterruptibleIterator<>(context, sit);
    }

    private static long remaining(long deadline) {
        return Math.max(1, deadline - System.nanoTime());
    }

    private RuntimeException fetchFailed(Pull p, String msg, Throwable cause) {
        LOG.warn("NetApprox: pull of {} from {} failed: {}", p.block(), p.loc(), msg);
        FetchFailedException f =
                new FetchFailedException(
                        p.loc(),
                        handle.shuffleId(),
                        p.block().mapId(),
                        p.mapIndex(),
                        p.block().reduceId(),
                        "NetApprox pull failed: " + msg,
                        cause);
        return ApproxShuffleReader.<RuntimeException>sneaky(f);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
