package io.netapprox.kafka.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.WindowEstimate;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ApproxKafkaSource} reading without end: a real KRaft broker, a real relay, a Flink
 * MiniCluster of 2 TaskManagers x 2 slots, event-time windows of one minute over {@code Approx.of}.
 * A window's answer is awaited, not timed: each wait is a liveness bound (minutes, for a loaded
 * machine) after which the test fails naming what never came, and the job is cancelled.
 *
 * <ul>
 *   <li>More readers than partitions: the readers without a partition must not hold the watermark
 *       back (no {@code withIdleness} in the strategy, so only the source's own idleness can let
 *       the windows close). Failed before: no window ever closed.
 *   <li>A partition added while the job runs is discovered and read from its start: its records
 *       count in the windows that close afterwards. Failed before: the window never closed (the new
 *       partition was never read).
 * </ul>
 */
class UnboundedSourceTest {
    private static final String SECRET = TestRelays.SECRET;
    private static final List<String> DISTRICTS = List.of("d0", "d1");
    private static final int PER_CELL = 400;
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_700_000_000_000L - (1_700_000_000_000L % WINDOW_MS);
    private static final Duration OUT_OF_ORDERNESS = Duration.ofSeconds(1);

    /** How long a window's answer may take on a loaded 2-core machine (liveness, not timing). */
    private static final long LIVENESS_SECONDS = 240;

    @RegisterExtension static final MiniClusterExtension FLINK = FlinkClusters.twoByTwo();

    private static KafkaRelay relay;

    @BeforeAll
    static void startRelay() throws Exception {
        relay = TestRelays.start();
    }

    @AfterAll
    static void stopRelay() throws Exception {
        if (relay != null) {
            relay.close();
        }
    }

    @Test
    void moreReadersThanPartitionsStillCloseWindows() throws Exception {
        String topic = KafkaBroker.unique("one-partition");
        KafkaBroker.shared().createTopic(topic, 1);
        Map<String, Long> count = new HashMap<>();
        Producer producer = new Producer(topic, count, 7);
        for (int w = 0; w < 3; w++) {
            producer.window(0, w);
        }
        producer.closer(0, 3); // moves the partition's watermark past window 2
        producer.flush();

        // parallelism 3 over 1 partition: readers 1 and 2 never get a split
        try (RunningJob job = new RunningJob(source(topic, Map.of()), 3, false)) {
            for (int w = 0; w < 3; w++) {
                assertWeightsAreCounts(count, w, job.awaitWindow(w), "");
            }
        }
    }

    @Test
    void partitionAddedWhileRunningIsRead() throws Exception {
        String topic = KafkaBroker.unique("growing");
        KafkaBroker.shared().createTopic(topic, 1);
        Map<String, Long> count = new HashMap<>();
        Producer producer = new Producer(topic, count, 11);
        producer.window(0, 0);
        producer.window(0, 1); // partition 0 stays in window 1 from here on
        producer.flush();

        ApproxKafkaSource<Fare> source =
                source(topic, Map.of(ApproxKafkaSource.PARTITION_DISCOVERY_INTERVAL_MS, "500"));
        // withIdleness: partition 0 stops in window 1, so only its idleness lets the windows after
        // it close once partition 1 moves on; partition 1's records are in offset (= time) order,
        // so
        // none of them can be behind the watermark when they are emitted
        try (RunningJob job = new RunningJob(source, 2, true)) {
            // running, partitions listed once
            assertWeightsAreCounts(count, 0, job.awaitWindow(0), "");
            try (Admin admin = KafkaBroker.shared().admin()) {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2)))
                        .all()
                        .get(60, TimeUnit.SECONDS);
            }
            producer.window(1, 1);
            producer.window(1, 2);
            producer.closer(1, 3);
            producer.flush();
            for (int w = 1; w <= 2; w++) {
                assertWeightsAreCounts(
                        count, w, job.awaitWindow(w), ": both partitions' records, weighted");
            }
        }
    }

    /** Every district's weights in window {@code w} add up to its exact record count. */
    private static void assertWeightsAreCounts(
            Map<String, Long> count, int w, Map<String, Double> weights, String what) {
        for (String d : DISTRICTS) {
            String cell = cell(w, d);
            assertEquals(count.get(cell), weights.get(d), 1e-6 * count.get(cell), cell + what);
        }
    }

    private static String cell(int window, String district) {
        return (T0 + window * WINDOW_MS) + "/" + district;
    }

    private static ApproxKafkaSource<Fare> source(String topic, Map<String, String> extra)
            throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        Properties p = broker.bytesConsumerProps(KafkaBroker.unique("unbounded"));
        p.put("approx.enable", "true");
        p.put("approx.stratum", "key");
        p.put("approx.window.ms", Long.toString(WINDOW_MS));
        p.put("approx.window.grace.ms", "0");
        p.put("approx.emax", "0.2");
        p.put("approx.seed", "5");
        p.put("approx.auth.secret", SECRET);
        for (int id : broker.brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        p.putAll(extra);
        return ApproxKafkaSource.<Fare>builder()
                .consumerProperties(p)
                .topic(topic)
                .mapper(Fare::of)
                .type(TypeInformation.of(Fare.class))
                .build();
    }

    /** Writes cells of {@link #PER_CELL} records per district and counts them. */
    private static final class Producer {
        private final String topic;
        private final Map<String, Long> count;
        private final SplittableRandom rnd;
        private final KafkaProducer<byte[], byte[]> producer;
        private final List<Future<?>> acks = new ArrayList<>();

        Producer(String topic, Map<String, Long> count, long seed) throws Exception {
            this.topic = topic;
            this.count = count;
            this.rnd = new SplittableRandom(seed);
            this.producer = KafkaBroker.shared().bytesProducer(new Properties());
        }

        /** Window {@code w}'s records into {@code partition}, timestamps in order. */
        void window(int partition, int w) {
            int n = PER_CELL * DISTRICTS.size();
            for (int i = 0; i < n; i++) {
                send(partition, w, DISTRICTS.get(i % DISTRICTS.size()), (i * WINDOW_MS) / n);
            }
        }

        /** One record half-way into window {@code w}: the partition's watermark passes w - 1. */
        void closer(int partition, int w) {
            send(partition, w, DISTRICTS.get(0), WINDOW_MS / 2);
        }

        private void send(int partition, int w, String district, long offsetInWindow) {
            long ts = T0 + w * WINDOW_MS + offsetInWindow;
            count.merge(cell(w, district), 1L, Long::sum);
            String fare = Double.toString(1 + 10 * rnd.nextDouble());
            acks.add(
                    producer.send(
                            new ProducerRecord<>(
                                    topic,
                                    partition,
                                    ts,
                                    district.getBytes(StandardCharsets.UTF_8),
                                    fare.getBytes(StandardCharsets.UTF_8))));
        }

        void flush() throws Exception {
            producer.flush();
            for (Future<?> a : acks) {
                a.get(60, TimeUnit.SECONDS);
            }
            acks.clear();
        }
    }

    /**
     * An unbounded job ({@code sum(weight)} per one-minute window and district) whose answers are
     * read on a thread of its own; closed, it cancels the job.
     */
    private static final class RunningJob implements AutoCloseable {
        private final CloseableIterator<WindowEstimate> answers;
        private final JobClient client;
        private final ExecutorService reader = Executors.newSingleThreadExecutor();

        /** Answers seen so far: window start -> district -> sum(weight). */
        private final Map<Long, Map<String, Double>> seen = new ConcurrentHashMap<>();

        RunningJob(ApproxKafkaSource<Fare> source, int parallelism, boolean idleness)
                throws Exception {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(parallelism);
            WatermarkStrategy<Fare> watermarks =
                    WatermarkStrategy.forBoundedOutOfOrderness(OUT_OF_ORDERNESS);
            if (idleness) {
                watermarks = watermarks.withIdleness(Duration.ofSeconds(2));
            }
            DataStream<Fare> fares = env.fromSource(source, watermarks, "fares");
            DataStream<WindowEstimate> out =
                    Approx.of(fares, new Configuration())
                            .stratifyBy(f -> f.district)
                            .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
                            .aggregate(Aggregate.sum("weight", f -> f.weight));
            this.answers = out.collectAsync();
            this.client = env.executeAsync("kafka-unbounded");
        }

        /** Waits until window {@code w} answered for every district; district -> sum(weight). */
        Map<String, Double> awaitWindow(int w) throws Exception {
            long start = T0 + w * WINDOW_MS;
            Future<Map<String, Double>> done =
                    reader.submit(
                            () -> {
                                while (!seen.containsKey(start)
                                        || !seen.get(start).keySet().containsAll(DISTRICTS)) {
                                    if (!answers.hasNext()) {
                                        throw new IllegalStateException("the job ended");
                                    }
                                    WindowEstimate e = answers.next();
                                    seen.computeIfAbsent(
                                                    e.windowStart, k -> new ConcurrentHashMap<>())
                                            .put(e.group, e.estimate);
                                }
                                return Map.copyOf(seen.get(start));
                            });
            try {
                Map<String, Double> got = done.get(LIVENESS_SECONDS, TimeUnit.SECONDS);
                assertNotNull(got);
                assertEquals(Set.copyOf(DISTRICTS), got.keySet());
                return got;
            } catch (TimeoutException e) {
                done.cancel(true);
                return fail(
                        "window "
                                + w
                                + " never closed within "
                                + LIVENESS_SECONDS
                                + " s; windows answered: "
                                + seen.keySet());
            }
        }

        @Override
        public void close() throws Exception {
            try {
                client.cancel().get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                // the job may have failed already; the assertion above says why
            }
            answers.close();
            reader.shutdownNow();
        }
    }
}
