package io.netapprox.kafka.relay;

import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * A consumer's stream through one relay, as the consumer sees it (in-process or over the network).
 */
public interface RelayStream extends AutoCloseable {
    /**
     * The next segment of {@code partition} from offset {@code from} (see {@link
     * RelaySession#pull}). Pulls and releases take effect at the relay in the order they are made,
     * whatever order they reach it in; a pull replaced by a newer one (or given up by cancelling
     * its future) fails with {@link RelayException.Reason#SUPERSEDED}.
     */
    CompletableFuture<Segment> pull(TopicPartition partition, long from, Duration maxWait);

    /** The consumer stopped reading these partitions. */
    void release(Collection<TopicPartition> partitions);

    boolean isClosed();

    @Override
    void close();
}
