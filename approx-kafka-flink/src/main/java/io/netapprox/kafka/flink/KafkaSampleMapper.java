package io.netapprox.kafka.flink;

import java.io.Serializable;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Turns a record the approximate consumer returned into the stream's element. {@code weight} is the
 * record's Horvitz-Thompson weight (records of its (window, stratum) cell / records of the cell
 * that were delivered; 1 for a record read exactly), so {@code sum(weight)} over a cell is its
 * exact record count and {@code sum(weight * value)} estimates the cell's total. Runs on the
 * TaskManagers, hence serializable.
 */
@FunctionalInterface
public interface KafkaSampleMapper<T> extends Serializable {
    T map(ConsumerRecord<byte[], byte[]> record, double weight) throws Exception;
}
