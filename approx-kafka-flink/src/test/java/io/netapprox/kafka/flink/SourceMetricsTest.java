package io.netapprox.kafka.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.metrics.MetricNames;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link ApproxKafkaSource}'s metrics ({@link SourceReaderMetrics}) read from a real MiniCluster (2
 * TaskManagers x 2 slots) through an in-memory metric reporter, over the shared KRaft broker and a
 * relay. The topic: 2 partitions x 2 one-minute windows x 2 key strata x 1000 records, each with a
 * header of its own. What the job's sink received is the truth the metrics are held to:
 *
 * <ul>
 *   <li>sampled (e_max 0.1): {@code numRecordsIn} = the records received, fewer than produced;
 *       {@code numRecordsRepresented} = the records produced (the weights add up per cell); {@code
 *       numBytesIn} = key + value + own header bytes of the records received; {@code currentOffset}
 *       = end - 1 per partition; {@code currentFetchEventTimeLag} at least the age of the newest
 *       record when the test started. Failed before (numRecordsIn stayed 0, the other metrics did
 *       not exist), like {@code testSourceMetrics} of Flink's suite.
 *   <li>flag off: every record counted once, its bytes too.
 *   <li>unbounded with checkpoints: {@code committedOffset} reaches the end of every partition,
 *       {@code pendingRecords} reaches 0, {@code numRecordsRepresented} the records produced
 *       (awaited with a liveness bound, not timed).
 * </ul>
 */
class SourceMetricsTest {
    private static final int PARTITIONS = 2;
    private static final int WINDOWS = 2;
    private static final List<String> KEYS = List.of("a", "b");
    private static final int PER_CELL = 1000;
    private static final int PER_PARTITION = WINDOWS * KEYS.size() * PER_CELL;
    private static final int PRODUCED = PARTITIONS * PER_PARTITION;
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_700_000_000_000L - (1_700_000_000_000L % WINDOW_MS);
    private static final String HEADER = "src";
    private static final byte[] HEADER_VALUE = "metrics-test".getBytes(StandardCharsets.UTF_8);
    private static final String SOURCE = "metered";
    private static final long LIVENESS_MS = 240_000;

    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .setNumberTaskManagers(2)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static String topic;
    private static KafkaRelay relay;
    private static long newestTimestamp;

    @BeforeAll
    static void produce() throws Exception {
        topic = KafkaBroker.unique("metrics");
        KafkaBroker broker = KafkaBroker.shared();
        broker.createTopic(topic, PARTITIONS);
        SplittableRandom rnd = new SplittableRandom(29);
        List<ProducerRecord<byte[], byte[]>> records = new ArrayList<>();
        for (int part = 0; part < PARTITIONS; part++) {
            for (int w = 0; w < WINDOWS; w++) {
                for (int i = 0; i < PER_CELL * KEYS.size(); i++) {
                    long ts = T0 + w * WINDOW_MS + (i * WINDOW_MS) / (PER_CELL * KEYS.size());
                    newestTimestamp = Math.max(newestTimestamp, ts);
                    RecordHeaders headers = new RecordHeaders();
                    headers.add(HEADER, HEADER_VALUE);
                    String value = Double.toString(Math.exp(rnd.nextGaussian()));
                    records.add(
                            new ProducerRecord<>(
                                    topic,
                                    part,
                                    ts,
                                    KEYS.get(i % KEYS.size()).getBytes(StandardCharsets.UTF_8),
                                    value.getBytes(StandardCharsets.UTF_8),
                                    headers));
                }
            }
        }
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            KafkaBroker.sendAll(p, records);
        }
        relay = TestRelays.start();
    }

    @AfterAll
    static void stopRelay() throws Exception {
        if (relay != null) {
            relay.close();
        }
    }

    @Test
    void sampledRecordsCountOnceInNumRecordsInAndByTheirWeightInNumRecordsRepresented()
            throws Exception {
        long started = System.currentTimeMillis();
        Run run = runBounded(props(true));
        assertTrue(
                run.received > 0 && run.received < PRODUCED,
                "sampling: " + run.received + " of " + PRODUCED + " received");
        assertEquals(PRODUCED, run.weights, 1e-6 * PRODUCED, "the weights add up");

        assertEquals(run.received, sum(run.job, g -> numRecordsIn(g)), "numRecordsIn");
        assertEquals(
                PRODUCED,
                sum(run.job, g -> counter(g, SourceReaderMetrics.RECORDS_REPRESENTED)),
                "numRecordsRepresented");
        assertEquals(run.bytes, sum(run.job, g -> numBytesIn(g)), "numBytesIn");
        for (int p = 0; p < PARTITIONS; p++) {
            assertEquals(
                    PER_PARTITION - 1L,
                    partitionGauge(run.job, p, SourceReaderMetrics.CURRENT_OFFSET),
                    "currentOffset of partition " + p);
            assertEquals(
                    SourceReaderMetrics.INITIAL_OFFSET,
                    partitionGauge(run.job, p, SourceReaderMetrics.COMMITTED_OFFSET),
                    "committedOffset of partition " + p + " (no checkpoint)");
        }
        for (OperatorMetricGroup g : sources(run.job)) {
            long lag = gauge(g, MetricNames.CURRENT_FETCH_EVENT_TIME_LAG);
            assertTrue(
                    lag >= started - newestTimestamp,
                    "currentFetchEventTimeLag " + lag + " below the newest record's age");
            assertEquals(0L, gauge(g, MetricNames.PENDING_RECORDS), "pendingRecords at the end");
        }
    }

    @Test
    void flagOffCountsEveryRecordAndItsBytes() throws Exception {
        Properties props = props(false);
        Run run = runBounded(props);
        assertEquals(PRODUCED, run.received, "records received");
        assertEquals(PRODUCED, sum(run.job, g -> numRecordsIn(g)), "numRecordsIn");
        assertEquals(
                PRODUCED,
                sum(run.job, g -> counter(g, SourceReaderMetrics.RECORDS_REPRESENTED)),
                "numRecordsRepresented");
        assertEquals(run.bytes, sum(run.job, g -> numBytesIn(g)), "numBytesIn");
        for (int p = 0; p < PARTITIONS; p++) {
            assertEquals(
                    PER_PARTITION - 1L,
                    partitionGauge(run.job, p, SourceReaderMetrics.CURRENT_OFFSET),
                    "currentOffset of partition " + p);
        }
    }

    @Test
    void offsetsAndPendingRecordsFollowTheCoverageAndTheCheckpoints() throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARTITIONS);
        env.enableCheckpointing(200);
        env.fromSource(source(props(true), false), WatermarkStrategy.noWatermarks(), SOURCE)
                .sinkTo(new DiscardingSink<>());
        JobClient client = env.executeAsync("metrics-unbounded");
        try {
            JobID job = client.getJobID();
            awaitTrue(
                    () -> {
                        for (int p = 0; p < PARTITIONS; p++) {
                            Long committed =
                                    partitionGaugeOrNull(
                                            job, p, SourceReaderMetrics.COMMITTED_OFFSET);
                            if (committed == null || committed != PER_PARTITION) {
                                return "committedOffset of partition " + p + ": " + committed;
                            }
                        }
                        return null;
                    });
            for (int p = 0; p < PARTITIONS; p++) {
                assertEquals(
                        PER_PARTITION - 1L,
                        partitionGauge(job, p, SourceReaderMetrics.CURRENT_OFFSET),
                        "currentOffset of partition " + p);
            }
            // every record is below a completed checkpoint's positions: all were emitted
            assertEquals(
                    PRODUCED,
                    sum(job, g -> counter(g, SourceReaderMetrics.RECORDS_REPRESENTED)),
                    "numRecordsRepresented");
            long received = sum(job, g -> numRecordsIn(g));
            assertTrue(received > 0 && received < PRODUCED, "numRecordsIn " + received);
            // the lag comes with the batches: the one that reached the end says 0
            awaitTrue(
                    () -> {
                        long pending = sum(job, g -> gauge(g, MetricNames.PENDING_RECORDS));
                        return pending == 0 ? null : "pendingRecords " + pending;
                    });
        } finally {
            client.cancel().get();
        }
    }

    // ------------------------------------------------------------------ the jobs

    /** What a bounded job's sink received. */
    private record Run(JobID job, long received, long bytes, double weights) {}

    private static Run runBounded(Properties props) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(PARTITIONS);
        long received = 0;
        long bytes = 0;
        double weights = 0;
        JobClient client;
        try (CloseableIterator<Received> it =
                env.fromSource(source(props, true), WatermarkStrategy.noWatermarks(), SOURCE)
                        .collectAsync()) {
            client = env.executeAsync("metrics-bounded");
            while (it.hasNext()) {
                Received r = it.next();
                received++;
                bytes += r.bytes;
                weights += r.weight;
            }
        }
        client.getJobExecutionResult().get();
        return new Run(client.getJobID(), received, bytes, weights);
    }

    private static ApproxKafkaSource<Received> source(Properties props, boolean bounded) {
        ApproxKafkaSource.Builder<Received> b =
                ApproxKafkaSource.<Received>builder()
                        .consumerProperties(props)
                        .topic(topic)
                        .mapper(Received::of)
                        .type(TypeInformation.of(Received.class));
        if (bounded) {
            b.bounded();
        }
        return b.build();
    }

    private static Properties props(boolean approx) throws Exception {
        KafkaBroker broker = KafkaBroker.shared();
        Properties p = broker.bytesConsumerProps(KafkaBroker.unique("metrics"));
        p.put("approx.enable", Boolean.toString(approx));
        p.put("approx.stratum", "key");
        p.put("approx.window.ms", Long.toString(WINDOW_MS));
        p.put("approx.window.grace.ms", "0");
        p.put("approx.emax", "0.1");
        p.put("approx.seed", "29");
        p.put("approx.auth.secret", TestRelays.SECRET);
        for (int id : broker.brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        return p;
    }

    /** A received record as the sink sees it: its payload bytes and weight (a Flink POJO). */
    public static class Received {
        public long bytes;
        public double weight;

        public Received() {}

        static Received of(ConsumerRecord<byte[], byte[]> r, double w) {
            Received x = new Received();
            x.bytes = r.key().length + r.value().length + HEADER.length() + HEADER_VALUE.length;
            x.weight = w;
            return x;
        }
    }

    // ------------------------------------------------------------------ the metrics

    private static List<OperatorMetricGroup> sources(JobID job) {
        List<OperatorMetricGroup> groups = REPORTER.findOperatorMetricGroups(job, SOURCE);
        assertEquals(PARTITIONS, groups.size(), "source subtasks' metric groups: " + groups);
        return groups;
    }

    private interface Read {
        long of(OperatorMetricGroup g);
    }

    private static long sum(JobID job, Read read) {
        long sum = 0;
        for (OperatorMetricGroup g : sources(job)) {
            sum += read.of(g);
        }
        return sum;
    }

    private static long numRecordsIn(OperatorMetricGroup g) {
        return g.getIOMetricGroup().getNumRecordsInCounter().getCount();
    }

    private static long numBytesIn(OperatorMetricGroup g) {
        return g.getIOMetricGroup().getNumBytesInCounter().getCount();
    }

    private static long counter(OperatorMetricGroup g, String name) {
        Metric m = REPORTER.getMetricsByGroup(g).get(name);
        assertNotNull(m, "no metric " + name + " in " + REPORTER.getMetricsByGroup(g).keySet());
        return ((Counter) m).getCount();
    }

    private static long gauge(OperatorMetricGroup g, String name) {
        Metric m = REPORTER.getMetricsByGroup(g).get(name);
        assertNotNull(m, "no metric " + name + " in " + REPORTER.getMetricsByGroup(g).keySet());
        return ((Number) ((Gauge<?>) m).getValue()).longValue();
    }

    private static long partitionGauge(JobID job, int partition, String name) {
        Long v = partitionGaugeOrNull(job, partition, name);
        if (v == null) {
            fail("no gauge " + suffix(partition, name) + " in job " + job);
        }
        return v;
    }

    /** KafkaSource's per-partition gauge, from the subtask that reads the partition. */
    private static Long partitionGaugeOrNull(JobID job, int partition, String name) {
        String suffix = suffix(partition, name);
        Long found = null;
        for (Map.Entry<MetricGroup, Map<String, Metric>> g :
                REPORTER.getMetricsByGroup().entrySet()) {
            if (!job.toString().equals(g.getKey().getAllVariables().get("<job_id>"))) {
                continue;
            }
            for (Map.Entry<String, Metric> m : g.getValue().entrySet()) {
                if (g.getKey().getMetricIdentifier(m.getKey()).endsWith(suffix)) {
                    if (found != null) {
                        fail("two gauges " + suffix);
                    }
                    found = ((Number) ((Gauge<?>) m.getValue()).getValue()).longValue();
                }
            }
        }
        return found;
    }

    private static String suffix(int partition, String name) {
        return "."
                + SourceReaderMetrics.KAFKA_SOURCE_READER_GROUP
                + "."
                + SourceReaderMetrics.TOPIC_GROUP
                + "."
                + topic
                + "."
                + SourceReaderMetrics.PARTITION_GROUP
                + "."
                + partition
                + "."
                + name;
    }

    /** Waits until the check answers null (met); fails with its last answer after the bound. */
    private static void awaitTrue(Supplier<String> check) throws InterruptedException {
        long deadline = System.currentTimeMillis() + LIVENESS_MS;
        String last = check.get();
        while (last != null) {
            if (System.currentTimeMillis() > deadline) {
                fail("not reached in " + LIVENESS_MS / 1000 + " s: " + last);
            }
            Thread.sleep(100);
            last = check.get();
        }
    }
}
