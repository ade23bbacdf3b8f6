package io.netapprox.kafka;

import io.netapprox.kafka.relay.Cell;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What an approximate consumer's {@code poll} returns: the sampled records (with {@link
 * ApproxHeaders}) and the segments that started in this poll, each with its exact per-(window,
 * stratum) counts. {@link #nextOffsets()} holds the coverage positions reached.
 */
public class ApproxConsumerRecords<K, V> extends ConsumerRecords<K, V> {
    /**
     * An offset range {@code [from, to)} of a partition and its cells. The records of the range may
     * be returned by this poll and the following ones (at most {@code max.poll.records} per poll).
     *
     * @param exact true when the range was read by a plain fetch (relay fallback): every record is
     *     in
     */
    public record CoveredRange(
            TopicPartition partition, long from, long to, List<Cell> cells, boolean exact) {
        public CoveredRange {
            cells = List.copyOf(cells);
        }
    }

    private final List<CoveredRange> ranges;

    public ApproxConsumerRecords(
            Map<TopicPartition, List<ConsumerRecord<K, V>>> records,
            Map<TopicPartition, OffsetAndMetadata> nextOffsets,
            List<CoveredRange> ranges) {
        super(records, nextOffsets);
        this.ranges = List.copyOf(ranges);
    }

    /** Ranges whose first records (or whose coverage, when they hold none) this poll returns. */
    public List<CoveredRange> ranges() {
        return ranges;
    }

    /** The ranges of a poll result, empty for a plain {@link ConsumerRecords}. */
    public static List<CoveredRange> rangesOf(ConsumerRecords<?, ?> records) {
        return records instanceof ApproxConsumerRecords<?, ?> a ? a.ranges() : List.of();
    }
}
