package io.netapprox.kafka;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetCommitCallback;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metrics.KafkaMetric;

/**
 * A {@link Consumer} that forwards every call to another one: the base of {@link
 * ApproxKafkaConsumer} (forwarding to the plain or the relayed consumer) and of {@link
 * RelayedConsumer} (forwarding group membership, metadata and offsets to its shadow {@code
 * KafkaConsumer}, overriding what it does itself: commits, seeks, close). {@code poll} is each
 * subclass's own: the records it returns are its own.
 */
abstract class ForwardingConsumer<K, V> implements Consumer<K, V> {
    /**
     * Where every call not overridden goes; of any record types, since none of the forwarded calls
     * returns records (poll is each subclass's own).
     */
    protected final Consumer<?, ?> forwardTo;

    ForwardingConsumer(Consumer<?, ?> forwardTo) {
        this.forwardTo = forwardTo;
    }

    @Override
    public Set<TopicPartition> assignment() {
        return forwardTo.assignment();
    }

    @Override
    public Set<String> subscription() {
        return forwardTo.subscription();
    }

    @Override
    public void subscribe(Collection<String> topics) {
        forwardTo.subscribe(topics);
    }

    @Override
    public void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
        forwardTo.subscribe(topics, listener);
    }

    @Override
    public void assign(Collection<TopicPartition> partitions) {
        forwardTo.assign(partitions);
    }

    @Override
    public void subscribe(Pattern pattern, ConsumerRebalanceListener listener) {
        forwardTo.subscribe(pattern, listener);
    }

    @Override
    public void subscribe(Pattern pattern) {
        forwardTo.subscribe(pattern);
    }

    @Override
    public void subscribe(SubscriptionPattern pattern, ConsumerRebalanceListener listener) {
        forwardTo.subscribe(pattern, listener);
    }

    @Override
    public void subscribe(SubscriptionPattern pattern) {
        forwardTo.subscribe(pattern);
    }

    @Override
    public void unsubscribe() {
        forwardTo.unsubscribe();
    }

    @Override
    public void commitSync() {
        forwardTo.commitSync();
    }

    @Override
    public void commitSync(Duration timeout) {
        forwardTo.commitSync(timeout);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets) {
        forwardTo.commitSync(offsets);
    }

    @Override
    public void commitSync(Map<TopicPartition, OffsetAndMetadata> offsets, Duration timeout) {
        forwardTo.commitSync(offsets, timeout);
    }

    @Override
    public void commitAsync() {
        forwardTo.commitAsync();
    }

    @Override
    public void commitAsync(OffsetCommitCallback callback) {
        forwardTo.commitAsync(callback);
    }

    @Override
    public void commitAsync(
            Map<TopicPartition, OffsetAndMetadata> offsets, OffsetCommitCallback callback) {
        forwardTo.commitAsync(offsets, callback);
    }

    @Override
    public void registerMetricForSubscription(KafkaMetric metric) {
        forwardTo.registerMetricForSubscription(metric);
    }

    @Override
    public void unregisterMetricFromSubscription(KafkaMetric metric) {
        forwardTo.unregisterMetricFromSubscription(metric);
    }

    @Override
    public void seek(TopicPartition partition, long offset) {
        forwardTo.seek(partition, offset);
    }

    @Override
    public void seek(TopicPartition partition, OffsetAndMetadata offsetAndMetadata) {
        forwardTo.seek(partition, offsetAndMetadata);
    }

    @Override
    public void seekToBeginning(Collection<TopicPartition> partitions) {
        forwardTo.seekToBeginning(partitions);
    }

    @Override
    public void seekToEnd(Collection<TopicPartition> partitions) {
        forwardTo.seekToEnd(partitions);
    }

    @Override
    public long position(TopicPartition partition) {
        return forwardTo.position(partition);
    }

    @Override
    public long position(TopicPartition partition, Duration timeout) {
        return forwardTo.position(partition, timeout);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(Set<TopicPartition> partitions) {
        return forwardTo.committed(partitions);
    }

    @Override
    public Map<TopicPartition, OffsetAndMetadata> committed(
            Set<TopicPartition> partitions, Duration timeout) {
        return forwardTo.committed(partitions, timeout);
    }

    @Override
    public Uuid clientInstanceId(Duration timeout) {
        return forwardTo.clientInstanceId(timeout);
    }

    @Override
    public Map<MetricName, ? extends Metric> metrics() {
        return forwardTo.metrics();
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic) {
        return forwardTo.partitionsFor(topic);
    }

    @Override
    public List<PartitionInfo> partitionsFor(String topic, Duration timeout) {
        return forwardTo.partitionsFor(topic, timeout);
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics() {
        return forwardTo.listTopics();
    }

    @Override
    public Map<String, List<PartitionInfo>> listTopics(Duration timeout) {
        return forwardTo.listTopics(timeout);
    }

    @Override
    public Set<TopicPartition> paused() {
        return forwardTo.paused();
    }

    @Override
    public void pause(Collection<TopicPartition> partitions) {
        forwardTo.pause(partitions);
    }

    @Override
    public void resume(Collection<TopicPartition> partitions) {
        forwardTo.resume(partitions);
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
            Map<TopicPartition, Long> timestamps) {
        return forwardTo.offsetsForTimes(timestamps);
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
            Map<TopicPartition, Long> timestamps, Duration timeout) {
        return forwardTo.offsetsForTimes(timestamps, timeout);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
        return forwardTo.beginningOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(
            Collection<TopicPartition> partitions, Duration timeout) {
        return forwardTo.beginningOffsets(partitions, timeout);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
        return forwardTo.endOffsets(partitions);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(
            Collection<TopicPartition> partitions, Duration timeout) {
        return forwardTo.endOffsets(partitions, timeout);
    }

    @Override
    public OptionalLong currentLag(TopicPartition partition) {
        return forwardTo.currentLag(partition);
    }

    @Override
    public ConsumerGroupMetadata groupMetadata() {
        return forwardTo.groupMetadata();
    }

    @Override
    public void enforceRebalance() {
        forwardTo.enforceRebalance();
    }

    @Override
    public void enforceRebalance(String reason) {
        forwardTo.enforceRebalance(reason);
    }

    @Override
    public void close() {
        forwardTo.close();
    }

    @Override
    public void close(Duration timeout) {
        forwardTo.close(timeout);
    }

    @Override
    public void close(CloseOptions options) {
        forwardTo.close(options);
    }

    @Override
    public void wakeup() {
        forwardTo.wakeup();
    }
}
