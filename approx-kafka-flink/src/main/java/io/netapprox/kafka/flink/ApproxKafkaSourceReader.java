package io.netapprox.kafka.flink;

import io.netapprox.kafka.ApproxHeaders;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceEvent;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Emits what one approximate consumer (in a {@link PartitionFetcher} thread) returns for this
 * reader's partitions: each record mapped with its weight, stamped with its Kafka timestamp,
 * through the partition's own output (per-partition watermarks). A split's position is the
 * consumer's coverage position after the last batch emitted, so a checkpoint holds offsets below
 * which every record was emitted or dropped by sampling; a restore resumes there (a partly emitted
 * segment is read again: at-least-once, like the consumer's own commits).
 *
 * <p>A reader without splits marks its output idle once the enumerator said its assignment is
 * settled ({@link AssignmentSettled}), so in an unbounded read with more readers than partitions
 * the idle readers do not hold the job's watermarks at their start; a split assigned later makes it
 * active again with the split's first watermark. Partitions that stop receiving records are Flink's
 * per-split idleness ({@code WatermarkStrategy.withIdleness}), as with Flink's KafkaSource.
 *
 * <p>It counts Flink's source metrics itself ({@link SourceReaderMetrics}: it does not extend
 * {@code SourceReaderBase}, which does that for Flink's KafkaSource): every record it emits counts
 * in {@code numRecordsIn} once, its weight in {@code numRecordsRepresented}.
 */
final class ApproxKafkaSourceReader<T> implements SourceReader<T, PartitionSplit> {
    private final SourceReaderContext context;
    private final KafkaSampleMapper<T> mapper;
    private final PartitionFetcher fetcher;
    private final SourceReaderMetrics metrics;
    private final Map<TopicPartition, PartitionSplit> splits = new LinkedHashMap<>();
    private final Map<TopicPartition, SourceOutput<T>> outputs = new HashMap<>();
    private boolean noMoreSplits;
    private boolean assignmentSettled;
    private boolean markedIdle;

    ApproxKafkaSourceReader(
            SourceReaderContext context, Properties consumerProps, KafkaSampleMapper<T> mapper) {
        this.context = context;
        this.mapper = mapper;
        this.metrics = new SourceReaderMetrics(context.metricGroup());
        this.fetcher =
                new PartitionFetcher(
                        consumerProps,
                        "approx-kafka-source-fetcher-" + context.getIndexOfSubtask());
    }

    @Override
    public void start() {
        fetcher.start();
    }

    @Override
    public InputStatus pollNext(ReaderOutput<T> output) throws Exception {
        Throwable failure = fetcher.failure();
        if (failure != null) {
            throw new IllegalStateException(
                    "the approximate Kafka consumer of subtask "
                            + context.getIndexOfSubtask()
                            + " failed; positions "
                            + splits.values(),
                    failure);
        }
        FetchedBatch batch = fetcher.next();
        if (batch != null) {
            emit(batch, output);
        }
        if (splits.isEmpty() && assignmentSettled && !markedIdle) {
            output.markIdle(); // nothing to read: do not hold back the watermarks downstream
            markedIdle = true;
        }
        if (fetcher.hasNext()) {
            return InputStatus.MORE_AVAILABLE;
        }
        return noMoreSplits && splits.isEmpty()
                ? InputStatus.END_OF_INPUT
                : InputStatus.NOTHING_AVAILABLE;
    }

    private void emit(FetchedBatch batch, ReaderOutput<T> output) throws Exception {
        for (ConsumerRecord<byte[], byte[]> r : batch.records()) {
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            if (!splits.containsKey(tp)) {
                continue; // the split finished or was removed: its records are not this reader's
            }
            SourceOutput<T> out =
                    outputs.computeIfAbsent(
                            tp, t -> output.createOutputForSplit(splits.get(t).splitId()));
            double weight = ApproxHeaders.weight(r);
            metrics.recordReceived(r, weight, batch.fetchTime());
            out.collect(mapper.map(r, weight), r.timestamp());
        }
        batch.lags()
                .forEach(
                        (tp, lag) -> {
                            if (splits.containsKey(tp)) {
                                metrics.lag(tp, lag);
                            }
                        });
        Set<TopicPartition> finished = new HashSet<>();
        batch.positions()
                .forEach(
                        (tp, position) -> {
                            PartitionSplit s = splits.get(tp);
                            if (s != null && position > s.nextOffset()) {
                                PartitionSplit moved = s.at(position);
                                splits.put(tp, moved);
                                metrics.positionMoved(tp, position);
                                if (moved.finished()) {
                                    finished.add(tp);
                                }
                            }
                        });
        for (TopicPartition tp : finished) {
            PartitionSplit s = splits.remove(tp);
            outputs.remove(tp);
            metrics.removePartition(tp);
            output.releaseOutputForSplit(s.splitId());
        }
        if (!finished.isEmpty()) {
            fetcher.remove(finished);
        }
    }

    @Override
    public List<PartitionSplit> snapshotState(long checkpointId) {
        Map<TopicPartition, Long> positions = new HashMap<>();
        splits.forEach((tp, s) -> positions.put(tp, s.nextOffset()));
        metrics.snapshotted(checkpointId, positions);
        return new ArrayList<>(splits.values());
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        metrics.checkpointComplete(checkpointId);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) {
        metrics.checkpointAborted(checkpointId);
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
        if (noMoreSplits && splits.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        return fetcher.available();
    }

    @Override
    public void addSplits(List<PartitionSplit> added) {
        Map<TopicPartition, Long> from = new HashMap<>();
        for (PartitionSplit s : added) {
            if (s.finished()) {
                continue; // a bounded partition with nothing to read
            }
            splits.put(s.topicPartition(), s);
            from.put(s.topicPartition(), s.nextOffset());
            metrics.addPartition(s.topicPartition(), s.nextOffset());
        }
        if (from.isEmpty()) {
            return;
        }
        markedIdle = false; // the split's first watermark ends the idleness
        try {
            fetcher.add(from);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while adding splits", e);
        }
    }

    @Override
    public void handleSourceEvents(SourceEvent event) {
        if (event instanceof AssignmentSettled) {
            assignmentSettled = true;
            fetcher.wakeReader(); // pollNext marks the reader idle if it has no split
        }
    }

    @Override
    public void notifyNoMoreSplits() {
        noMoreSplits = true;
        fetcher.wakeReader(); // a reader waiting on isAvailable() must see its end of input
    }

    @Override
    public void close() throws Exception {
        fetcher.close();
    }
}
