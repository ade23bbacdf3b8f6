package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.kafka.ApproxConsumerRecords;
import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.relay.RelayProtocol.SegmentHeader;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * What one holder of the shared secret can take from a relay (issue 29): a pull held without end,
 * every serving thread, every stream. A raw client ({@link RawRelayClient}) plays the greedy
 * client; a real approximate consumer, another client, must still read everything.
 */
class RelayLimitsTest {
    /** A liveness bound on a loaded 2-core machine, not a timing check. */
    private static final long LIVENESS_S = 180;

    private static String idleTopic(int partitions) throws Exception {
        String topic = KafkaBroker.unique("idle");
        KafkaBroker.shared().createTopic(topic, partitions);
        return topic;
    }

    /** {@code perPartition} records in each of the first {@code filled} partitions. */
    private static String topic(int partitions, int filled, int perPartition) throws Exception {
        String topic = KafkaBroker.unique("limits");
        KafkaBroker.shared().createTopic(topic, partitions);
        long ts = System.currentTimeMillis() - 120_000; // a closed window
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int p = 0; p < filled; p++) {
            for (int i = 0; i < perPartition; i++) {
                records.add(new ProducerRecord<>(topic, p, ts, "k" + i, "v" + i));
            }
        }
        try (KafkaProducer<String, String> p = KafkaBroker.shared().stringProducer()) {
            KafkaBroker.sendAll(p, records);
        }
        return topic;
    }

    /** An approximate consumer of the relay; e_max small enough that every record is returned. */
    private static Consumer<String, String> consumer(KafkaRelay relay) throws Exception {
        Properties p = KafkaBroker.shared().stringConsumerProps(KafkaBroker.unique("g"));
        p.put("approx.enable", "true");
        p.put("approx.emax", "0.001");
        p.put("approx.window.grace.ms", "0");
        p.put("approx.relay.pull.wait.ms", "1000");
        p.put("approx.auth.secret", TestRelays.SECRET);
        for (int id : KafkaBroker.shared().brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        return ApproxConsumers.create(p);
    }

    /**
     * Polls until the first {@code filled} partitions are covered to {@code end} and the counts of
     * the ranges returned add up to {@code filled * end}; returns that sum.
     */
    private static long readAll(
            Consumer<String, String> c, List<TopicPartition> tps, int filled, long end) {
        c.assign(tps);
        long counted = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
        while (System.nanoTime() < deadline) {
            for (ApproxConsumerRecords.CoveredRange r :
                    ApproxConsumerRecords.rangesOf(c.poll(Duration.ofMillis(100)))) {
                counted += r.cells().stream().mapToLong(Cell::count).sum();
            }
            if (counted >= filled * end
                    && tps.subList(0, filled).stream().allMatch(tp -> c.position(tp) >= end)) {
                return counted;
            }
        }
        throw new AssertionError(
                "the consumer did not reach the end of " + tps + " in " + LIVENESS_S + " s");
    }

    private static RelayException failure(CompletableFuture<?> f) {
        ExecutionException e =
                assertThrows(ExecutionException.class, () -> f.get(LIVENESS_S, TimeUnit.SECONDS));
        return assertInstanceOf(RelayException.class, e.getCause());
    }

    /**
     * Regression: a PULL may ask for a wait of up to 2^31-1 ms and the relay held it (and its
     * serving thread) that long. Now it is answered, empty, after the relay's maxPullWaitMs.
     */
    @Test
    void aPullAskingToWaitForeverIsAnsweredAfterTheRelaysMaximumWait() throws Exception {
        TopicPartition tp = new TopicPartition(idleTopic(1), 0);
        try (KafkaRelay relay = TestRelays.start(b -> b.maxPullWaitMs(500));
                RawRelayClient raw = new RawRelayClient(relay)) {
            ApproxPeer peer = raw.connect();
            raw.open(peer, null).get(LIVENESS_S, TimeUnit.SECONDS);
            // the client is its IP address by default
            assertEquals(1, relay.clients().get("127.0.0.1").streams(), relay.clients().toString());
            SegmentHeader h =
                    raw.pull(peer, tp, 0, Integer.MAX_VALUE).get(LIVENESS_S, TimeUnit.SECONDS);
            assertEquals(0, h.from());
            assertEquals(0, h.to(), "nothing covered: the partition is empty");
            assertEquals(0, h.records());
            assertEquals(1, relay.metrics().clampedWaits());
        }
    }

    /**
     * Regression: the serving threads were shared first come, first served: one client's long pulls
     * held every one of them and another consumer waited behind them. Now a client holds at most
     * maxPullsPerClient (default: half the threads); its further requests are answered THROTTLED at
     * once, and a consumer that is throttled itself retries and reads everything.
     */
    @Test
    void oneClientHoldsAtMostItsShareOfTheServingThreads() throws Exception {
        TopicPartition[] held = new TopicPartition[20];
        String idle = idleTopic(held.length);
        for (int i = 0; i < held.length; i++) {
            held[i] = new TopicPartition(idle, i);
        }
        // 6 partitions, 4 of them idle: the consumer's idle pulls hold its own share for a second
        String read = topic(6, 2, 200);
        // 16 threads, 4 per client: the greedy client's 4 and the consumer's 6 pulls all get a
        // thread, so the consumer's 5th and 6th are throttled rather than queued
        try (KafkaRelay relay =
                        TestRelays.start(
                                b ->
                                        b.serveThreads(16)
                                                .maxPullsPerClient(4)
                                                .maxPullWaitMs(600_000));
                RawRelayClient raw = new RawRelayClient(relay)) {
            assertEquals(8, RelayConfig.defaultMaxPullsPerClient(16), "default: half the threads");
            int rawPort = raw.dataPort();
            relay.clientIdentity(p -> p.peerDataAddress().getPort() == rawPort ? "raw" : "other");
            ApproxPeer peer = raw.connect();
            raw.open(peer, null).get(LIVENESS_S, TimeUnit.SECONDS);
            List<CompletableFuture<SegmentHeader>> pulls = new ArrayList<>();
            for (TopicPartition tp : held) {
                pulls.add(raw.pull(peer, tp, 0, 600_000)); // nothing comes: held 10 minutes
            }
            int throttled = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
            while (throttled < held.length - 4 && System.nanoTime() < deadline) {
                throttled = 0;
                for (CompletableFuture<SegmentHeader> f : pulls) {
                    if (f.isCompletedExceptionally()) {
                        assertEquals(RelayException.Reason.THROTTLED, failure(f).reason());
                        throttled++;
                    }
                }
                Thread.sleep(20);
            }
            assertEquals(held.length - 4, throttled, "all but the client's share answered at once");
            assertEquals(4, relay.clients().get("raw").requests());

            List<TopicPartition> tps = new ArrayList<>();
            for (int p = 0; p < 6; p++) {
                tps.add(new TopicPartition(read, p));
            }
            try (Consumer<String, String> c = consumer(relay)) {
                assertEquals(
                        400, readAll(c, tps, 2, 200), "every record of the other client counted");
                for (int p = 0; p < 2; p++) {
                    assertEquals(200, c.position(tps.get(p)));
                }
            }
            assertTrue(
                    relay.metrics().throttled() > held.length - 4,
                    "the consumer's own pulls beyond its share were throttled too: "
                            + relay.metrics());
            assertEquals(4, relay.clients().get("raw").requests(), "still held");
        }
    }

    /**
     * Regression: the stream limit was relay-wide, so one client with maxSessions connections took
     * every slot. Now a client opens at most maxStreamsPerClient (default: a quarter of
     * maxSessions); a connection that ends frees its slot.
     */
    @Test
    void oneClientOpensAtMostItsShareOfTheStreams() throws Exception {
        String read = topic(1, 1, 100);
        try (KafkaRelay relay = TestRelays.start(b -> b.maxSessions(8));
                RawRelayClient raw = new RawRelayClient(relay)) {
            assertEquals(2, relay.config().maxStreamsPerClient(), "default: a quarter of 8");
            int rawPort = raw.dataPort();
            relay.clientIdentity(p -> p.peerDataAddress().getPort() == rawPort ? "raw" : "other");
            List<ApproxPeer> peers = new ArrayList<>();
            int refused = 0;
            for (int i = 0; i < 8; i++) {
                ApproxPeer peer = raw.connect();
                peers.add(peer);
                try {
                    raw.open(peer, null).get(LIVENESS_S, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    RelayException re = assertInstanceOf(RelayException.class, e.getCause());
                    assertEquals(RelayException.Reason.UNAVAILABLE, re.reason());
                    assertTrue(re.getMessage().contains("maxStreamsPerClient"), re.getMessage());
                    refused++;
                }
            }
            assertEquals(6, refused);
            assertEquals(2, relay.sessionCount());
            assertEquals(6, relay.metrics().streamsRefused());

            TopicPartition tp = new TopicPartition(read, 0);
            try (Consumer<String, String> c = consumer(relay)) {
                assertEquals(100, readAll(c, List.of(tp), 1, 100), "the other client is served");
            }

            peers.get(0).close(); // its stream ends with the connection: the slot is free again
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LIVENESS_S);
            while (relay.clients().get("raw").streams() > 1 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            ApproxPeer again = raw.connect();
            raw.open(again, null).get(LIVENESS_S, TimeUnit.SECONDS);
            assertEquals(2, relay.clients().get("raw").streams());
        }
    }
}
