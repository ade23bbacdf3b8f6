package io.netapprox.kafka;

import io.netapprox.kafka.ApproxConsumerRecords.CoveredRange;
import io.netapprox.kafka.relay.Cell;
import io.netapprox.kafka.relay.RelayException;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.SplittableRandom;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/** Test data: records with a "zone" header (the stratum), a timestamp and a lognormal value. */
final class Records {
    /**
     * A window-aligned timestamp far in the past, so windows close as soon as a relay catches up.
     */
    static final long T0 = 1_700_000_000_000L - (1_700_000_000_000L % 60_000);

    /**
     * How long a wait for progress may take before the test fails: a liveness bound, not a timing
     * check. Generous because CI and the shared machines run these tests on 2 loaded cores.
     */
    static final Duration LIVENESS = Duration.ofSeconds(180);

    private Records() {}

    /** One produced record: where it went and its value. */
    record Produced(int partition, long window, String zone, double value) {}

    /**
     * Produces {@code perCell} records per (partition, window, zone) with values exp(N(0,1));
     * windows are 60 s long from {@link #T0}. Returns what was produced, in production order.
     */
    static List<Produced> produce(
            String topic, int partitions, int windows, List<String> zones, int perCell, long seed)
            throws Exception {
        return produce(KafkaBroker.shared(), topic, partitions, windows, zones, perCell, seed);
    }

    /** {@link #produce(String, int, int, List, int, long)} on another cluster. */
    static List<Produced> produce(
            KafkaBroker broker,
            String topic,
            int partitions,
            int windows,
            List<String> zones,
            int perCell,
            long seed)
            throws Exception {
        return produce(broker, topic, partitions, windows, zones, perCell, seed, 1.0);
    }

    /**
     * {@link #produce(String, int, int, List, int, long)} with values exp(N(0, sigma^2)): the
     * coefficient of variation is {@code sqrt(exp(sigma^2) - 1)} (1.31 at sigma 1, 2.91 at 1.5).
     */
    static List<Produced> produce(
            KafkaBroker broker,
            String topic,
            int partitions,
            int windows,
            List<String> zones,
            int perCell,
            long seed,
            double sigma)
            throws Exception {
        SplittableRandom rnd = new SplittableRandom(seed);
        java.util.Random normal = new java.util.Random(seed);
        List<Produced> out = new ArrayList<>();
        List<java.util.concurrent.Future<?>> acks = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            for (int w = 0; w < windows; w++) {
                for (int i = 0; i < perCell; i++) {
                    for (int part = 0; part < partitions; part++) {
                        for (String z : zones) {
                            double v = Math.exp(sigma * normal.nextGaussian());
                            long ts = T0 + w * 60_000L + rnd.nextInt(60_000);
                            RecordHeaders h = new RecordHeaders();
                            h.add(new RecordHeader("zone", z.getBytes(StandardCharsets.UTF_8)));
                            acks.add(
                                    p.send(
                                            new ProducerRecord<>(
                                                    topic,
                                                    part,
                                                    ts,
                                                    ("k" + i).getBytes(StandardCharsets.UTF_8),
                                                    Double.toString(v)
                                                            .getBytes(StandardCharsets.UTF_8),
                                                    h)));
                            out.add(new Produced(part, T0 + w * 60_000L, z, v));
                        }
                    }
                }
            }
            p.flush();
            for (java.util.concurrent.Future<?> a : acks) {
                a.get(); // fail here, not in a consumer waiting for records that never came
            }
        }
        return out;
    }

    /** Everything one consumer returned. */
    static final class Polled {
        final List<ConsumerRecord<String, String>> records = new ArrayList<>();
        final List<CoveredRange> ranges = new ArrayList<>();
        final List<ConsumerRecords<String, String>> polls = new ArrayList<>();

        void add(ConsumerRecords<String, String> r) {
            polls.add(r);
            r.forEach(records::add);
            ranges.addAll(ApproxConsumerRecords.rangesOf(r));
        }

        long countedRecords(TopicPartition tp, long below) {
            long n = 0;
            for (CoveredRange r : ranges) {
                if (r.partition().equals(tp) && r.to() <= below) {
                    for (Cell c : r.cells()) {
                        n += c.count();
                    }
                }
            }
            return n;
        }
    }

    /** The approximate consumer's own metric {@code name} (group netapprox-consumer-metrics). */
    static double approxMetric(Consumer<?, ?> c, String name) {
        return c.metrics().entrySet().stream()
                .filter(
                        e ->
                                e.getKey().group().equals(ConsumerDataPlaneMetrics.GROUP)
                                        && e.getKey().name().equals(name))
                .mapToDouble(e -> ((Number) e.getValue().metricValue()).doubleValue())
                .findFirst()
                .orElseThrow(() -> new AssertionError("no consumer metric " + name));
    }

    /** Polls until every partition's position reached {@code end} (or {@link #LIVENESS} passed). */
    static Polled pollToEnd(
            Consumer<String, String> c, List<TopicPartition> partitions, long end, Polled into) {
        long deadline = System.nanoTime() + LIVENESS.toNanos();
        while (System.nanoTime() < deadline) {
            into.add(c.poll(Duration.ofMillis(100)));
            boolean done = true;
            for (TopicPartition tp : partitions) {
                if (!c.assignment().contains(tp) || c.position(tp) < end) {
                    done = false;
                }
            }
            if (done) {
                break;
            }
        }
        return into;
    }

    /**
     * Polls (adding what comes to {@code into}, if given) until a poll throws a {@link
     * RelayException}, which it returns; fails if none came within {@link #LIVENESS}.
     */
    static RelayException pollUntilRelayException(Consumer<String, String> c, Polled into) {
        long deadline = System.nanoTime() + LIVENESS.toNanos();
        while (System.nanoTime() < deadline) {
            try {
                ConsumerRecords<String, String> got = c.poll(Duration.ofMillis(100));
                if (into != null) {
                    into.add(got);
                }
            } catch (RelayException e) {
                return e;
            }
        }
        throw new AssertionError("no RelayException within " + LIVENESS.toSeconds() + " s");
    }

    static Properties approxProps(String group, String relayAddress) throws Exception {
        Properties p = KafkaBroker.shared().stringConsumerProps(group);
        p.put("approx.enable", "true");
        p.put("approx.stratum", "header:zone");
        p.put("approx.emax", "0.1");
        p.put("approx.seed", "11");
        p.put("approx.auth.secret", TestRelays.SECRET);
        for (int id : KafkaBroker.shared().brokerIds()) {
            p.put("approx.relay.address." + id, relayAddress);
        }
        return p;
    }
}
