package io.netapprox.kafka.demo;

import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.examples.taxi.TaxiTripGenerator;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayConfig;
import io.netapprox.kafka.testkit.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.function.Function;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The Kafka side of the taxi demos ({@link KafkaTaxiDemo}, and approx-kafka-flink's {@code
 * KafkaFlinkTaxiDemo} through the test-jar): a real single-node KRaft broker (Kafka's test kit, in
 * this JVM), one day of synthetic taxi trips produced to {@link #TOPIC} in event-time order (each
 * partition's trips by pickup hour, timestamps spread over the hour), a relay beside the broker
 * (ATP over loopback, authenticated) and the consumer properties that reach it.
 */
public final class TaxiDemoKafka implements AutoCloseable {
    /** 2024-01-15T00:00Z: a day in the past, so every window is closed at once. */
    public static final long DAY = 1_705_276_800_000L;

    public static final long HOUR = 3_600_000L;
    public static final String TOPIC = "taxi-trips";
    private static final String SECRET = "kafka-taxi-demo-secret-0123456789";

    /** The demos' common arguments. */
    public record Args(long rows, int partitions, double emax, long seed) {
        /**
         * {@code [--rows 1000000] [--partitions P] [--emax 0.05] [--seed 42]}; exits with 2 and the
         * usage on anything else.
         */
        public static Args parse(String demo, String[] args, int defaultPartitions) {
            long rows = 1_000_000;
            int partitions = defaultPartitions;
            double emax = 0.05;
            long seed = 42;
            for (int i = 0; i < args.length; i += 2) {
                String v = i + 1 < args.length ? args[i + 1] : "";
                switch (args[i]) {
                    case "--rows" -> rows = Long.parseLong(v);
                    case "--partitions" -> partitions = Integer.parseInt(v);
                    case "--emax" -> emax = Double.parseDouble(v);
                    case "--seed" -> seed = Long.parseLong(v);
                    default -> {
                        System.err.println(
                                "usage: "
                                        + demo
                                        + " [--rows N] [--partitions P] [--emax E] [--seed S]"
                                        + " (unknown: "
                                        + args[i]
                                        + ")");
                        System.exit(2);
                    }
                }
            }
            return new Args(rows, partitions, emax, seed);
        }
    }

    /**
     * How a trip becomes a record: its key and value (UTF-8), and whether it carries {@code hour}.
     */
    public record Encoding(
            Function<TaxiTrip, String> key, Function<TaxiTrip, String> value, boolean hourHeader) {}

    private final KafkaBroker broker;
    private final KafkaRelay relay;

    private TaxiDemoKafka(KafkaBroker broker, KafkaRelay relay) {
        this.broker = broker;
        this.relay = relay;
    }

    /** Starts the broker, produces the trips, starts the relay; prints what it did. */
    public static TaxiDemoKafka start(Args args, Encoding encoding) throws Exception {
        KafkaBroker broker = KafkaBroker.cluster(1);
        try {
            broker.createTopic(TOPIC, args.partitions());
            long t = System.nanoTime();
            produce(broker, args, encoding);
            System.out.printf(
                    "[demo] KRaft broker %s: produced %,d taxi trips to %s (%d partitions) in %.1f s%n",
                    broker.bootstrapServers(),
                    args.rows(),
                    TOPIC,
                    args.partitions(),
                    secondsSince(t));
            KafkaRelay relay =
                    KafkaRelay.start(
                            RelayConfig.builder(broker.bootstrapServers())
                                    .listen("127.0.0.1:0")
                                    .dataPort(0)
                                    // the demo's broker has no ACLs
                                    .authorization(RelayConfig.Authorization.NONE)
                                    .secret(SECRET.getBytes(StandardCharsets.UTF_8))
                                    .build());
            return new TaxiDemoKafka(broker, relay);
        } catch (Exception | Error e) {
            broker.close();
            throw e;
        }
    }

    public KafkaBroker broker() {
        return broker;
    }

    public KafkaRelay relay() {
        return relay;
    }

    /**
     * Properties of a consumer of {@code group} with string keys and values, with {@code
     * approx.enable} as given and the relay's address and secret (the demo adds its sampling keys).
     */
    public Properties consumerProps(String group, boolean approximate) {
        Properties p = broker.stringConsumerProps(group);
        p.put("approx.enable", String.valueOf(approximate));
        p.put("approx.auth.secret", SECRET);
        for (int id : broker.brokerIds()) {
            p.put("approx.relay.address." + id, relay.address());
        }
        return p;
    }

    public static double secondsSince(long nanos) {
        return (System.nanoTime() - nanos) / 1e9;
    }

    private static void produce(KafkaBroker broker, Args args, Encoding encoding) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            List<Future<?>> acks = new ArrayList<>();
            for (int part = 0; part < args.partitions(); part++) {
                List<List<TaxiTrip>> byHour = new ArrayList<>();
                for (int h = 0; h < 24; h++) {
                    byHour.add(new ArrayList<>());
                }
                Iterator<TaxiTrip> trips =
                        TaxiTripGenerator.partition(
                                args.rows(), args.partitions(), part, args.seed());
                while (trips.hasNext()) {
                    TaxiTrip trip = trips.next();
                    byHour.get(trip.hour()).add(trip);
                }
                for (int h = 0; h < 24; h++) {
                    List<TaxiTrip> hour = byHour.get(h);
                    for (int i = 0; i < hour.size(); i++) {
                        acks.add(p.send(record(part, hour.get(i), h, i, hour.size(), encoding)));
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

    private static ProducerRecord<byte[], byte[]> record(
            int partition, TaxiTrip trip, int hour, int index, int ofHour, Encoding encoding) {
        RecordHeaders headers = new RecordHeaders();
        if (encoding.hourHeader()) {
            headers.add(new RecordHeader("hour", utf8(Integer.toString(hour))));
        }
        long ts = DAY + hour * HOUR + (index * HOUR) / ofHour;
        return new ProducerRecord<>(
                TOPIC,
                partition,
                ts,
                utf8(encoding.key().apply(trip)),
                utf8(encoding.value().apply(trip)),
                headers);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Closes the relay and the broker. */
    @Override
    public void close() throws Exception {
        try {
            relay.close();
        } finally {
            broker.close();
        }
    }
}
