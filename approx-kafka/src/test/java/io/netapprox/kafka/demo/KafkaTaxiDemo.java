package io.netapprox.kafka.demo;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.examples.taxi.TaxiTripGenerator;
import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.ApproxEstimates;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayConfig;
import io.netapprox.kafka.testkit.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * {@code bash scripts/demo.sh kafka}: a real single-node KRaft broker (Kafka's test kit, in this
 * JVM), a relay beside it (real ATP over loopback), the synthetic taxi trips produced to a topic
 * (one day; header {@code hour} = the pickup hour, value = the trip distance), then the average
 * trip distance per pickup hour read twice: by a plain {@code KafkaConsumer} (exact) and by an
 * approximate consumer ({@code approx.stratum=header:hour}, one window for the day, e_max 5 %, hour
 * 17 at 1 %). Prints both per hour with the interval and whether the error is within the bound.
 *
 * <pre>
 * KafkaTaxiDemo [--rows 1000000] [--partitions 4] [--emax 0.05] [--seed 42]
 * </pre>
 */
public final class KafkaTaxiDemo {
    /** 2024-01-15T00:00Z: a whole day in the past, so the day's window is closed at once. */
    private static final long DAY = 1_705_276_800_000L;

    private static final String TOPIC = "taxi-trips";
    private static final String SECRET = "kafka-taxi-demo-secret-0123456789";

    private KafkaTaxiDemo() {}

    public static void main(String[] args) throws Exception {
        long rows = 1_000_000;
        int partitions = 4;
        double emax = 0.05;
        long seed = 42;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--rows" -> rows = Long.parseLong(v);
                case "--partitions" -> partitions = Integer.parseInt(v);
                case "--emax" -> emax = Double.parseDouble(v);
                case "--seed" -> seed = Long.parseLong(v);
                default -> {
                    System.err.println(
                            "usage: KafkaTaxiDemo [--rows N] [--partitions P] [--emax E] [--seed S]"
                                    + " (unknown: "
                                    + args[i]
                                    + ")");
                    System.exit(2);
                }
            }
            i++;
        }

        KafkaBroker broker = KafkaBroker.cluster(1);
        try {
            broker.createTopic(TOPIC, partitions);
            long t = System.nanoTime();
            produce(broker, rows, partitions, seed);
            System.out.printf(
                    "[demo] KRaft broker %s: produced %,d taxi trips to %s (%d partitions) in %.1f s%n",
                    broker.bootstrapServers(), rows, TOPIC, partitions, secs(t));

            t = System.nanoTime();
            Hours exact = readExact(broker, partitions);
            double exactSecs = secs(t);

            try (KafkaRelay relay =
                    KafkaRelay.start(
                            RelayConfig.builder(broker.bootstrapServers())
                                    .listen("127.0.0.1:0")
                                    .dataPort(0)
                                    .secret(SECRET.getBytes(StandardCharsets.UTF_8))
                                    .build())) {
                t = System.nanoTime();
                Approx approx = readApprox(broker, relay, partitions, emax, seed);
                double approxSecs = secs(t);
                report(exact, approx, emax, exactSecs, approxSecs);
            }
        } finally {
            broker.close();
        }
        System.exit(0); // the test kit's non-daemon threads
    }

    private static double secs(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private static void produce(KafkaBroker broker, long rows, int partitions, long seed)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            List<Future<?>> acks = new ArrayList<>();
            for (int part = 0; part < partitions; part++) {
                Iterator<TaxiTrip> trips =
                        TaxiTripGenerator.partition(rows, partitions, part, seed);
                long i = 0;
                while (trips.hasNext()) {
                    TaxiTrip trip = trips.next();
                    RecordHeaders h = new RecordHeaders();
                    h.add(
                            new RecordHeader(
                                    "hour",
                                    Integer.toString(trip.hour())
                                            .getBytes(StandardCharsets.UTF_8)));
                    long ts = DAY + trip.hour() * 3_600_000L + (i++ % 3_600_000L);
                    Future<?> ack =
                            p.send(
                                    new ProducerRecord<>(
                                            TOPIC,
                                            part,
                                            ts,
                                            Integer.toString(trip.zone())
                                                    .getBytes(StandardCharsets.UTF_8),
                                            Double.toString(trip.distance())
                                                    .getBytes(StandardCharsets.UTF_8),
                                            h));
                    acks.add(ack);
                    if (acks.size() >= 10_000) {
                        for (Future<?> a : acks) {
                            a.get();
                        }
                        acks.clear();
                    }
                }
            }
            p.flush();
            for (Future<?> a : acks) {
                a.get();
            }
        }
    }

    /** Per-hour record counts and distance sums. */
    private static final class Hours {
        final long[] count = new long[24];
        final double[] sum = new double[24];
        long records;
    }

    private static Hours readExact(KafkaBroker broker, int partitions) {
        Hours h = new Hours();
        try (KafkaConsumer<String, String> c =
                new KafkaConsumer<>(broker.stringConsumerProps("taxi-demo-exact"))) {
            List<TopicPartition> tps = assign(c, partitions);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            while (!reached(c, tps, end)) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    int hour =
                            Integer.parseInt(
                                    new String(
                                            r.headers().lastHeader("hour").value(),
                                            StandardCharsets.UTF_8));
                    h.count[hour]++;
                    h.sum[hour] += Double.parseDouble(r.value());
                    h.records++;
                }
            }
        }
        return h;
    }

    /** What the approximate consumer read, and the relay's counters before the consumer closed. */
    private record Approx(ApproxEstimates<String, String> est, String relayMetrics) {}

    private static Approx readApprox(
            KafkaBroker broker, KafkaRelay relay, int partitions, double emax, long seed) {
        Properties p = broker.stringConsumerProps("taxi-demo-approx");
        p.put("approx.enable", "true");
        p.put("approx.stratum", "header:hour");
        p.put("approx.window.ms", "86400000");
        p.put("approx.window.grace.ms", "0");
        p.put("approx.emax", Double.toString(emax));
        p.put("approx.group.17.emax", "0.01");
        p.put("approx.seed", Long.toString(seed));
        p.put("approx.auth.secret", SECRET);
        for (int id : broker.brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        ApproxEstimates<String, String> est =
                new ApproxEstimates<>(r -> Double.parseDouble(r.value()), 0.95);
        try (Consumer<String, String> c = ApproxConsumers.create(p)) {
            List<TopicPartition> tps = assign(c, partitions);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
            while (!reached(c, tps, end)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(
                            "the approximate consumer did not reach " + end);
                }
                ConsumerRecords<String, String> polled = c.poll(Duration.ofMillis(200));
                est.add(polled);
            }
            return new Approx(est, relay.metrics().toString());
        }
    }

    private static List<TopicPartition> assign(Consumer<?, ?> c, int partitions) {
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(TOPIC, i));
        }
        c.assign(tps);
        c.seekToBeginning(tps);
        return tps;
    }

    private static boolean reached(
            Consumer<?, ?> c, List<TopicPartition> tps, Map<TopicPartition, Long> end) {
        for (TopicPartition tp : tps) {
            if (c.position(tp) < end.get(tp)) {
                return false;
            }
        }
        return true;
    }

    private static void report(
            Hours exact, Approx approx, double emax, double exactSecs, double approxSecs) {
        ApproxEstimates<String, String> est = approx.est();
        System.out.println();
        System.out.println(
                "Average trip distance (mi) per pickup hour: exact (plain KafkaConsumer) vs"
                        + " approximate (ApproxKafkaConsumer, 95 % interval)");
        System.out.printf(
                "%4s %9s %8s %8s %9s %21s %8s %7s %s%n",
                "hour", "trips", "sampled", "exact", "approx", "interval", "error", "bound", "");
        int within = 0;
        long sampled = 0;
        for (int hour = 0; hour < 24; hour++) {
            String stratum = Integer.toString(hour);
            double truth = exact.sum[hour] / exact.count[hour];
            ApproxResult m = est.mean(DAY, stratum);
            long n = est.sampled(DAY, stratum);
            sampled += n;
            double err = Math.abs(m.mean() - truth) / truth;
            double bound = hour == 17 ? 0.01 : emax;
            boolean ok = err <= bound;
            within += ok ? 1 : 0;
            if (est.count(DAY, stratum) != exact.count[hour]) {
                throw new IllegalStateException(
                        "hour "
                                + hour
                                + ": the approximate count "
                                + est.count(DAY, stratum)
                                + " is not the exact count "
                                + exact.count[hour]);
            }
            System.out.printf(
                    "%4d %,9d %,8d %8.4f %9.4f [%9.4f, %9.4f] %7.2f%% %6.1f%% %s%n",
                    hour,
                    exact.count[hour],
                    n,
                    truth,
                    m.mean(),
                    m.low(),
                    m.high(),
                    100 * err,
                    100 * bound,
                    ok ? "" : "OUTSIDE");
        }
        System.out.printf(
                "%nwithin bound: %d of 24 hours (each bound holds with 95 %% confidence); counts"
                        + " exact in all 24%n",
                within);
        System.out.printf(
                "records returned: exact %,d, approximate %,d (%.1f %%); relay: %s%n",
                exact.records, sampled, 100.0 * sampled / exact.records, approx.relayMetrics());
        System.out.printf(
                "read time: exact %.1f s, approximate %.1f s (one machine, loopback, no bottleneck:"
                        + " not a throughput comparison; see docs/kafka.md)%n",
                exactSecs, approxSecs);
    }
}
