package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netapprox.kafka.Records.Polled;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayClient;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * Two approximate consumers in one JVM share one ATP endpoint (one engine, one UDP socket), each
 * with its own relay connection: both read everything, closing the first leaves the second working,
 * and the endpoint closes with the last consumer.
 */
class SharedEndpointTest {
    private static final List<String> ZONES = List.of("a", "b");

    @Test
    void twoConsumersShareOneEndpointClosedWithTheLast() throws Exception {
        String topic = KafkaBroker.unique("shared-endpoint");
        KafkaBroker.shared().createTopic(topic, 1);
        List<TopicPartition> tps = List.of(new TopicPartition(topic, 0));
        Records.produce(topic, 1, 1, ZONES, 300, 7);
        long firstEnd = ZONES.size() * 300;
        try (KafkaRelay relay = TestRelays.start()) {
            int before = RelayClient.sharedTransports();
            Consumer<String, String> first =
                    ApproxConsumers.create(
                            Records.approxProps(KafkaBroker.unique("g1"), relay.address()));
            Properties p2 = Records.approxProps(KafkaBroker.unique("g2"), relay.address());
            p2.put("approx.seed", "12");
            try (Consumer<String, String> second = ApproxConsumers.create(p2)) {
                first.assign(tps);
                second.assign(tps);
                Polled a = Records.pollToEnd(first, tps, firstEnd, new Polled());
                Polled b = Records.pollToEnd(second, tps, firstEnd, new Polled());
                assertEquals(firstEnd, first.position(tps.get(0)));
                assertEquals(firstEnd, second.position(tps.get(0)));
                assertEquals(firstEnd, a.countedRecords(tps.get(0), firstEnd));
                assertEquals(firstEnd, b.countedRecords(tps.get(0), firstEnd));
                assertEquals(before + 1, RelayClient.sharedTransports(), "one endpoint");
                assertEquals(2, relay.metrics().sessionsOpened(), "a connection per consumer");

                first.close();
                assertEquals(before + 1, RelayClient.sharedTransports());
                // the second consumer still reads: the next window's records
                Records.produce(KafkaBroker.shared(), topic, 1, 2, ZONES, 300, 8);
                long end = firstEnd + 2L * ZONES.size() * 300;
                Polled more = Records.pollToEnd(second, tps, end, new Polled());
                assertEquals(end, second.position(tps.get(0)));
                assertEquals(end - firstEnd, more.countedRecords(tps.get(0), end));
            }
            assertEquals(before, RelayClient.sharedTransports(), "closed with the last");
        }
    }
}
