package io.netapprox.kafka.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.SplittableRandom;
import java.util.concurrent.Future;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Kafka -> Flink end to end: a real KRaft broker (Kafka's test kit) with a real relay beside it, a
 * Flink MiniCluster of 2 TaskManagers x 2 slots, and approx-flink's windowed aggregation ({@code
 * Approx.of}) over {@link ApproxKafkaSource}. The topic: 2 partitions x 3 one-minute windows x 4
 * districts x 1500 records, fares exp(N(0,1)) (cv 1.3). Per run a new sampling seed; per (window,
 * district) the weighted total must be within e_max of the truth in at least 93 % of the 120 (run,
 * window, district) cases (the relay plans each cell for e_max at 95 %), the weights must add up to
 * the exact record count in every case, and fewer records than produced must have reached Flink.
 */
class KafkaToFlinkTest {
    private static final String SECRET = TestRelays.SECRET;
    private static final int PARTITIONS = 2;
    private static final int WINDOWS = 3;
    private static final List<String> DISTRICTS = List.of("d0", "d1", "d2", "d3");
    private static final int PER_CELL = 1500;
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_700_000_000_000L - (1_700_000_000_000L % WINDOW_MS);
    private static final double EMAX = 0.1;
    private static final int RUNS = 10;

    @RegisterExtension static final MiniClusterExtension FLINK = FlinkClusters.twoByTwo();

    private static String topic;

    /** Exact totals and counts per "windowStart/district". */
    private static final Map<String, Double> TOTAL = new HashMap<>();

    private static final Map<String, Long> COUNT = new HashMap<>();
    private static KafkaRelay relay;

    @BeforeAll
    static void produce() throws Exception {
        topic = KafkaBroker.unique("fares");
        KafkaBroker broker = KafkaBroker.shared();
        broker.createTopic(topic, PARTITIONS);
        SplittableRandom rnd = new SplittableRandom(2024);
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            List<Future<?>> acks = new ArrayList<>();
            for (int part = 0; part < PARTITIONS; part++) {
                for (int w = 0; w < WINDOWS; w++) {
                    long start = T0 + w * WINDOW_MS;
                    for (int i = 0; i < PER_CELL * DISTRICTS.size(); i++) {
                        String d = DISTRICTS.get(i % DISTRICTS.size());
                        double fare = Math.exp(gaussian(rnd));
                        long ts = start + (i * WINDOW_MS) / (PER_CELL * DISTRICTS.size());
                        TOTAL.merge(start + "/" + d, fare, Double::sum);
                        COUNT.merge(start + "/" + d, 1L, Long::sum);
                        acks.add(
                                p.send(
                                        new ProducerRecord<>(
                                                topic,
                                                part,
                                                ts,
                                                d.getBytes(StandardCharsets.UTF_8),
                                                Double.toString(fare)
                                                        .getBytes(StandardCharsets.UTF_8))));
                    }
                }
            }
            p.flush();
            for (Future<?> a : acks) {
                a.get();
            }
        }
        relay = TestRelays.start();
    }

    @AfterAll
    static void stopRelay() throws Exception {
        if (relay != null) {
            relay.close();
        }
    }

    private static double gaussian(SplittableRandom rnd) {
        double u = 1 - rnd.nextDouble();
        double v = rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    @Test
    void windowedTotalsWithinBoundAndWeightsAddUpToExactCounts() throws Exception {
        int cases = 0;
        int within = 0;
        long sampled = 0;
        for (int run = 0; run < RUNS; run++) {
            Map<String, Map<String, WindowEstimate>> got = runJob(approxProps(1000 + run));
            assertEquals(
                    WINDOWS * DISTRICTS.size(), got.size(), "run " + run + ": " + got.keySet());
            for (Map.Entry<String, Map<String, WindowEstimate>> e : got.entrySet()) {
                String cell = e.getKey();
                WindowEstimate weights = e.getValue().get("sum(weight)");
                WindowEstimate total = e.getValue().get("sum(fare)");
                WindowEstimate count = e.getValue().get("count");
                long exactCount = COUNT.get(cell);
                assertEquals(
                        exactCount,
                        weights.estimate,
                        1e-6 * exactCount,
                        "run " + run + " " + cell + ": the weights add up to the exact count");
                assertTrue(
                        count.estimate < exactCount,
                        "run " + run + " " + cell + ": sampled " + count.estimate);
                sampled += (long) count.estimate;
                double truth = TOTAL.get(cell);
                cases++;
                if (Math.abs(total.estimate - truth) <= EMAX * truth) {
                    within++;
                }
            }
        }
        long produced = (long) RUNS * PARTITIONS * WINDOWS * DISTRICTS.size() * PER_CELL;
        double rate = (double) within / cases;
        System.out.printf(
                "Kafka -> Flink: %d runs, %d (window, district) totals, within e_max %.3f,"
                        + " %.1f %% of the records reached Flink%n",
                RUNS, cases, rate, 100.0 * sampled / produced);
        assertEquals(RUNS * WINDOWS * DISTRICTS.size(), cases);
        assertTrue(rate >= 0.93, "totals within e_max: " + rate);
        assertTrue(sampled < 0.8 * produced, "sampled " + sampled + " of " + produced);
    }

    @Test
    void consumerFlagOffReadsEveryRecordWithWeightOne() throws Exception {
        Properties p = approxProps(1);
        p.put("approx.enable", "false");
        Map<String, Map<String, WindowEstimate>> got = runJob(p);
        assertEquals(WINDOWS * DISTRICTS.size(), got.size());
        for (Map.Entry<String, Map<String, WindowEstimate>> e : got.entrySet()) {
            String cell = e.getKey();
            assertEquals(COUNT.get(cell), (long) e.getValue().get("count").estimate, cell);
            assertEquals(COUNT.get(cell), e.getValue().get("sum(weight)").estimate, 0.0, cell);
            assertEquals(
                    TOTAL.get(cell),
                    e.getValue().get("sum(fare)").estimate,
                    1e-9 * TOTAL.get(cell),
                    cell);
        }
    }

    private static Properties approxProps(long seed) throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        Properties p = broker.bytesConsumerProps(KafkaBroker.unique("flink"));
        p.put("approx.enable", "true");
        p.put("approx.stratum", "key");
        p.put("approx.window.ms", Long.toString(WINDOW_MS));
        p.put("approx.window.grace.ms", "0");
        p.put("approx.emax", Double.toString(EMAX));
        p.put("approx.seed", Long.toString(seed));
        p.put("approx.auth.secret", SECRET);
        for (int id : broker.brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        return p;
    }

    /** Runs the job once; answers per "windowStart/district", then per aggregate label. */
    private static Map<String, Map<String, WindowEstimate>> runJob(Properties consumer)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARTITIONS);
        ApproxKafkaSource<Fare> source =
                ApproxKafkaSource.<Fare>builder()
                        .consumerProperties(consumer)
                        .topic(topic)
                        .mapper(Fare::of)
                        .type(TypeInformation.of(Fare.class))
                        .bounded()
                        .build();
        DataStream<Fare> fares =
                env.fromSource(
                        source,
                        WatermarkStrategy.<Fare>forBoundedOutOfOrderness(
                                Duration.ofMillis(WINDOW_MS)),
                        "fares");
        // the Kafka leg samples; the Flink stage aggregates the weighted sample exactly
        Configuration flink = new Configuration();
        DataStream<WindowEstimate> answers =
                Approx.of(fares, flink)
                        .stratifyBy(f -> f.district)
                        .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
                        .aggregate(
                                Aggregate.sum("weight", f -> f.weight),
                                Aggregate.sum("fare", f -> f.fare * f.weight),
                                Aggregate.count());
        Map<String, Map<String, WindowEstimate>> out = new HashMap<>();
        try (CloseableIterator<WindowEstimate> it = answers.collectAsync()) {
            env.executeAsync("kafka-to-flink");
            it.forEachRemaining(
                    e ->
                            out.computeIfAbsent(e.windowStart + "/" + e.group, k -> new HashMap<>())
                                    .put(e.aggregate, e));
        }
        return out;
    }
}
