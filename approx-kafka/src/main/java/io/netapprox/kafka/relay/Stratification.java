package io.netapprox.kafka.relay;

import java.util.Objects;
import org.apache.kafka.common.config.ConfigException;

/**
 * What a stratum is: records of one stratum are sampled together and estimated together. Parsed
 * from {@code approx.stratum}: {@code partition}, {@code key} or {@code header:<name>}.
 */
public record Stratification(Kind kind, String header) {
    public enum Kind {
        /** one stratum per topic partition */
        PARTITION,
        /** one stratum per record key (null keys form one stratum) */
        KEY,
        /** one stratum per value of a record header (records without it form one stratum) */
        HEADER
    }

    public Stratification {
        Objects.requireNonNull(kind, "kind");
        if ((kind == Kind.HEADER) != (header != null && !header.isEmpty())) {
            throw new IllegalArgumentException("a header name is required for HEADER strata only");
        }
    }

    public static Stratification parse(String key, String value) {
        String v = value.trim();
        if (v.equals("partition")) {
            return new Stratification(Kind.PARTITION, null);
        }
        if (v.equals("key")) {
            return new Stratification(Kind.KEY, null);
        }
        if (v.startsWith("header:") && v.length() > "header:".length()) {
            return new Stratification(Kind.HEADER, v.substring("header:".length()));
        }
        throw new ConfigException(key, value, "expected partition, key or header:<name>");
    }

    @Override
    public String toString() {
        return kind == Kind.HEADER
                ? "header:" + header
                : kind.name().toLowerCase(java.util.Locale.ROOT);
    }
}
