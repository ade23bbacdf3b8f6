package io.netapprox.kafka.flink;

import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * One poll of the approximate consumer: its records and, taken right after the same poll, the
 * coverage position of every assigned partition (everything below it was in this or an earlier
 * batch, or was dropped by sampling), the lag of those whose readable end is known (end minus
 * position, the consumer's {@code currentLag}) and the wall-clock time the poll returned.
 */
record FetchedBatch(
        List<ConsumerRecord<byte[], byte[]>> records,
        Map<TopicPartition, Long> positions,
        Map<TopicPartition, Long> lags,
        long fetchTime) {}
