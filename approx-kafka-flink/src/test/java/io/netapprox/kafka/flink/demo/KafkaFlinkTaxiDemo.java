package io.netapprox.kafka.flink.demo;

import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.examples.taxi.TaxiTripGenerator;
import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.WindowEstimate;
import io.netapprox.kafka.flink.ApproxKafkaSource;
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
import java.util.TreeMap;
import java.util.concurrent.Future;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * {@code bash scripts/demo.sh kafka}: Kafka -> Flink end to end. A real single-node KRaft broker
 * (Kafka's test kit, in this JVM), a relay beside it (ATP over loopback), one day of synthetic taxi
 * trips produced in event-time order (key = borough = zone mod 3, value = fare, timestamp in the
 * pickup hour), then the same Flink job twice on a local cluster of 2 TaskManagers x 2 slots:
 * {@link ApproxKafkaSource} -> {@code Approx.of(...)} per borough and one-hour window: {@code
 * sum(weight)} (the trip count), {@code sum(fare x weight)} and their ratio, the average fare. Once
 * with the consumer flag off (every record, weight 1: exact), once with {@code approx.enable=true}
 * (the relay samples each (hour, borough) cell for e_max). Prints both per window and borough.
 *
 * <pre>
 * KafkaFlinkTaxiDemo [--rows 1000000] [--partitions 2] [--emax 0.05] [--seed 42]
 * </pre>
 */
public final class KafkaFlinkTaxiDemo {
    /** 2024-01-15T00:00Z: a day in the past, so every window is closed at once. */
    private static final long DAY = 1_705_276_800_000L;

    private static final long HOUR = 3_600_000L;
    private static final int BOROUGHS = 3;
    private static final String TOPIC = "taxi-trips";
    private static final String SECRET = "kafka-flink-taxi-demo-secret-0123456789";

    private KafkaFlinkTaxiDemo() {}

    public static void main(String[] args) throws Exception {
        long rows = 1_000_000;
        int partitions = 2;
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
                            "usage: KafkaFlinkTaxiDemo [--rows N] [--partitions P] [--emax E]"
                                    + " [--seed S] (unknown: "
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
            try (KafkaRelay relay =
                    KafkaRelay.start(
                            RelayConfig.builder(broker.bootstrapServers())
                                    .listen("127.0.0.1:0")
                                    .dataPort(0)
                                    .secret(SECRET.getBytes(StandardCharsets.UTF_8))
                                    .build())) {
                t = System.nanoTime();
                Map<String, Row> exact = run(broker, relay, partitions, false, emax, seed);
                double exactSecs = secs(t);
                t = System.nanoTime();
                Map<String, Row> approx = run(broker, relay, partitions, true, emax, seed);
                double approxSecs = secs(t);
                report(exact, approx, emax, rows, exactSecs, approxSecs, relay);
            }
        } finally {
            broker.close();
        }
        System.exit(0); // the test kit's non-daemon threads
    }

    private static double secs(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    /** Each partition's trips in pickup-hour order, spread over the hour (event-time order). */
    private static void produce(KafkaBroker broker, long rows, int partitions, long seed)
            throws Exception {
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            List<Future<?>> acks = new ArrayList<>();
            for (int part = 0; part < partitions; part++) {
                List<List<TaxiTrip>> byHour = new ArrayList<>();
                for (int h = 0; h < 24; h++) {
                    byHour.add(new ArrayList<>());
                }
                Iterator<TaxiTrip> trips =
                        TaxiTripGenerator.partition(rows, partitions, part, seed);
                while (trips.hasNext()) {
                    TaxiTrip trip = trips.next();
                    byHour.get(trip.hour()).add(trip);
                }
                for (int h = 0; h < 24; h++) {
                    List<TaxiTrip> hour = byHour.get(h);
                    for (int i = 0; i < hour.size(); i++) {
                        TaxiTrip trip = hour.get(i);
                        long ts = DAY + h * HOUR + (i * HOUR) / hour.size();
                        acks.add(
                                p.send(
                                        new ProducerRecord<>(
                                                TOPIC,
                                                part,
                                                ts,
                                                borough(trip).getBytes(StandardCharsets.UTF_8),
                                                Double.toString(trip.fare())
                                                        .getBytes(StandardCharsets.UTF_8))));
                        if (acks.size() >= 10_000) {
                            for (Future<?> a : acks) {
                                a.get();
                            }
                            acks.clear();
                        }
                    }
                    hour.clear();
                }
            }
            p.flush();
            for (Future<?> a : acks) {
                a.get();
            }
        }
    }

    private static String borough(TaxiTrip trip) {
        return "b" + (trip.zone() % BOROUGHS);
    }

    /** One (window, borough): trips (sum of weights), fare total, records that reached Flink. */
    private record Row(double trips, double fares, long records) {
        double avg() {
            return fares / trips;
        }
    }

    private static Map<String, Row> run(
            KafkaBroker broker,
            KafkaRelay relay,
            int partitions,
            boolean approximate,
            double emax,
            long seed)
            throws Exception {
        Properties consumer = broker.bytesConsumerProps(approximate ? "demo-approx" : "demo-exact");
        consumer.put("approx.enable", String.valueOf(approximate));
        consumer.put("approx.stratum", "key");
        consumer.put("approx.window.ms", Long.toString(HOUR));
        consumer.put("approx.window.grace.ms", "0");
        consumer.put("approx.emax", Double.toString(emax));
        consumer.put("approx.seed", Long.toString(seed));
        consumer.put("approx.auth.secret", SECRET);
        for (int id : broker.brokerIds()) {
            consumer.put("approx.relay.address." + id, relay.address());
        }
        Configuration conf = new Configuration();
        conf.setString("minicluster.number-of-taskmanagers", "2");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(Math.min(partitions, 4));
        ApproxKafkaSource<Trip> source =
                ApproxKafkaSource.<Trip>builder()
                        .consumerProperties(consumer)
                        .topic(TOPIC)
                        .mapper(Trip::of)
                        .type(TypeInformation.of(Trip.class))
                        .bounded()
                        .build();
        DataStream<Trip> trips =
                env.fromSource(
                        source,
                        WatermarkStrategy.<Trip>forBoundedOutOfOrderness(Duration.ofMillis(HOUR)),
                        "taxi-trips");
        // the Kafka leg samples (the relay plans each cell for e_max); Flink aggregates the
        // weighted sample (approx.enabled is off for the Flink exchange: one error budget)
        DataStream<WindowEstimate> answers =
                Approx.of(trips, new Configuration())
                        .stratifyBy(tr -> tr.borough)
                        .window(TumblingEventTimeWindows.of(Duration.ofMillis(HOUR)))
                        .aggregate(
                                Aggregate.sum("weight", tr -> tr.weight),
                                Aggregate.sum("fare", tr -> tr.fare * tr.weight),
                                Aggregate.count());
        Map<String, Map<String, Double>> byCell = new TreeMap<>();
        answers.executeAndCollect(approximate ? "kafka taxi, approximate" : "kafka taxi, exact")
                .forEachRemaining(
                        e ->
                                byCell.computeIfAbsent(
                                                e.windowStart + "|" + e.group, k -> new TreeMap<>())
                                        .put(e.aggregate, e.estimate));
        Map<String, Row> rows = new TreeMap<>();
        byCell.forEach(
                (cell, m) ->
                        rows.put(
                                cell,
                                new Row(
                                        m.get("sum(weight)"),
                                        m.get("sum(fare)"),
                                        Math.round(m.get("count")))));
        return rows;
    }

    private static void report(
            Map<String, Row> exact,
            Map<String, Row> approx,
            double emax,
            long rows,
            double exactSecs,
            double approxSecs,
            KafkaRelay relay) {
        System.out.println();
        System.out.println(
                "Average fare per borough and pickup hour (1-hour event-time windows), Kafka ->"
                        + " Flink: exact (consumer flag off) vs approximate (approx.enable=true)");
        System.out.printf(
                "%5s %7s %8s %8s %9s %9s %8s %7s %s%n",
                "hour", "borough", "trips", "sampled", "exact", "approx", "error", "bound", "");
        int within = 0;
        long sampled = 0;
        for (Map.Entry<String, Row> e : exact.entrySet()) {
            String[] cell = e.getKey().split("\\|");
            Row x = e.getValue();
            Row a = approx.get(e.getKey());
            if (a == null) {
                throw new IllegalStateException("no approximate answer for " + e.getKey());
            }
            if (Math.abs(a.trips() - x.trips()) > 1e-6 * x.trips()) {
                throw new IllegalStateException(
                        e.getKey() + ": the weights add up to " + a.trips() + ", not " + x.trips());
            }
            double err = Math.abs(a.avg() - x.avg()) / x.avg();
            boolean ok = err <= emax;
            within += ok ? 1 : 0;
            sampled += a.records();
            long hour = (Long.parseLong(cell[0]) - DAY) / HOUR;
            System.out.printf(
                    "%5d %7s %,8d %,8d %9.3f %9.3f %7.2f%% %6.1f%% %s%n",
                    hour,
                    cell[1],
                    x.records(),
                    a.records(),
                    x.avg(),
                    a.avg(),
                    100 * err,
                    100 * emax,
                    ok ? "" : "OUTSIDE");
        }
        System.out.printf(
                "%nwithin bound: %d of %d windows x boroughs (each planned for e_max at 95 %%"
                        + " confidence); trip counts (sum of weights) exact in all%n",
                within, exact.size());
        System.out.printf(
                "records that reached Flink: exact %,d, approximate %,d (%.1f %%); relay: %s%n",
                rows, sampled, 100.0 * sampled / rows, relay.metrics());
        System.out.printf(
                "job time: exact %.1f s, approximate %.1f s (one shared machine, loopback, no"
                        + " bottleneck: not a throughput comparison; see docs/kafka.md)%n",
                exactSecs, approxSecs);
    }
}
