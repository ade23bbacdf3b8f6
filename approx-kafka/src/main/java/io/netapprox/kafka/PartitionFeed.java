package io.netapprox.kafka;

import io.netapprox.kafka.relay.RelayStream;
import io.netapprox.kafka.relay.Segment;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * The client side of one assigned partition: the coverage position delivered to the application,
 * the segment being handed out (at most {@code max.poll.records} per poll) and the one pull in
 * flight, which reads ahead from the end of the current segment.
 */
final class PartitionFeed {
    final TopicPartition partition;

    /** Next offset not yet covered for the application; -1 until resolved. */
    long position = -1;

    boolean userPaused;

    /** Read by plain fetch through the shadow consumer (relay fallback). */
    boolean fallback;

    RelayStream stream;
    Segment current;
    int next;
    CompletableFuture<Segment> inflight;
    long inflightFrom = -1;

    /** The leader a relay named when it refused the partition (NOT_LEADER), or -1. */
    int leaderHint = -1;

    /** No pull before this ({@code System.nanoTime()}): the pause after a NOT_LEADER. */
    long retryAtNanos = System.nanoTime();

    /** The partition's readable end reported by the relay, or -1. */
    long logEnd = -1;

    PartitionFeed(TopicPartition partition) {
        this.partition = partition;
    }

    /** Forget buffered and in-flight data (seek, reassignment, re-route). */
    void reset() {
        current = null;
        next = 0;
        if (inflight != null) {
            inflight.cancel(false);
        }
        inflight = null;
        inflightFrom = -1;
    }

    /** Where the next pull must start: the end of the segment being handed out, or the position. */
    long pullFrom() {
        return current != null ? current.to() : position;
    }
}
