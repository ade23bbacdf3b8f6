package io.netapprox.kafka.relay;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;

/**
 * A record the relay sampled, as it was in the log (serialized key and value).
 *
 * @param cell index of its cell in {@link Segment#cells()}
 */
public record SampledRecord(
        long offset,
        long timestamp,
        TimestampType timestampType,
        byte[] key,
        byte[] value,
        Header[] headers,
        int cell) {

    /** The same record as a member of cell {@code cell}. */
    public SampledRecord withCell(int cell) {
        return new SampledRecord(offset, timestamp, timestampType, key, value, headers, cell);
    }

    /** Bytes this record holds in memory (approximately). */
    public long sizeBytes() {
        long n = 64 + (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        for (Header h : headers) {
            n += 32 + h.key().length() + (h.value() == null ? 0 : h.value().length);
        }
        return n;
    }
}
