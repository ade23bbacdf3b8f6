package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.Records.Polled;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.SlowPolls;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Partitions given up and taken back while a producer writes (issue 29, item 3): every covered
 * range must count every record in it. The topics are written by an idempotent, non-transactional
 * producer, so every offset is a record and a range {@code [from, to)} must count exactly {@code to
 * - from} records; the ranges of each partition must together cover it from 0 to its end.
 *
 * <p>Before the fix, a RELEASE and a new PULL of a partition that reached the relay while its log
 * reader was inside {@code poll} made a new {@code PartitionReader} whose generation restarted at
 * the old one's value, so the fetch issued for the old reader (at the old reader's read-ahead
 * position) was applied to the new one: the new segment started at the consumer's position but
 * counted only the records from the old read-ahead position on.
 */
class ReassignmentRaceTest {
    private static final int PARTITIONS = 2;
    private static final int STORM_PARTITIONS = 4;
    private static final int PER_PARTITION = 3000;
    private static final int WINDOWS = 3;

    /** Segments of at most 32 KiB: many segments, so many read-aheads to race with. */
    private static KafkaRelay relay;

    /**
     * The same, for the storm, with {@link SlowPolls}: a log reader's poll during which a partition
     * it fetched was given up ends only once the partition was pulled again (at most 1 s later), as
     * a poll on a loaded relay machine can take that long. Members of a group give their partitions
     * up and take them back across a rebalance, which takes longer than an idle machine's poll.
     */
    private static KafkaRelay slow;

    private static SlowPolls slowPolls;

    @BeforeAll
    static void start() throws Exception {
        relay = TestRelays.start(b -> b.maxSegmentBytes(32 * 1024));
        slow = TestRelays.start(b -> b.maxSegmentBytes(32 * 1024));
        slowPolls = SlowPolls.install(slow, Duration.ofSeconds(1));
    }

    @AfterAll
    static void stop() {
        relay.close();
        slow.close();
    }

    @Test
    void reassigningThePartitionsWhileProducingCountsEveryRecordOfEveryRange() throws Exception {
        String topic = KafkaBroker.unique("reassign");
        List<TopicPartition> tps = createTopic(topic, PARTITIONS);
        List<CoveredRange> ranges = new ArrayList<>();
        int reassignments = 0;
        long coveredAtLast = 0;
        try (LiveProducer producer = new LiveProducer(topic, PARTITIONS, 1);
                Consumer<String, String> c = ApproxConsumers.create(props())) {
            c.assign(tps);
            Polled got = new Polled();
            long deadline = System.nanoTime() + Records.LIVENESS.toNanos();
            while (System.nanoTime() < deadline) {
                got.add(c.poll(Duration.ofMillis(50)));
                if (producer.isDone() && atEnd(List.of(c), tps)) {
                    break;
                }
                long covered = coveredSum(c, tps);
                if (covered > coveredAtLast) {
                    // once the coverage moved: the consumer progresses between reassignments, and
                    // the pulls they cancel stay few (each cancelled job holds one of the relay
                    // session's ATP job slots until its report times out)
                    coveredAtLast = covered;
                    Map<TopicPartition, Long> at = new HashMap<>();
                    tps.forEach(tp -> at.put(tp, c.position(tp)));
                    c.assign(List.of());
                    c.assign(tps);
                    at.forEach(c::seek);
                    reassignments++;
                }
            }
            assertTrue(producer.isDone() && atEnd(List.of(c), tps), "the consumer reached the end");
            ranges.addAll(got.ranges);
        }
        System.out.printf("reassign: %d reassignments, %d ranges%n", reassignments, ranges.size());
        assertEveryRangeCountsEveryRecord(ranges, tps);
    }

    @Test
    void unsubscribingAndSubscribingWhileProducingCountsEveryRecordOfEveryRange() throws Exception {
        String topic = KafkaBroker.unique("resubscribe");
        List<TopicPartition> tps = createTopic(topic, PARTITIONS);
        List<CoveredRange> ranges = new ArrayList<>();
        int resubscriptions = 0;
        long coveredAtLast = 0;
        try (LiveProducer producer = new LiveProducer(topic, PARTITIONS, 2);
                Consumer<String, String> c = ApproxConsumers.create(props())) {
            c.subscribe(List.of(topic));
            Polled got = new Polled();
            long deadline = System.nanoTime() + Records.LIVENESS.toNanos();
            while (System.nanoTime() < deadline) {
                got.add(c.poll(Duration.ofMillis(50)));
                if (producer.isDone()
                        && c.assignment().size() == PARTITIONS
                        && atEnd(List.of(c), tps)) {
                    break;
                }
                long covered = coveredSum(c, tps);
                if (c.assignment().size() == PARTITIONS && covered > coveredAtLast) {
                    coveredAtLast = covered; // once the coverage moved: progress between them
                    c.commitSync(); // the next subscription resumes at the coverage committed here
                    c.unsubscribe();
                    c.subscribe(List.of(topic));
                    resubscriptions++;
                }
            }
            assertTrue(producer.isDone() && atEnd(List.of(c), tps), "the consumer reached the end");
            ranges.addAll(got.ranges);
        }
        System.out.printf(
                "resubscribe: %d resubscriptions, %d ranges%n", resubscriptions, ranges.size());
        assertEveryRangeCountsEveryRecord(ranges, tps);
    }

    /**
     * A rebalance storm while the producer writes: three members of one group, each polling in its
     * own thread; every second one of them enforces a rebalance, every third time the oldest is
     * replaced instead (eager rebalances: every member gives its partitions up and takes its share
     * back - the same partitions when the members stay -, committing its coverage when partitions
     * are revoked).
     */
    @Test
    void aRebalanceStormCountsEveryRecordOfEveryRange() throws Exception {
        String topic = KafkaBroker.unique("storm");
        List<TopicPartition> tps = createTopic(topic, STORM_PARTITIONS);
        String group = KafkaBroker.unique("g");
        long sessionsBefore = slow.metrics().sessionsOpened();
        List<Member> all = new ArrayList<>();
        List<Member> members = new ArrayList<>();
        int rebalances = 0;
        try (LiveProducer producer = new LiveProducer(topic, STORM_PARTITIONS, 3)) {
            for (int i = 0; i < 3; i++) {
                members.add(new Member(group, topic));
            }
            all.addAll(members);
            for (int tick = 1; !producer.isDone(); tick++) {
                Thread.sleep(1000);
                if (tick % 3 == 0) {
                    members.remove(0).stop(); // leaves the group: its revocation commits
                    Member joining = new Member(group, topic);
                    members.add(joining);
                    all.add(joining);
                } else {
                    members.get(tick % members.size()).rebalance = true;
                    rebalances++;
                }
            }
            long deadline = System.nanoTime() + Records.LIVENESS.toNanos();
            while (System.nanoTime() < deadline && !groupAtEnd(members, tps)) {
                Thread.sleep(50);
            }
            assertTrue(groupAtEnd(members, tps), "the group reached the end");
        } finally {
            for (Member m : members) {
                m.stop();
            }
        }
        long sessions = slow.metrics().sessionsOpened() - sessionsBefore;
        List<CoveredRange> ranges = new ArrayList<>();
        for (Member m : all) {
            m.check();
            ranges.addAll(m.polled.ranges);
        }
        System.out.printf(
                "storm: %d members, %d rebalances enforced, %d relay sessions, %d polls held until"
                        + " a partition was taken back, %d ranges%n",
                all.size(), rebalances, sessions, slowPolls.held(), ranges.size());
        assertEveryRangeCountsEveryRecord(ranges, tps);
        assertTrue(all.size() >= 5 && slowPolls.held() > 0, "a storm took place");
    }

    /** Whether the members' positions (as last published) cover every partition to its end. */
    private static boolean groupAtEnd(List<Member> members, List<TopicPartition> tps) {
        Map<TopicPartition, Long> at = new HashMap<>();
        for (Member m : members) {
            at.putAll(m.positions);
        }
        return tps.stream().allMatch(tp -> at.getOrDefault(tp, 0L) >= PER_PARTITION);
    }

    /**
     * A group member polling in its own thread (a consumer is single-threaded): what it polled, and
     * its assigned partitions' positions after each poll.
     */
    private static final class Member {
        final Polled polled = new Polled();
        private final Thread thread;
        private volatile boolean stopping;
        volatile boolean rebalance;
        private volatile Map<TopicPartition, Long> positions = Map.of();
        private volatile Throwable failure;

        Member(String group, String topic) throws Exception {
            Properties p = props(group, slow);
            // rebalances noticed within 100 ms, so they follow each other quickly
            p.put("heartbeat.interval.ms", "100");
            // a segment is handed out over several polls, so a member's coverage position lags
            // behind the relay's read-ahead when its partitions are revoked
            p.put("max.poll.records", "5");
            Consumer<String, String> c = ApproxConsumers.create(p);
            thread = new Thread(() -> run(c, topic), "storm-member");
            thread.start();
        }

        private void run(Consumer<String, String> c, String topic) {
            try (c) {
                c.subscribe(
                        List.of(topic),
                        new ConsumerRebalanceListener() {
                            @Override
                            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                                c.commitSync();
                                positions = Map.of();
                            }

                            @Override
                            public void onPartitionsAssigned(
                                    Collection<TopicPartition> partitions) {}
                        });
                while (!stopping) {
                    if (rebalance) {
                        rebalance = false;
                        c.enforceRebalance("storm");
                    }
                    polled.add(c.poll(Duration.ofMillis(20)));
                    Map<TopicPartition, Long> at = new HashMap<>();
                    c.assignment().forEach(tp -> at.put(tp, c.position(tp)));
                    positions = Map.copyOf(at);
                }
            } catch (Throwable t) {
                failure = t;
            }
        }

        void stop() throws InterruptedException {
            stopping = true;
            thread.join(Records.LIVENESS.toMillis());
            check();
        }

        void check() {
            if (failure != null) {
                throw new AssertionError("a member failed", failure);
            }
            assertTrue(!thread.isAlive(), "a member did not stop");
        }
    }

    /**
     * Every range counts exactly the records of its offsets, and each partition's ranges cover it
     * from 0 to the end without a gap.
     */
    private static void assertEveryRangeCountsEveryRecord(
            List<CoveredRange> ranges, List<TopicPartition> tps) {
        List<String> wrong = new ArrayList<>();
        long missing = 0;
        for (CoveredRange r : ranges) {
            long counted = r.cells().stream().mapToLong(Cell::count).sum();
            if (counted != r.to() - r.from()) {
                wrong.add(r.partition() + " [" + r.from() + ", " + r.to() + ") counted " + counted);
                missing += r.to() - r.from() - counted;
            }
        }
        assertTrue(
                wrong.isEmpty(),
                wrong.size()
                        + " of "
                        + ranges.size()
                        + " ranges do not count every record in them ("
                        + missing
                        + " records short): "
                        + wrong.subList(0, Math.min(10, wrong.size())));
        for (TopicPartition tp : tps) {
            List<CoveredRange> mine =
                    new ArrayList<>(ranges.stream().filter(r -> r.partition().equals(tp)).toList());
            mine.sort(Comparator.comparingLong(CoveredRange::from));
            long covered = 0;
            for (CoveredRange r : mine) {
                assertTrue(
                        r.from() <= covered,
                        tp + ": coverage gap [" + covered + ", " + r.from() + ")");
                covered = Math.max(covered, r.to());
            }
            assertEquals(PER_PARTITION, covered, tp + ": covered up to");
        }
    }

    private static boolean atEnd(
            List<Consumer<String, String>> consumers, List<TopicPartition> tps) {
        int done = 0;
        for (Consumer<String, String> c : consumers) {
            for (TopicPartition tp : c.assignment()) {
                if (c.position(tp) >= PER_PARTITION) {
                    done++;
                }
            }
        }
        return done == tps.size();
    }

    /** Sum of the consumer's positions over the partitions assigned to it. */
    private static long coveredSum(Consumer<String, String> c, List<TopicPartition> tps) {
        long sum = 0;
        for (TopicPartition tp : tps) {
            if (c.assignment().contains(tp)) {
                sum += c.position(tp);
            }
        }
        return sum;
    }

    private static List<TopicPartition> createTopic(String topic, int partitions) throws Exception {
        KafkaBroker.shared().createTopic(topic, partitions);
        List<TopicPartition> tps = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            tps.add(new TopicPartition(topic, p));
        }
        return tps;
    }

    private static Properties props() throws Exception {
        return props(KafkaBroker.unique("g"));
    }

    private static Properties props(String group) throws Exception {
        return props(group, relay);
    }

    private static Properties props(String group, KafkaRelay through) throws Exception {
        Properties p = Records.approxProps(group, through.address());
        p.put("max.poll.records", "50"); // segments are handed out over several polls
        return p;
    }

    /**
     * Writes {@link #PER_PARTITION} records to every partition in small bursts (about 12 s),
     * timestamps in order over {@link #WINDOWS} past minutes, so windows close as soon as the relay
     * catches up and segments end often while the consumers read.
     */
    private static final class LiveProducer implements AutoCloseable {
        private final Thread thread;
        private volatile boolean done;
        private volatile Throwable failure;

        LiveProducer(String topic, int partitions, long seed) {
            thread =
                    new Thread(
                            () -> {
                                try {
                                    produce(topic, partitions, seed);
                                    done = true;
                                } catch (Throwable t) {
                                    failure = t;
                                }
                            },
                            "live-producer");
            thread.setDaemon(true);
            thread.start();
        }

        private void produce(String topic, int partitions, long seed) throws Exception {
            SplittableRandom rnd = new SplittableRandom(seed);
            List<Future<?>> acks = new ArrayList<>();
            RecordHeaders h = new RecordHeaders();
            h.add(new RecordHeader("zone", "a".getBytes(StandardCharsets.UTF_8)));
            try (KafkaProducer<byte[], byte[]> p =
                    KafkaBroker.shared().bytesProducer(new Properties())) {
                for (int i = 0; i < PER_PARTITION; i++) {
                    long ts = Records.T0 + (long) i * WINDOWS * 60_000 / PER_PARTITION;
                    for (int part = 0; part < partitions; part++) {
                        byte[] v =
                                Double.toString(Math.exp(rnd.nextDouble(-1, 1)))
                                        .getBytes(StandardCharsets.UTF_8);
                        acks.add(
                                p.send(
                                        new ProducerRecord<>(
                                                topic,
                                                part,
                                                ts,
                                                ("k" + i).getBytes(StandardCharsets.UTF_8),
                                                v,
                                                h)));
                    }
                    if (i % 25 == 24) {
                        p.flush();
                        Thread.sleep(100);
                    }
                }
                p.flush();
                for (Future<?> a : acks) {
                    a.get(300, TimeUnit.SECONDS);
                }
            }
        }

        boolean isDone() {
            if (failure != null) {
                throw new AssertionError("the producer failed", failure);
            }
            return done;
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join(TimeUnit.SECONDS.toMillis(30));
        }
    }
}
