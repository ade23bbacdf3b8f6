package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.FallbackLab;
import io.netapprox.kafka.Records.Polled;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayException;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Run in a JVM without an ATP path (not by surefire: the name is no test's): by {@link
 * UdpBlockedFallbackTest} inside a namespace that drops UDP (the consumer cannot reach the relay's
 * engine), by {@link NativeUnavailableFallbackTest} with the native library blocked (neither has an
 * engine). A real broker, a relay on {@code auto} and the approximate consumer: with {@code
 * approx.data.plane=auto} every record is covered and every segment comes over TCP; with {@code
 * atp} the consumer fails naming the cause.
 */
class TcpFallbackCase {
    private static final int PARTITIONS = 2;
    private static final int PER_CELL = 800;
    private static final List<String> ZONES = List.of("a", "b", "c");
    private static KafkaRelay relay;
    private static FallbackLab.Cause cause;

    @BeforeAll
    static void start() throws Exception {
        cause = FallbackLab.current();
        relay = TestRelays.start();
    }

    @AfterAll
    static void stop() {
        if (relay != null) {
            relay.close();
        }
    }

    private static String topic(String name) throws Exception {
        String topic = KafkaBroker.unique(name);
        KafkaBroker.shared().createTopic(topic, PARTITIONS);
        Records.produce(topic, PARTITIONS, 2, ZONES, PER_CELL, 3);
        return topic;
    }

    private static Properties props(String dataPlane) throws Exception {
        Properties props = Records.approxProps(KafkaBroker.unique("g"), relay.address());
        props.put("approx.data.plane", dataPlane);
        props.put("approx.udp.probe.timeout.ms", "500");
        return props;
    }

    @Test
    void autoCoversEveryRecordOverTcp() throws Exception {
        String topic = topic("fallback-auto");
        long segmentsBefore = relay.metrics().segmentsSent();
        long overTcpBefore = relay.metrics().segmentsSentOverTcp();
        List<TopicPartition> parts =
                List.of(new TopicPartition(topic, 0), new TopicPartition(topic, 1));
        long perPartition = 2L * ZONES.size() * PER_CELL;
        Polled got;
        try (Consumer<String, String> c = ApproxConsumers.create(props("auto"))) {
            c.subscribe(List.of(topic));
            got = Records.pollToEnd(c, parts, perPartition, new Polled());
            for (TopicPartition tp : parts) {
                assertEquals(perPartition, c.position(tp), tp + " read to its end");
            }
            String metric =
                    cause == FallbackLab.Cause.UDP_BLOCKED
                            ? "udp-probe-fallbacks"
                            : "native-fallbacks";
            double fallbacks = Records.approxMetric(c, metric);
            double tcpPeers = Records.approxMetric(c, "tcp-peers");
            System.out.printf(
                    "[lab] kafka auto, consumer metrics: %s %.0f, tcp-peers %.0f%n",
                    metric, fallbacks, tcpPeers);
            assertTrue(fallbacks >= 1, "the consumer's metric counts the fallback");
            assertTrue(tcpPeers >= 1, "the relay is a TCP peer");
        }
        long segments = relay.metrics().segmentsSent() - segmentsBefore;
        long overTcp = relay.metrics().segmentsSentOverTcp() - overTcpBefore;
        System.out.printf(
                "[lab] kafka auto, %s: %d segments, %d over TCP; relay planes %s%n",
                cause, segments, overTcp, relay.dataPlaneMetrics());
        for (TopicPartition tp : parts) {
            assertEquals(perPartition, got.countedRecords(tp, perPartition), tp + " counted");
        }
        assertTrue(segments > 0, "segments sent");
        assertEquals(segments, overTcp, "every segment over TCP");
    }

    @Test
    void atpFailsNamingTheCause() throws Exception {
        String topic = topic("fallback-atp");
        RelayException e;
        try (Consumer<String, String> c = ApproxConsumers.create(props("atp"))) {
            c.subscribe(List.of(topic));
            e = Records.pollUntilRelayException(c, null);
        }
        StringBuilder chain = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            chain.append(t).append('\n');
        }
        System.out.printf("[lab] kafka atp, %s: %s%n", cause, chain);
        assertTrue(chain.toString().contains(cause.atpFailure), chain.toString());
    }
}
