package io.netapprox.kafka;

import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.SampledRecord;
import io.netapprox.kafka.relay.Segment;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * The application's records: a sampled record of a relay's segment, or one read exactly by the
 * fallback, deserialized with the approximate headers ({@link ApproxHeaders}: weight, window,
 * stratum) added.
 */
final class RecordDecoder<K, V> {
    private final Deserializer<K> keyDeserializer;
    private final Deserializer<V> valueDeserializer;

    RecordDecoder(Deserializer<K> keyDeserializer, Deserializer<V> valueDeserializer) {
        this.keyDeserializer = keyDeserializer;
        this.valueDeserializer = valueDeserializer;
    }

    ConsumerRecord<K, V> record(Segment s, SampledRecord r) {
        Cell c = s.cells().get(r.cell());
        RecordHeaders headers = new RecordHeaders(r.headers());
        headers.add(header(ApproxHeaders.WEIGHT, Double.toString(c.weight())));
        headers.add(header(ApproxHeaders.WINDOW, Long.toString(c.windowStart())));
        headers.add(header(ApproxHeaders.STRATUM, c.stratum()));
        return build(
                s.partition(),
                r.offset(),
                r.timestamp(),
                r.timestampType(),
                r.key(),
                r.value(),
                headers);
    }

    ConsumerRecord<K, V> exactRecord(
            ConsumerRecord<byte[], byte[]> r, long window, String stratum) {
        RecordHeaders headers = new RecordHeaders(r.headers().toArray());
        headers.add(header(ApproxHeaders.WEIGHT, "1.0"));
        headers.add(header(ApproxHeaders.WINDOW, Long.toString(window)));
        headers.add(header(ApproxHeaders.STRATUM, stratum));
        return build(
                new TopicPartition(r.topic(), r.partition()),
                r.offset(),
                r.timestamp(),
                r.timestampType(),
                r.key(),
                r.value(),
                headers);
    }

    private ConsumerRecord<K, V> build(
            TopicPartition tp,
            long offset,
            long timestamp,
            org.apache.kafka.common.record.TimestampType type,
            byte[] key,
            byte[] value,
            RecordHeaders headers) {
        K k = keyDeserializer.deserialize(tp.topic(), headers, key);
        V v = valueDeserializer.deserialize(tp.topic(), headers, value);
        return new ConsumerRecord<>(
                tp.topic(),
                tp.partition(),
                offset,
                timestamp,
                type,
                key == null ? -1 : key.length,
                value == null ? -1 : value.length,
                k,
                v,
                headers,
                Optional.empty());
    }

    private static Header header(String k, String v) {
        return new RecordHeader(k, v.getBytes(StandardCharsets.UTF_8));
    }

    void close() {
        keyDeserializer.close();
        valueDeserializer.close();
    }
}
