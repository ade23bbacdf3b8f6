package io.netapprox.kafka.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class KafkaBrokerTest {
    @Test
    void producedRecordsComeBack() throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        String topic = KafkaBroker.unique("smoke");
        broker.createTopic(topic, 2);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            records.add(new ProducerRecord<>(topic, "k" + i, "v" + i));
        }
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            KafkaBroker.sendAll(p, records);
        }
        int n = 0;
        try (KafkaConsumer<String, String> c =
                new KafkaConsumer<>(broker.stringConsumerProps(KafkaBroker.unique("g")))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
            while (n < 100 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    n++;
                }
            }
        }
        assertEquals(100, n);
    }

    /**
     * Regression: with Kafka's default retention (7 days) the first retention check deleted every
     * record of the tests (timestamps in 2023), so a test running late in the JVM found empty
     * partitions (CoverageUnderLossTest: beginning offset = end offset). The broker checks every
     * second; three checks must leave old records in place.
     */
    @Test
    void recordsWithOldTimestampsSurviveRetentionChecks() throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        String topic = KafkaBroker.unique("old");
        broker.createTopic(topic, 1);
        long old = 1_600_000_000_000L; // 2020
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            for (int i = 0; i < 10; i++) {
                p.send(new ProducerRecord<>(topic, 0, old + i, "k" + i, "v" + i)).get();
            }
        }
        TopicPartition tp = new TopicPartition(topic, 0);
        Thread.sleep(3_500); // three retention checks (log.retention.check.interval.ms=1000)
        try (KafkaConsumer<String, String> c =
                new KafkaConsumer<>(broker.stringConsumerProps(KafkaBroker.unique("g")))) {
            assertEquals(0L, c.beginningOffsets(List.of(tp)).get(tp), "old records deleted");
            assertEquals(10L, c.endOffsets(List.of(tp)).get(tp));
        }
    }
}
