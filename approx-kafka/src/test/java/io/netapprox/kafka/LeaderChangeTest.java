package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.Records.Polled;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayConfig;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Two brokers, a relay beside each serving only what its broker leads: when the partition's
 * leadership moves mid-stream, the old relay answers NOT_LEADER with the new leader's id and the
 * consumer continues at its coverage position through the new leader's relay - no gap, no record
 * counted twice.
 */
class LeaderChangeTest {
    @Test
    void aLeaderChangeReroutesToTheNewLeadersRelayWithoutAGap() throws Exception {
        KafkaBroker cluster = KafkaBroker.cluster(2);
        List<KafkaRelay> relays = new ArrayList<>();
        try {
            String topic = KafkaBroker.unique("moving");
            cluster.createTopic(topic, 1, (short) 2);
            Records.produce(cluster, topic, 1, 3, List.of("a", "b"), 1000, 8);
            TopicPartition tp = new TopicPartition(topic, 0);
            Map<Integer, KafkaRelay> byBroker = new HashMap<>();
            Properties props = cluster.stringConsumerProps(KafkaBroker.unique("g"));
            props.put("approx.enable", "true");
            props.put("approx.stratum", "header:zone");
            props.put("approx.emax", "0.1");
            props.put("approx.seed", "3");
            props.put("approx.auth.secret", TestRelays.SECRET);
            props.put("max.poll.records", "100");
            props.put("approx.relay.pull.wait.ms", "500");
            for (int id : cluster.brokerIds()) {
                KafkaRelay r =
                        KafkaRelay.start(
                                RelayConfig.builder(cluster.bootstrapServers())
                                        .brokerId(id)
                                        .listen("127.0.0.1:0")
                                        .dataPort(0)
                                        .maxSegmentBytes(32 * 1024)
                                        // a cluster without ACLs
                                        .authorization(RelayConfig.Authorization.NONE)
                                        .secret(TestRelays.SECRET.getBytes(StandardCharsets.UTF_8))
                                        .build());
                relays.add(r);
                byBroker.put(id, r);
                props.put("approx.relay.address." + id, r.address());
            }
            Polled got = new Polled();
            int first;
            int second;
            try (Consumer<String, String> c = ApproxConsumers.create(props);
                    Admin admin = cluster.admin()) {
                c.assign(List.of(tp));
                while (got.ranges.size() < 3) {
                    got.add(c.poll(Duration.ofMillis(100)));
                }
                first = leader(admin, tp);
                second =
                        first == cluster.brokerIds().get(0)
                                ? cluster.brokerIds().get(1)
                                : cluster.brokerIds().get(0);
                admin.alterPartitionReassignments(
                                Map.of(
                                        tp,
                                        Optional.of(
                                                new NewPartitionReassignment(
                                                        List.of(second, first)))))
                        .all()
                        .get(30, TimeUnit.SECONDS);
                long deadline = System.nanoTime() + Records.LIVENESS.toNanos();
                while (leader(admin, tp) != second && System.nanoTime() < deadline) {
                    try {
                        admin.electLeaders(ElectionType.PREFERRED, java.util.Set.of(tp))
                                .all()
                                .get(10, TimeUnit.SECONDS);
                    } catch (java.util.concurrent.ExecutionException e) {
                        // not yet in sync: try again
                    }
                    got.add(c.poll(Duration.ofMillis(100)));
                }
                assertEquals(second, leader(admin, tp), "leadership moved");
                // the old relay notices within its metadata age (5 s) and leader check (2 s)
                KafkaRelay old = byBroker.get(first);
                deadline = System.nanoTime() + Records.LIVENESS.toNanos();
                while (old.metrics().failedPulls() == 0 && System.nanoTime() < deadline) {
                    got.add(c.poll(Duration.ofMillis(100)));
                }
                assertTrue(old.metrics().failedPulls() > 0, "the old relay said NOT_LEADER");
                // records written after the move come through the new leader's relay
                Records.produce(cluster, topic, 1, 1, List.of("a", "b"), 1000, 9);
                Records.pollToEnd(c, List.of(tp), 8000, got);
                assertEquals(8000, c.position(tp));
            }
            assertTrue(
                    byBroker.get(second).metrics().segmentsSent() > 0,
                    "the new leader's relay served the rest: " + byBroker.get(second).metrics());
            Map<Long, CoveredRange> byFrom = new HashMap<>();
            got.ranges.forEach(r -> byFrom.put(r.from(), r));
            long at = 0;
            long counted = 0;
            while (at < 8000) {
                CoveredRange r = byFrom.get(at);
                assertNotNull(r, "no range starts at " + at + " (coverage gap)");
                counted += r.cells().stream().mapToLong(Cell::count).sum();
                at = r.to();
            }
            assertEquals(8000, counted, "every record counted once along the coverage chain");
        } finally {
            relays.forEach(KafkaRelay::close);
            cluster.close();
        }
    }

    private static int leader(Admin admin, TopicPartition tp) throws Exception {
        return admin.describeTopics(List.of(tp.topic()))
                .allTopicNames()
                .get(30, TimeUnit.SECONDS)
                .get(tp.topic())
                .partitions()
                .get(tp.partition())
                .leader()
                .id();
    }
}
