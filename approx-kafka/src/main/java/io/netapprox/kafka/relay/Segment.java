package io.netapprox.kafka.relay;

import java.util.List;
import org.apache.kafka.common.TopicPartition;

/**
 * What a relay hands a consumer for one contiguous offset range {@code [from, to)} of a partition:
 * the sampled records and, per (window, stratum) cell, the exact record count. {@code to} is a
 * <b>coverage mark</b>: every record below it is either in {@code records} or was deliberately
 * dropped by sampling (or is a transaction marker or an aborted record under read_committed). A
 * segment may hold no record at all and still move coverage forward; that is how a partition whose
 * last records were all dropped still reaches its end.
 *
 * @param logEnd the partition's readable end (high watermark, or last stable offset under
 *     read_committed) when the segment closed; -1 if unknown
 * @param records sampled records in offset order
 */
public record Segment(
        TopicPartition partition,
        long from,
        long to,
        long logEnd,
        List<Cell> cells,
        List<SampledRecord> records) {

    public Segment {
        if (from < 0 || to < from) {
            throw new IllegalArgumentException("bad segment range [" + from + ", " + to + ")");
        }
        cells = List.copyOf(cells);
        records = List.copyOf(records);
    }

    /** A segment that covers nothing new (a long poll that timed out). */
    public static Segment empty(TopicPartition partition, long at, long logEnd) {
        return new Segment(partition, at, at, logEnd, List.of(), List.of());
    }

    public boolean isEmpty() {
        return from == to;
    }
}
