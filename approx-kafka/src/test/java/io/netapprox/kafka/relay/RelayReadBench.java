package io.netapprox.kafka.relay;

import io.netapprox.kafka.testkit.KafkaBroker;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteBufferDeserializer;

/**
 * Benchmark (not a test) of the relay's read path: fetch + sample (a real KRaft broker in this JVM,
 * one partition, the relay's {@link SegmentBuilder} with key strata at e_max 5 %), records/s of
 *
 * <ul>
 *   <li>{@code copy}: the previous path - {@code ByteArrayDeserializer} copies every fetched
 *       record's key and value into arrays before sampling;
 *   <li>{@code view}: the current path - {@code ByteBufferDeserializer} hands views of the fetched
 *       batch; only records a reservoir keeps are copied out.
 * </ul>
 *
 * Alternating rounds in one run after one warm-up round of each. {@code RelayReadBench [--records
 * 1000000] [--value-bytes 200] [--rounds 3]}
 */
public final class RelayReadBench {
    private static final long WINDOW_MS = 60_000;
    private static final long T0 = 1_700_000_000_000L - (1_700_000_000_000L % WINDOW_MS);

    private RelayReadBench() {}

    public static void main(String[] args) throws Exception {
        int records = 1_000_000;
        int valueBytes = 200;
        int rounds = 3;
        Properties against = new Properties(); // --against k=v: view path vs view path with these
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--records" -> records = Integer.parseInt(args[i + 1]);
                case "--value-bytes" -> valueBytes = Integer.parseInt(args[i + 1]);
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                case "--against" -> {
                    String[] kv = args[i + 1].split("=", 2);
                    if (kv.length != 2) {
                        throw new IllegalArgumentException("--against wants key=value");
                    }
                    against.put(kv[0], kv[1]);
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        KafkaBroker broker = KafkaBroker.cluster(1);
        try {
            String topic = "relay-read-bench";
            broker.createTopic(topic, 1);
            produce(broker, topic, records, valueBytes);
            System.out.printf(
                    "relay read path: %,d records of %d-byte values, 1 partition, 8 key strata,"
                            + " 20 one-minute windows, e_max 5 %%; load average %.1f (shared"
                            + " machine)%n",
                    records, valueBytes, load());
            if (!against.isEmpty()) {
                compare(broker, topic, records, rounds, against);
            } else {
                copyVsView(broker, topic, records, rounds);
            }
        } finally {
            broker.close();
        }
        System.exit(0); // the test kit's non-daemon threads
    }

    /** Same-run A/B: records copied out of the batch against views of it. */
    private static void copyVsView(KafkaBroker broker, String topic, int records, int rounds) {
        read(broker, topic, records, false); // warm-up (JIT), not counted
        read(broker, topic, records, true);
        double copy = 0;
        double view = 0;
        for (int r = 0; r < rounds; r++) {
            double c = read(broker, topic, records, false);
            double v = read(broker, topic, records, true);
            copy += c;
            view += v;
            System.out.printf(
                    "round %d: copy %,.0f records/s, view %,.0f records/s (x%.2f), load %.1f%n",
                    r + 1, c, v, v / c, load());
        }
        System.out.printf(
                "mean: copy %,.0f records/s, view %,.0f records/s: view/copy = %.2f%n",
                copy / rounds, view / rounds, view / copy);
    }

    /** Same-run A/B of the view path: relay defaults against the defaults plus {@code extra}. */
    private static void compare(
            KafkaBroker broker, String topic, int records, int rounds, Properties extra) {
        read(broker, topic, records, true, new Properties()); // warm-up (JIT), not counted
        read(broker, topic, records, true, extra);
        double a = 0;
        double b = 0;
        for (int r = 0; r < rounds; r++) {
            double x = read(broker, topic, records, true, new Properties());
            double y = read(broker, topic, records, true, extra);
            a += x;
            b += y;
            System.out.printf(
                    "round %d: defaults %,.0f records/s, with %s %,.0f records/s (x%.2f), load %.1f%n",
                    r + 1, x, extra, y, y / x, load());
        }
        System.out.printf(
                "mean: defaults %,.0f records/s, with %s %,.0f records/s: ratio %.2f%n",
                a / rounds, extra, b / rounds, b / a);
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private static void produce(KafkaBroker broker, String topic, int records, int valueBytes)
            throws Exception {
        SplittableRandom rnd = new SplittableRandom(7);
        byte[] value = new byte[valueBytes];
        try (KafkaProducer<byte[], byte[]> p = broker.bytesProducer(new Properties())) {
            List<Future<?>> acks = new ArrayList<>();
            for (int i = 0; i < records; i++) {
                rnd.nextBytes(value);
                long ts = T0 + (20L * WINDOW_MS * i) / records;
                acks.add(
                        p.send(
                                new ProducerRecord<>(
                                        topic,
                                        0,
                                        ts,
                                        ("z" + rnd.nextInt(8)).getBytes(StandardCharsets.UTF_8),
                                        value.clone())));
                if (acks.size() >= 10_000) {
                    for (Future<?> a : acks) {
                        a.get();
                    }
                    acks.clear();
                }
            }
            p.flush();
            for (Future<?> a : acks) {
                a.get();
            }
        }
    }

    /** Reads the whole partition through a SegmentBuilder; returns records/s. */
    private static double read(KafkaBroker broker, String topic, int records, boolean views) {
        return read(broker, topic, records, views, new Properties());
    }

    private static double read(
            KafkaBroker broker, String topic, int records, boolean views, Properties extra) {
        StreamSpec spec =
                new StreamSpec(
                        0.05,
                        Map.of(),
                        0.95,
                        1.5,
                        1.0,
                        WINDOW_MS,
                        0,
                        new Stratification(Stratification.Kind.KEY, null),
                        false,
                        1,
                        ValueSource.DEFAULT);
        SampleSizer plan = new SampleSizer(spec);
        Stratifier stratifier = new Stratifier(spec.stratification());
        TopicPartition tp = new TopicPartition(topic, 0);
        Properties props = broker.bytesConsumerProps(KafkaBroker.unique("bench"));
        props.put("max.poll.records", "2000");
        props.putAll(extra);
        long sampled = 0;
        long t0 = System.nanoTime();
        if (views) {
            try (KafkaConsumer<ByteBuffer, ByteBuffer> c =
                    new KafkaConsumer<>(
                            props, new ByteBufferDeserializer(), new ByteBufferDeserializer())) {
                c.assign(List.of(tp));
                c.seek(tp, 0);
                SegmentBuilder b = new SegmentBuilder(tp, 0, spec, plan, stratifier);
                long read = 0;
                while (read < records) {
                    for (ConsumerRecord<ByteBuffer, ByteBuffer> r :
                            c.poll(Duration.ofMillis(200))) {
                        if (!b.tryAdd(r)) {
                            sampled += b.close(r.offset()).records().size();
                            b = new SegmentBuilder(tp, r.offset(), spec, plan, stratifier);
                            b.add(r);
                        }
                        read++;
                    }
                }
                sampled += b.close(records).records().size();
            }
        } else {
            try (KafkaConsumer<byte[], byte[]> c =
                    new KafkaConsumer<>(
                            props, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                c.assign(List.of(tp));
                c.seek(tp, 0);
                SegmentBuilder b = new SegmentBuilder(tp, 0, spec, plan, stratifier);
                long read = 0;
                while (read < records) {
                    for (ConsumerRecord<byte[], byte[]> a : c.poll(Duration.ofMillis(200))) {
                        ConsumerRecord<ByteBuffer, ByteBuffer> r =
                                new ConsumerRecord<>(
                                        a.topic(),
                                        a.partition(),
                                        a.offset(),
                                        a.timestamp(),
                                        a.timestampType(),
                                        a.serializedKeySize(),
                                        a.serializedValueSize(),
                                        a.key() == null ? null : ByteBuffer.wrap(a.key()),
                                        a.value() == null ? null : ByteBuffer.wrap(a.value()),
                                        a.headers(),
                                        Optional.empty());
                        if (!b.tryAdd(r)) {
                            sampled += b.close(r.offset()).records().size();
                            b = new SegmentBuilder(tp, r.offset(), spec, plan, stratifier);
                            b.add(r);
                        }
                        read++;
                    }
                }
                sampled += b.close(records).records().size();
            }
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        if (sampled <= 0 || sampled >= records) {
            throw new IllegalStateException("sampled " + sampled + " of " + records);
        }
        return records / secs;
    }
}
