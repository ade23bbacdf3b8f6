package io.netapprox.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * Headers an approximate consumer adds to every record it returns (UTF-8 decimal text, so any
 * client and Kafka Streams can read them). A record without {@link #WEIGHT} was not sampled: weight
 * 1.
 */
public final class ApproxHeaders {
    /**
     * Horvitz-Thompson weight: records of its (window, stratum) cell in the segment / sampled ones.
     */
    public static final String WEIGHT = "approx.weight";

    /** Start (ms) of the record's window. */
    public static final String WINDOW = "approx.window";

    /** The record's stratum name. */
    public static final String STRATUM = "approx.stratum";

    private ApproxHeaders() {}

    /** The record's weight, 1 if it carries none. */
    public static double weight(ConsumerRecord<?, ?> r) {
        Header h = r.headers().lastHeader(WEIGHT);
        return h == null ? 1.0 : Double.parseDouble(new String(h.value(), StandardCharsets.UTF_8));
    }

    /** The record's window start, or {@code Long.MIN_VALUE} if it carries none. */
    public static long window(ConsumerRecord<?, ?> r) {
        Header h = r.headers().lastHeader(WINDOW);
        return h == null
                ? Long.MIN_VALUE
                : Long.parseLong(new String(h.value(), StandardCharsets.UTF_8));
    }

    /** The record's stratum, or null if it carries none. */
    public static String stratum(ConsumerRecord<?, ?> r) {
        Header h = r.headers().lastHeader(STRATUM);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }
}
