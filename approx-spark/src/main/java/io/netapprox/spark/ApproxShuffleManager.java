package io.netapprox.spark;

import io.netapprox.core.transport.ExchangeRegistry;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.shuffle.IndexShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code spark.shuffle.manager=io.netapprox.spark.ApproxShuffleManager}.
 *
 * <p>Every shuffle whose dependency does not use an {@link ApproxPartitioner} (i.e. everything that
 * is not an {@link ApproxQuery}) is registered with, written, read and removed by {@link
 * SortShuffleManager}, which this class extends, and its handles are returned unwrapped: same code
 * path, same files, same results as without the plugin. Extending (rather than embedding) matters:
 * Spark SQL checks {@code shuffleManager .isInstanceOf[SortShuffleManager]} (e.g. {@code
 * ShuffleExchangeExec.needToCopyObjectsBeforeShuffle}) and would otherwise copy every row before a
 * shuffle. Approximate shuffles get an {@link ApproxShuffleHandle}; their map output is framed into
 * group-tagged messages (see {@link ApproxShuffleWriter}) and pulled over ATP ({@link
 * ApproxShuffleReader}).
 *
 * <p>The constructor only parses and validates {@code spark.approx.*} (a bad value fails
 * SparkContext startup with a message naming the key); the executor's transport ({@link
 * ExecutorTransport}: ATP engine and control plane) starts lazily in the first approximate task of
 * an executor.
 */
public class ApproxShuffleManager extends SortShuffleManager {
    private static final Logger LOG = LoggerFactory.getLogger(ApproxShuffleManager.class);

    private final ApproxConf conf;
    private final boolean isDriver;
    private final Map<Integer, Set<Long>> approxMapOutputs = new ConcurrentHashMap<>();
    private ExchangeRegistry.Lease<ExecutorTransport>
            transportLease; // guarded by this; null until used

    public ApproxShuffleManager(SparkConf sparkConf, boolean isDriver) {
        super(sparkConf);
        this.conf = ApproxConf.fromSpark(sparkConf);
        this.isDriver = isDriver;
    }

    public ApproxShuffleManager(SparkConf sparkConf) {
        this(sparkConf, false);
    }

    public ApproxConf approxConf() {
        return conf;
    }

    /**
     * How many NetApprox transports (ATP engine + control server + their threads) this JVM has
     * started: 0 in an executor or driver that ran no approximate shuffle task, whatever the
     * shuffle manager (the transport starts lazily, in the first approximate task). A diagnostic
     * for pass-through deployments and the tests.
     */
    public static int transportsStarted() {
        return (int) ExecutorTransport.starts();
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(
            int shuffleId, ShuffleDependency<K, V, C> dependency) {
        if (dependency.partitioner() instanceof ApproxPartitioner ap) {
            if (!conf.enabled()) {
                LOG.info(
                        "shuffle {}: approximate query, but {}enabled=false: sort shuffle (exact)",
                        shuffleId,
                        ApproxConf.PREFIX);
            } else if (dependency.aggregator().isDefined()
                    || dependency.keyOrdering().isDefined()) {
                LOG.warn(
                        "shuffle {}: an ApproxPartitioner with an aggregator or key ordering is not supported: "
                                + "sort shuffle (exact)",
                        shuffleId);
            } else {
                LOG.info("shuffle {}: approximate ({})", shuffleId, ap.spec());
                return new ApproxShuffleHandle<>(shuffleId, dependency, ap.spec());
            }
        }
        return super.registerShuffle(shuffleId, dependency);
    }

    private synchronized ExecutorTransport transport() {
        if (transportLease == null) {
            transportLease =
                    ExecutorTransport.acquire(
                            conf, (IndexShuffleBlockResolver) super.shuffleBlockResolver());
        }
        return transportLease.get();
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> ShuffleWriter<K, V> getWriter(
            ShuffleHandle handle,
            long mapId,
            TaskContext context,
            ShuffleWriteMetricsReporter metrics) {
        if (handle instanceof ApproxShuffleHandle<?, ?, ?> h) {
            approxMapOutputs
                    .computeIfAbsent(h.shuffleId(), k -> ConcurrentHashMap.newKeySet())
                    .add(mapId);
            return new ApproxShuffleWriter<>(
                    (ApproxShuffleHandle<K, V, ?>) h,
                    mapId,
                    context,
                    metrics,
                    (IndexShuffleBlockResolver) super.shuffleBlockResolver(),
                    conf,
                    transport());
        }
        return super.getWriter(handle, mapId, context, metrics);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(
            ShuffleHandle handle,
            int startMapIndex,
            int endMapIndex,
            int startPartition,
            int endPartition,
            TaskContext context,
            ShuffleReadMetricsReporter metrics) {
        if (handle instanceof ApproxShuffleHandle<?, ?, ?> h) {
            return new ApproxShuffleReader<>(
                    (ApproxShuffleHandle<K, ?, C>) h,
                    startMapIndex,
                    endMapIndex,
                    startPartition,
                    endPartition,
                    context,
                    metrics,
                    transport());
        }
        return super.getReader(
                handle, startMapIndex, endMapIndex, startPartition, endPartition, context, metrics);
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        Set<Long> maps = approxMapOutputs.remove(shuffleId);
        if (maps != null) {
            IndexShuffleBlockResolver r = (IndexShuffleBlockResolver) super.shuffleBlockResolver();
            for (long m : maps) {
                r.removeDataByMap(shuffleId, m);
            }
        }
        return super.unregisterShuffle(shuffleId);
    }

    @Override
    public void stop() {
        try {
            synchronized (this) {
                if (transportLease != null) {
                    transportLease.close();
                    transportLease = null;
                }
            }
        } finally {
            super.stop();
        }
    }
}
