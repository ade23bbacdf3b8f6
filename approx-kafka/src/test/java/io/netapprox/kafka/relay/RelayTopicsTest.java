package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.kafka.relay.RelayProtocol.SegmentHeader;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * The topics a client names in its pulls are untrusted (issue 29): unknown ones must not be
 * created, an invalid name must not end the stream, and partitions given up must not stay in the
 * stream's memory.
 */
class RelayTopicsTest {
    private static final long LIVENESS_S = 180;

    private static RelayException failure(CompletableFuture<?> f) {
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> f.get(LIVENESS_S, TimeUnit.SECONDS));
        return assertInstanceOf(RelayException.class, e.getCause());
    }

    private static String topicWithRecords(KafkaBroker broker, int records) throws Exception {
        String topic = KafkaBroker.unique("topics");
        broker.createTopic(topic, 1);
        long ts = System.currentTimeMillis() - 120_000;
        List<ProducerRecord<String, String>> rs = new ArrayList<>();
        for (int i = 0; i < records; i++) {
            rs.add(new ProducerRecord<>(topic, 0, ts, "k" + i, "v" + i));
        }
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            KafkaBroker.sendAll(p, rs);
        }
        return topic;
    }

    /** Pulls from 0 until the segment headers cover [0, end); returns the records counted. */
    private static long pullToEnd(RawRelayClient raw, ApproxPeer peer, TopicPartition tp, long end)
            throws Exception {
        long from = 0;
        long counted = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
        while (from < end && System.nanoTime() < deadline) {
            SegmentHeader h = raw.pull(peer, tp, from, 500).get(LIVENESS_S, TimeUnit.SECONDS);
            counted += h.cells().stream().mapToLong(Cell::count).sum();
            from = h.to();
        }
        assertEquals(end, from, tp + " covered to its end");
        return counted;
    }

    /**
     * Regression: the relay's Kafka consumers kept allow.auto.create.topics, so on a broker with
     * auto-creation on (Kafka's default) every pull of an unknown topic created it - 20 pulls, 20
     * topics. Now the pull is answered UNKNOWN_TOPIC, nothing is created, and the stream goes on.
     */
    @Test
    void pullsOfUnknownTopicsAreRefusedAndCreateNothing() throws Exception {
        KafkaBroker broker = KafkaBroker.secured(); // auto.create.topics.enable=true
        String real = topicWithRecords(broker, 50);
        List<String> unknown = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            unknown.add(KafkaBroker.unique("never-created"));
        }
        try (KafkaRelay relay =
                        TestRelays.start(broker, b -> b.consumerOverrides(broker.adminSecurity()));
                RawRelayClient raw = new RawRelayClient(relay)) {
            ApproxPeer peer = raw.connect();
            raw.open(peer, null).get(LIVENESS_S, TimeUnit.SECONDS);
            for (String t : unknown) {
                RelayException e = failure(raw.pull(peer, new TopicPartition(t, 0), 0, 1000));
                assertEquals(RelayException.Reason.UNKNOWN_TOPIC, e.reason(), e.getMessage());
                assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
            }
            // a partition the topic does not have
            RelayException e = failure(raw.pull(peer, new TopicPartition(real, 3), 0, 1000));
            assertEquals(RelayException.Reason.UNKNOWN_TOPIC, e.reason(), e.getMessage());
            assertEquals(21, relay.metrics().unknownTopics());
            assertEquals(50, pullToEnd(raw, peer, new TopicPartition(real, 0), 50));
            assertEquals(1, relay.metrics().sessionsOpened(), "the same stream served it all");
        }
        try (Admin admin = broker.admin()) {
            Set<String> topics = admin.listTopics().names().get(60, TimeUnit.SECONDS);
            for (String t : unknown) {
                assertFalse(topics.contains(t), t + " was created");
            }
        }
    }

    /**
     * Regression: a pull naming an invalid topic ("bad name!") reached the stream's Kafka consumer,
     * whose exception ended the stream: every other partition of the client failed. Now it is
     * answered UNKNOWN_TOPIC and the stream serves the next pull.
     */
    @Test
    void anInvalidTopicNameIsRefusedAndTheStreamGoesOn() throws Exception {
        String real = topicWithRecords(KafkaBroker.shared(), 30);
        try (KafkaRelay relay = TestRelays.start();
                RawRelayClient raw = new RawRelayClient(relay)) {
            ApproxPeer peer = raw.connect();
            raw.open(peer, null).get(LIVENESS_S, TimeUnit.SECONDS);
            for (String bad : List.of("bad name!", "..", "quote\"topic", "t\u00e9")) {
                RelayException e = failure(raw.pull(peer, new TopicPartition(bad, 0), 0, 1000));
                assertEquals(RelayException.Reason.UNKNOWN_TOPIC, e.reason(), e.getMessage());
                assertTrue(e.getMessage().contains("invalid topic name"), e.getMessage());
            }
            assertEquals(30, pullToEnd(raw, peer, new TopicPartition(real, 0), 30));
            assertEquals(1, relay.sessionCount());
            assertEquals(1, relay.metrics().sessionsOpened());
        }
    }

    /**
     * Regression: a stream kept an entry for every partition it ever pulled, also after RELEASE
     * (and after refusing an unknown one): its memory grew with every name a client sent. Now a
     * release or a refusal forgets the partition, and a pull older than the release is still
     * recognised as stale.
     */
    @Test
    void releasedAndRefusedPartitionsLeaveNothingInTheStream() throws Exception {
        int n = 40;
        String topic = KafkaBroker.unique("many");
        KafkaBroker.shared().createTopic(topic, n);
        // every pull at once: the client's share of serving threads must hold them all
        try (KafkaRelay relay = TestRelays.start(b -> b.serveThreads(48).maxPullsPerClient(48));
                RawRelayClient raw = new RawRelayClient(relay)) {
            ApproxPeer peer = raw.connect();
            raw.open(peer, null).get(LIVENESS_S, TimeUnit.SECONDS);
            List<TopicPartition> tps = new ArrayList<>();
            List<CompletableFuture<SegmentHeader>> pulls = new ArrayList<>();
            for (int p = 0; p < n; p++) {
                TopicPartition tp = new TopicPartition(topic, p);
                tps.add(tp);
                pulls.add(raw.pull(peer, tp, 0, 100));
            }
            for (CompletableFuture<SegmentHeader> f : pulls) {
                assertEquals(0, f.get(LIVENESS_S, TimeUnit.SECONDS).to());
            }
            for (int i = 0; i < 25; i++) {
                failure(raw.pull(peer, new TopicPartition(KafkaBroker.unique("nope"), 0), 0, 100));
            }
            assertEquals(n, relay.trackedPartitions(), "the partitions it reads, nothing more");
            long release = raw.nextSeq();
            raw.release(peer, tps, release).get(LIVENESS_S, TimeUnit.SECONDS);
            assertEquals(0, relay.trackedPartitions(), "a released partition is forgotten");

            // a pull the client sent before that release, arriving late: still stale
            RelayException stale = failure(raw.pull(peer, tps.get(0), 0, 100, release - 1));
            assertEquals(RelayException.Reason.SUPERSEDED, stale.reason());
            // a pull after it reads the partition again
            assertEquals(
                    0, raw.pull(peer, tps.get(1), 0, 100).get(LIVENESS_S, TimeUnit.SECONDS).to());
            assertEquals(1, relay.trackedPartitions());
        }
    }
}
