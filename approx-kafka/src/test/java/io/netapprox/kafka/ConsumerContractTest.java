package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.kafka.testkit.KafkaBroker;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The same consumer contract (poll, commit and restart, seek, a rebalance with two consumers in a
 * group) against Kafka's consumer, ours with the flag off, and ours with the flag on where every
 * cell is small enough to be taken whole. Records are compared by (partition, offset, key, value).
 */
class ConsumerContractTest {
    private static final int PARTITIONS = 4;
    private static final int RECORDS = 400;

    /**
     * The compat modules (approx-kafka-compat-*) run this class on another kafka-clients release.
     */
    @BeforeAll
    static void kafkaRelease() throws Exception {
        // the version file of the kafka-clients jar (what Kafka's own AppInfoParser reads; that
        // class
        // is internal and moved in 4.4)
        Properties info = new Properties();
        try (InputStream in =
                KafkaConsumer.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            info.load(in);
        }
        String version = info.getProperty("version");
        String expected = System.getProperty("netapprox.expectedKafkaVersion");
        if (expected != null) {
            assertEquals(expected, version, "the kafka-clients this module runs on");
        }
        System.out.printf("[kafka] ConsumerContractTest on kafka-clients %s%n", version);
    }

    private static String topicWithRecords() throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        String topic = KafkaBroker.unique("contract");
        broker.createTopic(topic, PARTITIONS);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            records.add(new ProducerRecord<>(topic, i % PARTITIONS, "k" + i, "v" + i));
        }
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            KafkaBroker.sendAll(p, records);
        }
        return topic;
    }

    private static Map<TopicPartition, List<String>> pollUntil(
            Consumer<String, String> c, int wanted, Map<TopicPartition, List<String>> into) {
        // A liveness bound, not a timing check: a group join under load can take most of a minute.
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        int n = into.values().stream().mapToInt(List::size).sum();
        while (n < wanted && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                into.computeIfAbsent(
                                new TopicPartition(r.topic(), r.partition()),
                                x -> new ArrayList<>())
                        .add(r.offset() + ":" + r.key() + ":" + r.value());
                n++;
            }
        }
        return into;
    }

    private static void assertContiguous(Map<TopicPartition, List<String>> got, long from) {
        for (Map.Entry<TopicPartition, List<String>> e : got.entrySet()) {
            long expected = from;
            for (String s : e.getValue()) {
                assertEquals(
                        expected++,
                        Long.parseLong(s.substring(0, s.indexOf(':'))),
                        e.getKey() + " " + s);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ConsumerKind.class)
    void pollReturnsEveryRecordInOffsetOrder(ConsumerKind kind) throws Exception {
        String topic = topicWithRecords();
        try (Consumer<String, String> c =
                kind.create(KafkaBroker.shared().stringConsumerProps(KafkaBroker.unique("g")))) {
            c.subscribe(List.of(topic));
            Map<TopicPartition, List<String>> got = pollUntil(c, RECORDS, new HashMap<>());
            assertEquals(PARTITIONS, got.size());
            got.values().forEach(l -> assertEquals(RECORDS / PARTITIONS, l.size()));
            assertContiguous(got, 0);
            for (TopicPartition tp : got.keySet()) {
                assertEquals(RECORDS / PARTITIONS, c.position(tp));
            }
            String first = got.get(new TopicPartition(topic, 1)).get(0);
            assertEquals("0:k1:v1", first);
        }
    }

    @ParameterizedTest
    @EnumSource(ConsumerKind.class)
    void commitThenRestartResumesAtTheCommittedOffsets(ConsumerKind kind) throws Exception {
        String topic = topicWithRecords();
        String group = KafkaBroker.unique("g");
        Map<TopicPartition, List<String>> first = new HashMap<>();
        Map<TopicPartition, Long> committed = new HashMap<>();
        List<TopicPartition> all = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            all.add(new TopicPartition(topic, p));
        }
        try (Consumer<String, String> c =
                kind.create(KafkaBroker.shared().stringConsumerProps(group))) {
            c.assign(all);
            c.seek(
                    all.get(0),
                    60); // partition 0 starts at 60: everything below is skipped on purpose
            pollUntil(c, 40, first);
            for (TopicPartition tp : all) {
                c.position(tp); // a partition not fetched yet has its position resolved, as Kafka's
                // would
            }
            c.commitSync();
            for (TopicPartition tp : all) {
                committed.put(tp, c.position(tp));
            }
            Map<TopicPartition, OffsetAndMetadata> stored = c.committed(new HashSet<>(all));
            for (TopicPartition tp : all) {
                assertEquals(
                        committed.get(tp), stored.get(tp).offset(), tp + " committed = position");
            }
        }
        Map<TopicPartition, List<String>> second = new HashMap<>();
        try (Consumer<String, String> c =
                kind.create(KafkaBroker.shared().stringConsumerProps(group))) {
            c.subscribe(List.of(topic));
            int remaining = 0;
            for (TopicPartition tp : all) {
                remaining += (int) (RECORDS / PARTITIONS - committed.get(tp));
            }
            pollUntil(c, remaining, second);
            assertEquals(remaining, second.values().stream().mapToInt(List::size).sum());
        }
        for (TopicPartition tp : all) {
            List<String> again = second.getOrDefault(tp, List.of());
            if (!again.isEmpty()) {
                String s = again.get(0);
                assertEquals(
                        committed.get(tp),
                        Long.parseLong(s.substring(0, s.indexOf(':'))),
                        tp.toString());
            }
            List<String> before = first.getOrDefault(tp, List.of());
            long start = tp.partition() == 0 ? 60 : 0;
            assertEquals(
                    committed.get(tp) - start, before.size(), tp + ": records before the commit");
        }
    }

    @ParameterizedTest
    @EnumSource(ConsumerKind.class)
    void seekMovesThePosition(ConsumerKind kind) throws Exception {
        String topic = topicWithRecords();
        TopicPartition tp = new TopicPartition(topic, 2);
        try (Consumer<String, String> c =
                kind.create(KafkaBroker.shared().stringConsumerProps(KafkaBroker.unique("g")))) {
            c.assign(List.of(tp));
            Map<TopicPartition, List<String>> got = pollUntil(c, 10, new HashMap<>());
            assertFalse(got.isEmpty());
            c.seek(tp, 90);
            Map<TopicPartition, List<String>> tail = pollUntil(c, 10, new HashMap<>());
            assertEquals(List.of("90:k362:v362"), tail.get(tp).subList(0, 1));
            assertEquals(10, tail.get(tp).size());
            c.seekToBeginning(List.of(tp));
            assertEquals(0, c.position(tp));
            c.seekToEnd(List.of(tp));
            assertEquals(RECORDS / PARTITIONS, c.position(tp));
        }
    }

    @ParameterizedTest
    @EnumSource(ConsumerKind.class)
    void twoConsumersInAGroupSplitThePartitionsAndTogetherSeeEveryRecord(ConsumerKind kind)
            throws Exception {
        String topic = topicWithRecords();
        String group = KafkaBroker.unique("g");
        AtomicInteger revokedFromA = new AtomicInteger();
        Map<TopicPartition, List<String>> seen = new HashMap<>();
        try (Consumer<String, String> a =
                        kind.create(KafkaBroker.shared().stringConsumerProps(group));
                Consumer<String, String> b =
                        kind.create(KafkaBroker.shared().stringConsumerProps(group))) {
            a.subscribe(
                    List.of(topic),
                    new ConsumerRebalanceListener() {
                        @Override
                        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                            revokedFromA.addAndGet(partitions.size());
                            a.commitSync();
                        }

                        @Override
                        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {}
                    });
            // a alone first: it owns every partition and reads some of them
            long deadline = System.nanoTime() + Records.LIVENESS.toNanos();
            while (a.assignment().size() < PARTITIONS && System.nanoTime() < deadline) {
                collect(a, seen);
            }
            assertEquals(PARTITIONS, a.assignment().size());
            b.subscribe(List.of(topic));
            deadline = System.nanoTime() + Records.LIVENESS.toNanos();
            while (System.nanoTime() < deadline
                    && (a.assignment().isEmpty()
                            || b.assignment().isEmpty()
                            || a.assignment().size() + b.assignment().size() != PARTITIONS
                            || distinct(seen) < RECORDS)) {
                collect(a, seen);
                collect(b, seen);
            }
            Set<TopicPartition> both = new HashSet<>(a.assignment());
            both.retainAll(b.assignment());
            assertTrue(both.isEmpty(), "assignments overlap: " + both);
            assertFalse(a.assignment().isEmpty());
            assertFalse(b.assignment().isEmpty());
            assertTrue(revokedFromA.get() > 0, "a gave up partitions");
        }
        assertEquals(RECORDS, distinct(seen), "every record seen by one of the two");
    }

    private static void collect(
            Consumer<String, String> c, Map<TopicPartition, List<String>> into) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(50))) {
            into.computeIfAbsent(
                            new TopicPartition(r.topic(), r.partition()), x -> new ArrayList<>())
                    .add(r.offset() + ":" + r.key() + ":" + r.value());
        }
    }

    private static int distinct(Map<TopicPartition, List<String>> seen) {
        int n = 0;
        for (List<String> l : seen.values()) {
            n += new HashSet<>(l).size();
        }
        return n;
    }
}
