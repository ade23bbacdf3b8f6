package io.netapprox.kafka;

import java.time.Duration;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;

/**
 * A Kafka {@link Consumer} that is approximate when {@code approx.enable=true} and a plain {@link
 * org.apache.kafka.clients.consumer.KafkaConsumer} otherwise. Create it with {@link
 * ApproxConsumers#create}; Kafka Streams gets it through {@link ApproxClientSupplier}.
 *
 * <p>Approximate, {@link #poll} returns {@link ApproxConsumerRecords}: a per-window, per-stratum
 * sample of each partition chosen by the relay beside the partition's leader, every record carrying
 * its weight ({@link ApproxHeaders}), plus the exact record counts of each covered offset range.
 * Group membership, rebalances and commits stay Kafka's; a committed offset means every record
 * below it was returned or deliberately dropped by sampling.
 */
public final class ApproxKafkaConsumer<K, V> extends ForwardingConsumer<K, V> {
    private final Consumer<K, V> delegate;
    private final boolean approximate;

    ApproxKafkaConsumer(Consumer<K, V> delegate, boolean approximate) {
        super(delegate);
        this.delegate = delegate;
        this.approximate = approximate;
    }

    /** True when {@code approx.enable=true}: records come sampled from relays. */
    public boolean isApproximate() {
        return approximate;
    }

    @Override
    public ConsumerRecords<K, V> poll(Duration timeout) {
        return delegate.poll(timeout);
    }
}
