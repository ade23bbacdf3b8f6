package io.netapprox.kafka;

import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.streams.KafkaClientSupplier;

/**
 * Kafka Streams' {@code default.client.supplier}: the main consumer of each stream thread is an
 * {@link ApproxKafkaConsumer} (approximate with {@code approx.enable=true} in the Streams
 * properties). Restore and global consumers stay plain {@link KafkaConsumer}s: state stores and
 * global tables must be exact.
 */
public final class ApproxClientSupplier implements KafkaClientSupplier {
    @Override
    public Admin getAdmin(Map<String, Object> config) {
        return Admin.create(config);
    }

    @Override
    public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
        return new KafkaProducer<>(config, new ByteArraySerializer(), new ByteArraySerializer());
    }

    @Override
    public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
        return ApproxConsumers.create(
                config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    @Override
    public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
        return plain(config);
    }

    @Override
    public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
        return plain(config);
    }

    private static Consumer<byte[], byte[]> plain(Map<String, Object> config) {
        Map<String, Object> kafka = ApproxConsumerConfig.parse(config).kafkaProperties();
        return new KafkaConsumer<>(kafka, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
