package io.netapprox.kafka.flink;

import java.util.Objects;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.kafka.common.TopicPartition;

/**
 * One Kafka partition read from {@code nextOffset} (a coverage position: every record below it was
 * emitted or deliberately dropped by sampling) to {@code stopOffset} ({@link #UNBOUNDED} for a
 * never-ending read). Immutable; the reader keeps the moving position.
 */
public final class PartitionSplit implements SourceSplit {
    /** The stop offset of an unbounded read. */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    private final String topic;
    private final int partition;
    private final long nextOffset;
    private final long stopOffset;

    public PartitionSplit(String topic, int partition, long nextOffset, long stopOffset) {
        if (partition < 0 || nextOffset < 0 || stopOffset < 0) {
            throw new IllegalArgumentException(
                    "bad split " + topic + "-" + partition + " " + nextOffset + ".." + stopOffset);
        }
        this.topic = Objects.requireNonNull(topic, "topic");
        this.partition = partition;
        this.nextOffset = nextOffset;
        this.stopOffset = stopOffset;
    }

    @Override
    public String splitId() {
        return topic + "-" + partition;
    }

    public TopicPartition topicPartition() {
        return new TopicPartition(topic, partition);
    }

    public String topic() {
        return topic;
    }

    public int partition() {
        return partition;
    }

    public long nextOffset() {
        return nextOffset;
    }

    public long stopOffset() {
        return stopOffset;
    }

    /** True once the coverage position reached the stop offset (never for an unbounded read). */
    public boolean finished() {
        return stopOffset != UNBOUNDED && nextOffset >= stopOffset;
    }

    public PartitionSplit at(long offset) {
        return new PartitionSplit(topic, partition, offset, stopOffset);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PartitionSplit s
                && s.topic.equals(topic)
                && s.partition == partition
                && s.nextOffset == nextOffset
                && s.stopOffset == stopOffset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(topic, partition, nextOffset, stopOffset);
    }

    @Override
    public String toString() {
        return splitId() + "@" + nextOffset + (stopOffset == UNBOUNDED ? "" : ".." + stopOffset);
    }
}
