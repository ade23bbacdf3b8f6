package io.netapprox.kafka;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Commits of coverage: a partition's committed offset is its coverage mark (every record below it
 * returned or dropped by sampling), committed through the shadow consumer, whose own auto-commit is
 * off. With {@code enable.auto.commit} (and a group), every {@code auto.commit.interval.ms} in
 * poll, on revocation and on close.
 */
final class CoverageCommits {
    private final KafkaConsumer<byte[], byte[]> shadow;
    private final Map<TopicPartition, PartitionFeed> feeds;
    private final boolean autoCommit;
    private final long autoCommitIntervalMs;
    private long nextAutoCommit;

    CoverageCommits(
            KafkaConsumer<byte[], byte[]> shadow,
            Map<TopicPartition, PartitionFeed> feeds,
            boolean autoCommit,
            long autoCommitIntervalMs) {
        this.shadow = shadow;
        this.feeds = feeds;
        this.autoCommit = autoCommit;
        this.autoCommitIntervalMs = autoCommitIntervalMs;
        this.nextAutoCommit = System.currentTimeMillis() + autoCommitIntervalMs;
    }

    /** Whether the consumer commits coverage itself (enable.auto.commit with a group id). */
    boolean autoCommit() {
        return autoCommit;
    }

    /** Coverage positions of the given (or all assigned) partitions. */
    Map<TopicPartition, OffsetAndMetadata> coverage(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> m = new HashMap<>();
        for (TopicPartition tp : partitions) {
            PartitionFeed f = feeds.get(tp);
            if (f != null && f.position >= 0) {
                m.put(tp, new OffsetAndMetadata(f.position));
            }
        }
        return m;
    }

    void commitCoverage(Collection<TopicPartition> partitions) {
        Map<TopicPartition, OffsetAndMetadata> m = coverage(partitions);
        if (!m.isEmpty()) {
            shadow.commitSync(m);
        }
    }

    void maybeAutoCommit() {
        if (autoCommit && System.currentTimeMillis() >= nextAutoCommit) {
            nextAutoCommit = System.currentTimeMillis() + autoCommitIntervalMs;
            Map<TopicPartition, OffsetAndMetadata> m = coverage(feeds.keySet());
            if (!m.isEmpty()) {
                shadow.commitAsync(m, null);
            }
        }
    }

    /** Coverage of every assigned partition. */
    Map<TopicPartition, OffsetAndMetadata> assigned() {
        return coverage(feeds.keySet());
    }
}
