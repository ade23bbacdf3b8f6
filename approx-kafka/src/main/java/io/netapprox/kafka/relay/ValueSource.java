package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;
import java.util.Objects;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Header;

/**
 * The number behind a record that the relay measures to plan sample sizes: the value the
 * application aggregates, as far as the relay can read it. Parsed from {@code approx.value}: {@code
 * value} (the record's value as decimal text, the default), {@code header:<name>} (a header's value
 * as decimal text) or {@code none} (nothing to measure: plan from {@code approx.cv}). A record
 * whose number cannot be read (another encoding, a missing header, NaN) makes its cell's plan fall
 * back to {@code approx.cv} (see {@link SampleSizer}).
 */
public record ValueSource(Kind kind, String header) {
    public enum Kind {
        /** nothing measured: every cell is planned from the assumed coefficient of variation */
        NONE,
        /** the record's value, as decimal text */
        VALUE,
        /** the value of a record header, as decimal text */
        HEADER
    }

    public static final ValueSource DEFAULT = new ValueSource(Kind.VALUE, null);

    public ValueSource {
        Objects.requireNonNull(kind, "kind");
        if ((kind == Kind.HEADER) != (header != null && !header.isEmpty())) {
            throw new IllegalArgumentException("a header name is required for HEADER values only");
        }
    }

    public static ValueSource parse(String key, String value) {
        String v = value.trim();
        if (v.equals("value")) {
            return DEFAULT;
        }
        if (v.equals("none")) {
            return new ValueSource(Kind.NONE, null);
        }
        if (v.startsWith("header:") && v.length() > "header:".length()) {
            return new ValueSource(Kind.HEADER, v.substring("header:".length()));
        }
        throw new ConfigException(key, value, "expected value, header:<name> or none");
    }

    /** Whether anything is measured. */
    public boolean measures() {
        return kind != Kind.NONE;
    }

    /** The record's number, or NaN if it has none this source can read. */
    double of(ConsumerRecord<ByteBuffer, ByteBuffer> r) {
        return switch (kind) {
            case NONE -> Double.NaN;
            case VALUE -> DecimalText.parse(r.value());
            case HEADER -> {
                Header h = r.headers().lastHeader(header);
                yield h == null || h.value() == null
                        ? Double.NaN
                        : DecimalText.parse(ByteBuffer.wrap(h.value()));
            }
        };
    }

    @Override
    public String toString() {
        return kind == Kind.HEADER
                ? "header:" + header
                : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
