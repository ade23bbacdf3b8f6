package io.netapprox.kafka.flink;

import io.netapprox.kafka.ApproxConsumerConfig;
import java.util.ArrayList;
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

/**
 * Lists the topic's partitions once (a plain {@code KafkaConsumer} on the JobManager: metadata and
 * offsets only, no records) and gives partition {@code p} to reader {@code p % parallelism}, so a
 * partition always goes to the same reader. Bounded reads stop at the end offsets of that moment.
 * Partitions added later are not discovered.
 */
final class PartitionSplitEnumerator implements SplitEnumerator<PartitionSplit, EnumeratorState> {
    private final SplitEnumeratorContext<PartitionSplit> context;
    private final Properties consumerProps;
    private final String topic;
    private final StartingOffsets starting;
    private final Boundedness boundedness;
    private final List<PartitionSplit> pending;
    private final Set<Integer> signalled = new HashSet<>();
    private boolean discovered;

    PartitionSplitEnumerator(
            SplitEnumeratorContext<PartitionSplit> context,
            Properties consumerProps,
            String topic,
            StartingOffsets starting,
            Boundedness boundedness,
            EnumeratorState restored) {
        this.context = context;
        this.consumerProps = consumerProps;
        this.topic = topic;
        this.starting = starting;
        this.boundedness = boundedness;
        this.pending = new ArrayList<>(restored.pending());
        this.discovered = restored.discovered();
    }

    @Override
    public void start() {
        if (!discovered) {
            context.callAsync(this::discover, this::onDiscovered);
        }
    }

    private List<PartitionSplit> discover() {
        Map<String, Object> props =
                new java.util.HashMap<>(
                        ApproxConsumerConfig.parse(consumerProps).kafkaProperties());
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(
                        props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<PartitionInfo> infos = c.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException(
                        "topic " + topic + " has no partitions (does it exist?)");
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                tps.add(new TopicPartition(topic, info.partition()));
            }
            Map<TopicPartition, Long> begin = c.beginningOffsets(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            Map<TopicPartition, OffsetAndMetadata> committed =
                    starting == StartingOffsets.COMMITTED
                            ? c.committed(new HashSet<>(tps))
                            : Map.of();
            List<PartitionSplit> splits = new ArrayList<>();
            for (TopicPartition tp : tps) {
                long start =
                        switch (starting) {
                            case EARLIEST -> begin.get(tp);
                            case LATEST -> end.get(tp);
                            case COMMITTED -> {
                                OffsetAndMetadata o = committed.get(tp);
                                yield o == null ? begin.get(tp) : o.offset();
                            }
                        };
                long stop =
                        boundedness == Boundedness.BOUNDED ? end.get(tp) : PartitionSplit.UNBOUNDED;
                splits.add(new PartitionSplit(topic, tp.partition(), start, stop));
            }
            return splits;
        }
    }

    private void onDiscovered(List<PartitionSplit> splits, Throwable error) {
        if (error != null) {
            throw new IllegalStateException(
                    "listing the partitions of " + topic + " failed", error);
        }
        pending.addAll(splits);
        discovered = true;
        for (int reader : context.registeredReaders().keySet()) {
            assign(reader);
        }
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

    /** Hands the reader its pending splits; a bounded read then tells it there are no more. */
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
        if (boundedness == Boundedness.BOUNDED && signalled.add(reader)) {
            context.signalNoMoreSplits(reader);
        }
    }

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {
        // splits are pushed when a reader registers; readers never ask
    }

    @Override
    public EnumeratorState snapshotState(long checkpointId) {
        return new EnumeratorState(discovered, pending);
    }

    @Override
    public void close() {}
}
