package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A relay serves requests on a pool of threads, so a request the consumer sent earlier can reach
 * its stream after a later one. These tests force that order (the relay's {@link
 * KafkaRelay.PullHook} holds the earlier request until the later one was registered) for the three
 * ways a consumer abandons a pull: a seek, giving a partition up (assign, rebalance) and taking it
 * back. The late request must neither supersede the newer pull nor release the partition again.
 */
class PullOrderTest {
    private static final String SECRET = TestRelays.SECRET;
    private static final int PER_WINDOW = 100;
    private static KafkaRelay relay;

    @BeforeAll
    static void startRelay() throws Exception {
        relay = TestRelays.start(b -> b.serveThreads(8));
    }

    @AfterAll
    static void stopRelay() {
        relay.close();
    }

    /** Two windows of {@value #PER_WINDOW} records per partition: the first segment is [0, 100). */
    private static String topic(int partitions) throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        String topic = KafkaBroker.unique("order");
        broker.createTopic(topic, partitions);
        long base = System.currentTimeMillis() - 60_000;
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        for (int part = 0; part < partitions; part++) {
            for (int i = 0; i < 2 * PER_WINDOW; i++) {
                long ts = base + (i < PER_WINDOW ? 0 : 1000);
                records.add(new ProducerRecord<>(topic, part, ts, "k" + i, "v" + i));
            }
        }
        try (KafkaProducer<String, String> p = broker.stringProducer()) {
            KafkaBroker.sendAll(p, records);
        }
        return topic;
    }

    private static Consumer<String, String> consumer() throws Exception {
        Properties p = KafkaBroker.shared().stringConsumerProps(KafkaBroker.unique("g"));
        p.put("approx.enable", "true");
        p.put("approx.window.ms", "100");
        p.put("approx.window.grace.ms", "0");
        p.put("approx.emax", "0.001"); // cells of 100 records are taken whole
        p.put("approx.auth.secret", SECRET);
        for (int id : KafkaBroker.shared().brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        return ApproxConsumers.create(p);
    }

    /**
     * Holds the first request that {@code held} matches until a request that {@code newer} matches
     * was registered by the session (or 30 s passed: then {@link #timedOut} is set).
     */
    private static final class HoldUntilNewer implements KafkaRelay.PullHook {
        final Predicate<RelayProtocol.Request> held;
        final Predicate<RelayProtocol.Request> newer;
        final AtomicBoolean holding = new AtomicBoolean();
        final CountDownLatch heldArrived = new CountDownLatch(1);
        final CountDownLatch newerRegistered = new CountDownLatch(1);
        volatile boolean timedOut;
        volatile boolean released;

        HoldUntilNewer(
                Predicate<RelayProtocol.Request> held, Predicate<RelayProtocol.Request> newer) {
            this.held = held;
            this.newer = newer;
        }

        @Override
        public void before(RelayProtocol.Request r) throws InterruptedException {
            if (held.test(r) && holding.compareAndSet(false, true)) {
                heldArrived.countDown();
                timedOut = !newerRegistered.await(180, TimeUnit.SECONDS);
                released = true;
            }
        }

        @Override
        public void registered(RelayProtocol.Request r) {
            if (newer.test(r) && holding.get()) {
                newerRegistered.countDown();
            }
        }
    }

    private static Predicate<RelayProtocol.Request> pullOf(TopicPartition tp, long from) {
        return r ->
                r instanceof RelayProtocol.Pull p && p.partition().equals(tp) && p.from() == from;
    }

    /** Polls until {@code wanted} records of {@code tp} arrived; returns their offsets. */
    private static List<Long> offsets(Consumer<String, String> c, TopicPartition tp, int wanted) {
        List<Long> got = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
        while (got.size() < wanted && System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100))) {
                if (r.partition() == tp.partition()) {
                    got.add(r.offset());
                }
            }
        }
        return got;
    }

    private static List<Long> range(long from, long to) {
        List<Long> l = new ArrayList<>();
        for (long o = from; o < to; o++) {
            l.add(o);
        }
        return l;
    }

    @Test
    void aPullFromBeforeASeekThatArrivesLastDoesNotSupersedeTheSeek() throws Exception {
        TopicPartition tp = new TopicPartition(topic(1), 0);
        // the read-ahead pull from 100 (sent with the first segment) reaches the session only
        // after the pull from 50 that the seek sent
        HoldUntilNewer hook = new HoldUntilNewer(pullOf(tp, 100), pullOf(tp, 50));
        relay.pullHook(hook);
        try (Consumer<String, String> c = consumer()) {
            c.assign(List.of(tp));
            assertEquals(range(0, 100), offsets(c, tp, 100));
            assertTrue(hook.heldArrived.await(180, TimeUnit.SECONDS), "read-ahead pull sent");
            c.seek(tp, 50);
            assertEquals(range(50, 200), offsets(c, tp, 150));
            assertEquals(200, c.position(tp));
        } finally {
            relay.pullHook(KafkaRelay.PullHook.NONE);
        }
        assertTrue(hook.released && !hook.timedOut, "the old pull reached the session last");
    }

    @Test
    void aReleaseThatArrivesAfterThePartitionWasTakenBackDoesNotDropIt() throws Exception {
        String topic = topic(2);
        TopicPartition tp0 = new TopicPartition(topic, 0);
        TopicPartition tp1 = new TopicPartition(topic, 1);
        HoldUntilNewer hook =
                new HoldUntilNewer(
                        r ->
                                r instanceof RelayProtocol.Release rel
                                        && rel.partitions().contains(tp0),
                        pullOf(tp0, 0));
        relay.pullHook(hook);
        try (Consumer<String, String> c = consumer()) {
            c.assign(List.of(tp0, tp1));
            assertEquals(range(0, 100), offsets(c, tp0, 100));
            c.assign(List.of(tp1)); // gives tp0 up: RELEASE, held at the relay
            assertTrue(hook.heldArrived.await(180, TimeUnit.SECONDS), "release sent");
            c.assign(List.of(tp0, tp1)); // takes it back: a pull from 0 (no commit)
            assertEquals(range(0, 200), offsets(c, tp0, 200));
        } finally {
            relay.pullHook(KafkaRelay.PullHook.NONE);
        }
        assertTrue(hook.released && !hook.timedOut, "the release reached the session last");
    }
}
