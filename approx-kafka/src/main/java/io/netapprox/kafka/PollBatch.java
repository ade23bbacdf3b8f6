package io.netapprox.kafka;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * One poll's result under construction: the records by partition, the positions the poll moves and
 * the offset ranges it covers (sampled from a relay, or read exactly by the fallback).
 */
final class PollBatch<K, V> {
    final Map<TopicPartition, List<ConsumerRecord<K, V>>> records = new LinkedHashMap<>();
    final Map<TopicPartition, OffsetAndMetadata> next = new LinkedHashMap<>();
    final List<CoveredRange> ranges = new ArrayList<>();
    int count;

    void add(TopicPartition tp, ConsumerRecord<K, V> r) {
        records.computeIfAbsent(tp, x -> new ArrayList<>()).add(r);
        count++;
    }

    void moved(TopicPartition tp, long position) {
        next.put(tp, new OffsetAndMetadata(position));
    }

    boolean isEmpty() {
        return count == 0 && next.isEmpty() && ranges.isEmpty();
    }

    ApproxConsumerRecords<K, V> build() {
        return new ApproxConsumerRecords<>(records, next, ranges);
    }
}
