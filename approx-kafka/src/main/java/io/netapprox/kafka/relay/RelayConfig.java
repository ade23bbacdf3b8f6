package io.netapprox.kafka.relay;

import java.util.Map;
import java.util.Objects;

/**
 * Configuration of a {@link KafkaRelay}.
 *
 * @param bootstrap the broker beside the relay (loopback, e.g. {@code 127.0.0.1:9092})
 * @param brokerId the broker's node id; the relay serves only partitions that node leads. -1: serve
 *     any partition (tests, a single-broker cluster)
 * @param listen {@code host:port} consumers reach the relay at
 * @param maxSegmentBytes a segment closes early once its reservoirs hold this many bytes
 * @param maxSessions consumer streams served at once
 * @param consumerOverrides extra properties of the relay's own Kafka consumers (security settings)
 */
public record RelayConfig(
        String bootstrap,
        int brokerId,
        String listen,
        long maxSegmentBytes,
        int maxSessions,
        Map<String, Object> consumerOverrides) {

    public static final long DEFAULT_MAX_SEGMENT_BYTES = 16L << 20;
    public static final int DEFAULT_MAX_SESSIONS = 64;

    public RelayConfig {
        Objects.requireNonNull(bootstrap, "bootstrap");
        Objects.requireNonNull(listen, "listen");
        consumerOverrides = Map.copyOf(consumerOverrides);
        if (maxSegmentBytes < 1024) {
            throw new IllegalArgumentException(
                    "maxSegmentBytes must be >= 1024: " + maxSegmentBytes);
        }
        if (maxSessions < 1) {
            throw new IllegalArgumentException("maxSessions must be >= 1: " + maxSessions);
        }
    }

    public static RelayConfig of(String bootstrap, int brokerId, String listen) {
        return new RelayConfig(
                bootstrap,
                brokerId,
                listen,
                DEFAULT_MAX_SEGMENT_BYTES,
                DEFAULT_MAX_SESSIONS,
                Map.of());
    }

    public RelayConfig withMaxSegmentBytes(long bytes) {
        return new RelayConfig(bootstrap, brokerId, listen, bytes, maxSessions, consumerOverrides);
    }
}
