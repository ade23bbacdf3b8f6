package io.netapprox.kafka;

import io.netapprox.kafka.relay.RelayClient;
import io.netapprox.kafka.relay.TokenDelegation;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * Creates {@link ApproxKafkaConsumer}s. With {@code approx.enable=true} the consumer is
 * approximate; without it, it is a plain {@link KafkaConsumer} built from the same properties
 * (minus the {@code approx.*} keys, which are validated either way).
 */
public final class ApproxConsumers {
    private ApproxConsumers() {}

    public static <K, V> ApproxKafkaConsumer<K, V> create(Properties props) {
        return create(ApproxConsumerConfig.parse(props), null, null);
    }

    public static <K, V> ApproxKafkaConsumer<K, V> create(Map<String, ?> props) {
        return create(ApproxConsumerConfig.parse(props), null, null);
    }

    public static <K, V> ApproxKafkaConsumer<K, V> create(
            Properties props, Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
        return create(ApproxConsumerConfig.parse(props), keyDeserializer, valueDeserializer);
    }

    public static <K, V> ApproxKafkaConsumer<K, V> create(
            Map<String, ?> props,
            Deserializer<K> keyDeserializer,
            Deserializer<V> valueDeserializer) {
        return create(ApproxConsumerConfig.parse(props), keyDeserializer, valueDeserializer);
    }

    private static <K, V> ApproxKafkaConsumer<K, V> create(
            ApproxConsumerConfig config,
            Deserializer<K> keyDeserializer,
            Deserializer<V> valueDeserializer) {
        if (!config.enabled()) {
            return new ApproxKafkaConsumer<>(
                    new KafkaConsumer<>(
                            config.kafkaProperties(), keyDeserializer, valueDeserializer),
                    false);
        }
        return new ApproxKafkaConsumer<>(
                new RelayedConsumer<>(
                        config,
                        keyDeserializer,
                        valueDeserializer,
                        new RelayClient(
                                config.authSecret(),
                                config.pullWaitMs(),
                                config.delegation() == ApproxConsumerConfig.Delegation.TOKEN
                                        ? new TokenDelegation(config.kafkaProperties())
                                        : null,
                                config.transport())),
                true);
    }
}
