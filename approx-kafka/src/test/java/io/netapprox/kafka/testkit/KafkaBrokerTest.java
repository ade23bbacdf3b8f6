package io.netapprox.kafka.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

class KafkaBrokerTest {
    @Test
    void producedRecordsComeBack() throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        String topic = KafkaBroker.unique("smoke");
        broker.createTopic(topic, 2);
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            for (int i = 0; i < 100; i++) {
                p.send(new ProducerRecord<>(topic, "k" + i, "v" + i));
            }
            p.flush();
        }
        int n = 0;
        try (KafkaConsumer<String, String> c =
                new KafkaConsumer<>(broker.stringConsumerProps(KafkaBroker.unique("g")))) {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (n < 100 && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    n++;
                }
            }
        }
        assertEquals(100, n);
    }
}
