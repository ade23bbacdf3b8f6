package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.Records.Polled;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * MSR = 1 means exact and in order, also when the network loses datagrams: with an e_max so tight
 * that every cell's planned sample is the whole cell, a consumer behind a relay whose ATP engine
 * drops 30 % of its outgoing datagrams returns every record of every partition once, in offset
 * order, with weight 1, and its position reaches the end. ATP retransmits what MSR-1 groups lose;
 * nothing may be given up.
 */
class ExactUnderLossTest {
    private static final List<String> ZONES = List.of("a", "b", "c", "d");
    private static final int PER_CELL = 300;

    @Test
    void cellsTakenWholeArriveCompleteAndInOffsetOrderWith30PercentLoss() throws Exception {
        String topic = "exact-under-loss";
        KafkaBroker.shared().createTopic(topic, 2);
        Records.produce(topic, 2, 2, ZONES, PER_CELL, 77);
        long perPartition = 2L * ZONES.size() * PER_CELL;
        List<TopicPartition> tps =
                List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        Polled got;
        long dropped;
        try (KafkaRelay relay =
                TestRelays.start(
                        b ->
                                b.atp(
                                        ApproxTransportConfig.defaultAtp()
                                                .faultInjection(0.3, 0.0, 5)
                                                .build()))) {
            Properties p = Records.approxProps(KafkaBroker.unique("g"), relay.address());
            p.put("approx.emax", "0.001"); // the planned sample of a 300-record cell is all of it
            try (Consumer<String, String> c = ApproxConsumers.create(p)) {
                c.assign(tps);
                got = Records.pollToEnd(c, tps, perPartition, new Polled());
                for (TopicPartition tp : tps) {
                    assertEquals(perPartition, c.position(tp), tp + " position");
                }
            }
            dropped = relay.engineStats().get("dropped_fault_out");
        }
        assertTrue(dropped > 0, "the loss was injected");

        Map<Integer, Long> next = new HashMap<>();
        for (ConsumerRecord<String, String> r : got.records) {
            long expected = next.getOrDefault(r.partition(), 0L);
            assertEquals(expected, r.offset(), "partition " + r.partition() + ": in offset order");
            next.put(r.partition(), expected + 1);
            assertEquals(1.0, ApproxHeaders.weight(r), "weight of " + r.offset());
        }
        for (TopicPartition tp : tps) {
            assertEquals(perPartition, next.get(tp.partition()), tp + ": every record once");
        }
        long counted = 0;
        for (CoveredRange range : got.ranges) {
            for (Cell cell : range.cells()) {
                assertEquals(cell.count(), cell.target(), "taken whole: " + cell);
                assertEquals(cell.count(), cell.sampled(), "delivered whole: " + cell);
                counted += cell.count();
            }
        }
        assertEquals(2 * perPartition, counted, "exact counts");
    }
}
