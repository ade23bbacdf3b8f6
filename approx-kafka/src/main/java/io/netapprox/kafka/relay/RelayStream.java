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
     * RelaySession#pull}).
     */
    CompletableFuture<Segment> pull(TopicPartition partition, long from, Duration maxWait);

    /** The consumer stopped reading these partitions. */
    void release(Collection<TopicPartition> partitions);

    boolean isClosed();

    @Override
    void close();
}
