package io.netapprox.kafka.flink;

import io.netapprox.kafka.ApproxHeaders;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.SourceReaderMetricGroup;
import org.apache.flink.runtime.metrics.MetricNames;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * The metrics of one {@link ApproxKafkaSourceReader}: Flink's standard source metrics (FLIP-33) and
 * Flink KafkaSource's per-partition offset gauges under the same names, so dashboards built for
 * KafkaSource read this source too.
 *
 * <ul>
 *   <li>{@code numRecordsIn}: records <em>received</em> (each record the consumer returned and the
 *       reader emitted counts once, whatever its weight), so it agrees with the operator's {@code
 *       numRecordsOut} and with {@code numBytesIn}: the load the sample puts on Flink.
 *   <li>{@code numRecordsRepresented}: the records they stand for, the sum of their weights (each
 *       complete (window, stratum) cell adds its exact record count), rounded; equal to {@code
 *       numRecordsIn} when nothing is sampled.
 *   <li>{@code numBytesIn}: key, value and the record's own header bytes of the records received
 *       (not the {@code approx.*} headers the consumer adds; not the wire framing).
 *   <li>{@code pendingRecords}: per assigned partition, the log's readable end minus the coverage
 *       position, summed: offsets still to read, not the sample still to come. Registered once a
 *       partition's lag is known.
 *   <li>{@code currentFetchEventTimeLag}: fetch time minus event time of the last record received;
 *       with sampling it includes the wait for the record's window to close at the relay.
 *   <li>{@code KafkaSourceReader.topic.<t>.partition.<p>.currentOffset}: the coverage position
 *       minus one (the last offset read or dropped by sampling; -1 before any); {@code
 *       committedOffset}: the position in the last completed checkpoint (-1 before one). This
 *       source keeps its offsets in Flink's checkpoints and commits nothing to the group, so
 *       KafkaSource's {@code commitsSucceeded} / {@code commitsFailed} are not registered.
 * </ul>
 *
 * <p>{@code currentEmitEventTimeLag}, {@code watermarkLag}, {@code sourceIdleTime} and {@code
 * numRecordsInErrors} are Flink's own. Updated on the task's mailbox thread; the gauges are read by
 * reporter threads, hence the concurrent maps and volatile fields.
 */
final class SourceReaderMetrics {
    /** Flink KafkaSource's group for its reader metrics. */
    static final String KAFKA_SOURCE_READER_GROUP = "KafkaSourceReader";

    static final String TOPIC_GROUP = "topic";
    static final String PARTITION_GROUP = "partition";
    static final String CURRENT_OFFSET = "currentOffset";
    static final String COMMITTED_OFFSET = "committedOffset";
    static final String RECORDS_REPRESENTED = "numRecordsRepresented";

    /** An offset gauge before anything is known (KafkaSource's value). */
    static final long INITIAL_OFFSET = -1;

    /** Checkpoints snapshotted but not yet completed or aborted, at most this many are kept. */
    static final int MAX_PENDING_CHECKPOINTS = 32;

    private static final Set<String> CONSUMER_HEADERS =
            Set.of(ApproxHeaders.WEIGHT, ApproxHeaders.WINDOW, ApproxHeaders.STRATUM);

    private final SourceReaderMetricGroup group;
    private final MetricGroup kafkaGroup;
    private final Counter numRecordsIn;
    private final Counter numBytesIn;
    private final WeightSum represented = new WeightSum();
    private final Map<TopicPartition, Offsets> offsets = new ConcurrentHashMap<>();
    private final Map<TopicPartition, Long> lags = new ConcurrentHashMap<>();
    private final NavigableMap<Long, Map<TopicPartition, Long>> pendingCheckpoints =
            new TreeMap<>();
    private boolean pendingRecordsRegistered;
    private volatile long lastEventTime = Long.MIN_VALUE;
    private volatile long lastFetchTime;

    SourceReaderMetrics(SourceReaderMetricGroup group) {
        this.group = group;
        this.kafkaGroup = group.addGroup(KAFKA_SOURCE_READER_GROUP);
        this.numRecordsIn = group.getIOMetricGroup().getNumRecordsInCounter();
        this.numBytesIn = group.getIOMetricGroup().getNumBytesInCounter();
        group.counter(RECORDS_REPRESENTED, represented);
        group.gauge(MetricNames.CURRENT_FETCH_EVENT_TIME_LAG, this::fetchEventTimeLag);
    }

    /** A split starts at this coverage position (registers its offset gauges once). */
    void addPartition(TopicPartition tp, long position) {
        Offsets o = offsets.get(tp);
        if (o == null) {
            o = new Offsets();
            offsets.put(tp, o);
            MetricGroup g =
                    kafkaGroup
                            .addGroup(TOPIC_GROUP, tp.topic())
                            .addGroup(PARTITION_GROUP, Integer.toString(tp.partition()));
            Offsets registered = o;
            g.gauge(CURRENT_OFFSET, () -> registered.current);
            g.gauge(COMMITTED_OFFSET, () -> registered.committed);
        }
        o.current = position - 1;
    }

    /** A record the reader emits, fetched at {@code fetchTime}. */
    void recordReceived(ConsumerRecord<byte[], byte[]> r, double weight, long fetchTime) {
        numRecordsIn.inc();
        numBytesIn.inc(bytes(r));
        represented.add(weight);
        if (r.timestamp() >= 0) {
            lastEventTime = r.timestamp();
            lastFetchTime = fetchTime;
        }
    }

    /** The partition's coverage position moved (after the batch's records were emitted). */
    void positionMoved(TopicPartition tp, long position) {
        Offsets o = offsets.get(tp);
        if (o != null) {
            o.current = position - 1;
        }
    }

    /** The partition's lag (log end minus coverage position) as the fetcher last saw it. */
    void lag(TopicPartition tp, long lag) {
        lags.put(tp, lag);
        if (!pendingRecordsRegistered) {
            group.setPendingRecordsGauge(this::pendingRecords);
            pendingRecordsRegistered = true;
        }
    }

    /** The split finished or left this reader: nothing of it is pending here any more. */
    void removePartition(TopicPartition tp) {
        lags.remove(tp);
    }

    /** The positions a checkpoint holds; they become committedOffset when it completes. */
    void snapshotted(long checkpointId, Map<TopicPartition, Long> positions) {
        pendingCheckpoints.put(checkpointId, positions);
        while (pendingCheckpoints.size() > MAX_PENDING_CHECKPOINTS) {
            pendingCheckpoints.pollFirstEntry();
        }
    }

    void checkpointComplete(long checkpointId) {
        Map<TopicPartition, Long> positions = pendingCheckpoints.get(checkpointId);
        pendingCheckpoints.headMap(checkpointId, true).clear();
        if (positions == null) {
            return;
        }
        positions.forEach(
                (tp, position) -> {
                    Offsets o = offsets.get(tp);
                    if (o != null) {
                        o.committed = position;
                    }
                });
    }

    void checkpointAborted(long checkpointId) {
        pendingCheckpoints.remove(checkpointId);
    }

    private long pendingRecords() {
        long sum = 0;
        for (long lag : lags.values()) {
            sum += lag;
        }
        return sum;
    }

    private long fetchEventTimeLag() {
        long event = lastEventTime;
        return event == Long.MIN_VALUE ? INITIAL_OFFSET : lastFetchTime - event;
    }

    /** What the record's key, value and own headers take (Kafka's serialized sizes). */
    static long bytes(ConsumerRecord<byte[], byte[]> r) {
        long n = Math.max(0, r.serializedKeySize()) + (long) Math.max(0, r.serializedValueSize());
        for (Header h : r.headers()) {
            if (!CONSUMER_HEADERS.contains(h.key())) {
                n +=
                        h.key().getBytes(StandardCharsets.UTF_8).length
                                + (h.value() == null ? 0 : h.value().length);
            }
        }
        return n;
    }

    private static final class Offsets {
        volatile long current = INITIAL_OFFSET;
        volatile long committed = INITIAL_OFFSET;
    }

    /**
     * A counter of weights: each record adds its weight, the count is the sum rounded. Only the
     * mailbox thread adds; reporters read.
     */
    private static final class WeightSum implements Counter {
        private volatile double sum;

        void add(double weight) {
            sum += weight; // single writer
        }

        @Override
        public void inc() {
            add(1);
        }

        @Override
        public void inc(long n) {
            add(n);
        }

        @Override
        public void dec() {
            add(-1);
        }

        @Override
        public void dec(long n) {
            add(-n);
        }

        @Override
        public long getCount() {
            return Math.round(sum);
        }
    }
}
