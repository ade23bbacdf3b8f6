package io.netapprox.kafka.flink;

import io.netapprox.kafka.ApproxConsumerConfig;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lists the topic's partitions (a plain {@code KafkaConsumer} on the JobManager: metadata and
 * offsets only, no records) at the start and, in an unbounded read with a positive discovery
 * interval, again every interval, and gives partition {@code p} to reader {@code p % parallelism},
 * so a partition always goes to the same reader. Partitions of the first listing start at the
 * source's {@link StartingOffsets}; partitions found later start at their earliest offset (their
 * records were all written after the job started listing, as in Flink's KafkaSource). Bounded reads
 * stop at the end offsets of the first listing. After each round every reader is told that its
 * assignment is settled ({@link AssignmentSettled}).
 */
final class PartitionSplitEnumerator implements SplitEnumerator<PartitionSplit, EnumeratorState> {
    private static final Logger LOG = LoggerFactory.getLogger(PartitionSplitEnumerator.class);

    private final SplitEnumeratorContext<PartitionSplit> context;
    private final Properties consumerProps;
    private final String topic;
    private final StartingOffsets starting;
    private final Boundedness boundedness;
    private final long discoveryIntervalMs;
    private final List<PartitionSplit> pending;
    private final Set<Integer> signalled = new HashSet<>();

    /** Partitions made into splits; null until the first listing after a version-1 restore. */
    private Set<Integer> known;

    private boolean discovered;

    PartitionSplitEnumerator(
            SplitEnumeratorContext<PartitionSplit> context,
            Properties consumerProps,
            String topic,
            StartingOffsets starting,
            Boundedness boundedness,
            long discoveryIntervalMs,
            EnumeratorState restored) {
        this.context = context;
        this.consumerProps = consumerProps;
        this.topic = topic;
        this.starting = starting;
        this.boundedness = boundedness;
        this.discoveryIntervalMs = discoveryIntervalMs;
        this.pending = new ArrayList<>(restored.pending());
        this.known = restored.known() == null ? null : new HashSet<>(restored.known());
        this.discovered = restored.discovered();
    }

    @Override
    public void start() {
        if (discoveryIntervalMs > 0) {
            context.callAsync(this::list, this::onListed, 0, discoveryIntervalMs);
        } else if (!discovered) {
            context.callAsync(this::list, this::onListed);
        }
    }

    /** Runs on the coordinator's worker thread: reads no enumerator state. */
    private PartitionListing list() {
        Map<String, Object> props =
                new HashMap<>(ApproxConsumerConfig.parse(consumerProps).kafkaProperties());
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = c.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException(
                        "topic " + topic + " has no partitions (does it exist?)");
            }
            List<TopicPartition> tps = new ArrayList<>();
            List<Integer> partitions = new ArrayList<>();
            for (PartitionInfo info : infos) {
                tps.add(new TopicPartition(topic, info.partition()));
                partitions.add(info.partition());
            }
            Map<TopicPartition, OffsetAndMetadata> committed =
                    starting == StartingOffsets.COMMITTED
                            ? c.committed(new HashSet<>(tps))
                            : Map.of();
            Map<Integer, Long> committedByPartition = new HashMap<>();
            committed.forEach(
                    (tp, o) -> {
                        if (o != null) {
                            committedByPartition.put(tp.partition(), o.offset());
                        }
                    });
            return new PartitionListing(
                    partitions,
                    byPartition(c.beginningOffsets(tps)),
                    byPartition(c.endOffsets(tps)),
                    committedByPartition);
        }
    }

    private static Map<Integer, Long> byPartition(Map<TopicPartition, Long> offsets) {
        Map<Integer, Long> out = new HashMap<>();
        offsets.forEach((tp, offset) -> out.put(tp.partition(), offset));
        return out;
    }

    private void onListed(PartitionListing listing, Throwable error) {
        if (error != null) {
            if (!discovered) {
                throw new IllegalStateException(
                        "listing the partitions of " + topic + " failed", error);
            }
            // a later listing: the partitions read so far are unaffected; try again next interval
            LOG.warn(
                    "listing the partitions of {} failed; retrying in {} ms",
                    topic,
                    discoveryIntervalMs,
                    error);
            return;
        }
        if (known == null) {
            known = new HashSet<>(listing.partitions()); // restored from version 1: all were read
        }
        for (int p : listing.partitions()) {
            if (!known.add(p)) {
                continue;
            }
            long start = discovered ? listing.begin().get(p) : firstStart(listing, p);
            long stop =
                    boundedness == Boundedness.BOUNDED
                            ? listing.end().get(p)
                            : PartitionSplit.UNBOUNDED;
            if (discovered) {
                LOG.info("new partition {}-{}: reading from offset {}", topic, p, start);
            }
            pending.add(new PartitionSplit(topic, p, start, stop));
        }
        discovered = true;
        for (int reader : context.registeredReaders().keySet()) {
            assign(reader);
        }
    }

    private long firstStart(PartitionListing listing, int p) {
        return switch (starting) {
            case EARLIEST -> listing.begin().get(p);
            case LATEST -> listing.end().get(p);
            case COMMITTED -> listing.committed().getOrDefault(p, listing.begin().get(p));
        };
    }

    @Override
    public void addReader(int subtaskId) {
        signalled.remove(subtaskId); // a (re)registering reader is a fresh instance
        if (discovered) {
            assign(subtaskId);
        }
    }

    @Override
    public void addSplitsBack(List<PartitionSplit> splits, int subtaskId) {
        pending.addAll(splits);
        signalled.remove(subtaskId);
        if (context.registeredReaders().containsKey(subtaskId)) {
            assign(subtaskId);
        }
    }

    /**
     * Hands the reader its pending splits; then a bounded read tells it there are no more, an
     * unbounded one that its assignment is settled for now.
     */
    private void assign(int reader) {
        int parallelism = context.currentParallelism();
        List<PartitionSplit> mine = new ArrayList<>();
        for (Iterator<PartitionSplit> it = pending.iterator(); it.hasNext(); ) {
            PartitionSplit s = it.next();
            if (s.partition() % parallelism == reader) {
                mine.add(s);
                it.remove();
            }
        }
        if (!mine.isEmpty()) {
            context.assignSplits(new SplitsAssignment<>(Map.of(reader, mine)));
        }
        if (boundedness == Boundedness.BOUNDED) {
            if (signalled.add(reader)) {
                context.signalNoMoreSplits(reader);
            }
        } else {
            context.sendEventToSourceReader(reader, new AssignmentSettled());
        }
    }

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {
        // splits are pushed when a reader registers and after each listing; readers never ask
    }

    @Override
    public EnumeratorState snapshotState(long checkpointId) {
        return new EnumeratorState(discovered, pending, known);
    }

    @Override
    public void close() {}
}
