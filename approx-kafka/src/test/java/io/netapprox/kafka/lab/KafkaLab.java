package io.netapprox.kafka.lab;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.ApproxEstimates;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * The client side of the Kafka lab benchmark ({@code benchmarks/kafka/run.sh}; not a test):
 *
 * <pre>
 * KafkaLab produce --bootstrap H:P --topic T --partitions P --records N --windows W --strata S
 *                  --value-bytes B --truth FILE
 * KafkaLab consume --bootstrap H:P --topic T --partitions P --truth FILE --mode plain|approx
 *                  [--relay H:P --secret-file F --emax E] [--data-plane auto|atp|tcp]
 * </pre>
 *
 * {@code produce} writes N records (key = stratum, value = {@code <fare>;<padding>} of B bytes,
 * timestamps spread over W one-minute windows in order) and the exact per-window, per-stratum
 * totals. {@code consume} reads every partition from the start to its end offset, plainly or
 * approximately, and prints one {@code window} line per window when its answer is complete (every
 * partition is past it) and a {@code result} line: records returned, seconds, windows/s, and for
 * the approximate consumer each (window, stratum) total's error against the truth and whether it is
 * within e_max. {@code --data-plane} sets the approximate consumer's {@code approx.data.plane} (the
 * lab's {@code atp} and {@code tcp} modes; the relay's {@code --data-plane} must allow it).
 */
public final class KafkaLab {
    static final long WINDOW_MS = 60_000;
    static final long T0 = 1_700_000_000_000L - (1_700_000_000_000L % WINDOW_MS);

    private KafkaLab() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            o.put(args[i], args[i + 1]);
        }
        switch (args.length > 0 ? args[0] : "") {
            case "produce" -> produce(o);
            case "consume" -> consume(o);
            default -> {
                System.err.println("usage: KafkaLab produce|consume --option value ...");
                System.exit(2);
            }
        }
        System.exit(0);
    }

    private static String req(Map<String, String> o, String k) {
        String v = o.get(k);
        if (v == null) {
            throw new IllegalArgumentException("missing " + k);
        }
        return v;
    }

    private static void produce(Map<String, String> o) throws Exception {
        String topic = req(o, "--topic");
        int partitions = Integer.parseInt(req(o, "--partitions"));
        long records = Long.parseLong(req(o, "--records"));
        int windows = Integer.parseInt(req(o, "--windows"));
        int strata = Integer.parseInt(req(o, "--strata"));
        int valueBytes = Integer.parseInt(req(o, "--value-bytes"));
        Properties p = new Properties();
        p.put("bootstrap.servers", req(o, "--bootstrap"));
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("linger.ms", "20");
        p.put("batch.size", "262144");
        Map<String, double[]> truth = new TreeMap<>();
        SplittableRandom rnd = new SplittableRandom(2026);
        long t = System.nanoTime();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<?>> acks = new ArrayList<>();
            long perPartition = records / partitions;
            for (int part = 0; part < partitions; part++) {
                for (long i = 0; i < perPartition; i++) {
                    long ts = T0 + (windows * WINDOW_MS * i) / perPartition;
                    String stratum = "s" + rnd.nextInt(strata);
                    double fare = 5 + Math.exp(2 + 0.8 * gaussian(rnd));
                    StringBuilder v = new StringBuilder(valueBytes);
                    v.append(String.format("%.4f", fare)).append(';');
                    while (v.length() < valueBytes) {
                        v.append((char) ('a' + rnd.nextInt(26)));
                    }
                    long window = ts - ts % WINDOW_MS;
                    double[] cell =
                            truth.computeIfAbsent(window + "," + stratum, k -> new double[2]);
                    cell[0]++;
                    cell[1] += Double.parseDouble(v.substring(0, v.indexOf(";")));
                    acks.add(
                            producer.send(
                                    new ProducerRecord<>(
                                            topic,
                                            part,
                                            ts,
                                            stratum.getBytes(StandardCharsets.UTF_8),
                                            v.toString().getBytes(StandardCharsets.UTF_8))));
                    if (acks.size() >= 20_000) {
                        for (Future<?> a : acks) {
                            a.get();
                        }
                        acks.clear();
                    }
                }
            }
            producer.flush();
            for (Future<?> a : acks) {
                a.get();
            }
        }
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(req(o, "--truth"))))) {
            truth.forEach((k, c) -> w.printf("%s,%d,%.6f%n", k, (long) c[0], c[1]));
        }
        System.out.printf(
                "produced %,d records (%d partitions, %d windows, %d strata, %d-byte values) in %.1f s%n",
                records, partitions, windows, strata, valueBytes, (System.nanoTime() - t) / 1e9);
    }

    private static double gaussian(SplittableRandom rnd) {
        double u = 1 - rnd.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd.nextDouble());
    }

    private static double fare(String value) {
        return Double.parseDouble(value.substring(0, value.indexOf(';')));
    }

    private static void consume(Map<String, String> o) throws IOException {
        String topic = req(o, "--topic");
        int partitions = Integer.parseInt(req(o, "--partitions"));
        String mode = req(o, "--mode");
        double emax = Double.parseDouble(o.getOrDefault("--emax", "0.05"));
        Map<String, double[]> truth = new HashMap<>();
        for (String line : Files.readAllLines(Path.of(req(o, "--truth")))) {
            String[] f = line.split(",");
            truth.put(
                    f[0] + "," + f[1],
                    new double[] {Double.parseDouble(f[2]), Double.parseDouble(f[3])});
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", req(o, "--bootstrap"));
        p.put("group.id", "lab-" + mode + "-" + System.nanoTime());
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("max.poll.records", "5000");
        boolean approx = mode.equals("approx");
        if (approx) {
            p.put("approx.enable", "true");
            p.put("approx.stratum", "key");
            p.put("approx.window.ms", Long.toString(WINDOW_MS));
            p.put("approx.window.grace.ms", "0");
            p.put("approx.emax", Double.toString(emax));
            p.put("approx.auth.secret.file", req(o, "--secret-file"));
            p.put("approx.relay.address.1", req(o, "--relay"));
            if (o.containsKey("--data-plane")) {
                p.put("approx.data.plane", o.get("--data-plane"));
            }
        }
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        ApproxEstimates<String, String> est = new ApproxEstimates<>(r -> fare(r.value()), 0.95);
        Map<String, double[]> exact = new HashMap<>();
        long returned = 0;
        long start;
        long[] maxWindow = new long[partitions];
        java.util.Arrays.fill(maxWindow, Long.MIN_VALUE);
        long reported = Long.MIN_VALUE;
        int windowsDone = 0;
        try (Consumer<String, String> c = ApproxConsumers.create(p)) {
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            start = System.nanoTime();
            long deadline = start + Duration.ofMinutes(20).toNanos();
            while (true) {
                ConsumerRecords<String, String> polled = c.poll(Duration.ofMillis(200));
                if (approx) {
                    est.add(polled);
                }
                for (ConsumerRecord<String, String> r : polled) {
                    returned++;
                    long w = r.timestamp() - r.timestamp() % WINDOW_MS;
                    maxWindow[r.partition()] = Math.max(maxWindow[r.partition()], w);
                    if (!approx) {
                        double[] cell =
                                exact.computeIfAbsent(w + "," + r.key(), k -> new double[2]);
                        cell[0]++;
                        cell[1] += fare(r.value());
                    }
                }
                boolean atEnd = true;
                long done = Long.MAX_VALUE;
                for (TopicPartition tp : tps) {
                    boolean ended = c.position(tp) >= end.get(tp);
                    atEnd &= ended;
                    // windows below the partition's latest are complete in it (records in order)
                    long latest = maxWindow[tp.partition()];
                    if (ended) {
                        continue;
                    }
                    // nothing returned yet: no window complete (MIN_VALUE - window would overflow)
                    done = Math.min(done, latest == Long.MIN_VALUE ? latest : latest - WINDOW_MS);
                }
                long secsMs = (System.nanoTime() - start) / 1_000_000;
                for (long w : windowsOf(truth)) {
                    if (w > reported && w <= done) {
                        System.out.printf("window %d done_ms %d%n", (w - T0) / WINDOW_MS, secsMs);
                        reported = w;
                        windowsDone++;
                    }
                }
                if (atEnd) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("did not reach the end in 20 minutes");
                }
            }
        }
        double secs = (System.nanoTime() - start) / 1e9;
        int cells = 0;
        int within = 0;
        double worst = 0;
        for (Map.Entry<String, double[]> e : truth.entrySet()) {
            String[] k = e.getKey().split(",");
            double t = e.getValue()[1];
            double got;
            if (approx) {
                ApproxResult s = est.sum(Long.parseLong(k[0]), k[1]);
                got = s.mean();
                if (est.count(Long.parseLong(k[0]), k[1]) != (long) e.getValue()[0]) {
                    throw new IllegalStateException("count of " + e.getKey() + " not exact");
                }
            } else {
                got = exact.getOrDefault(e.getKey(), new double[2])[1];
            }
            double err = Math.abs(got - t) / t;
            worst = Math.max(worst, err);
            cells++;
            within += err <= emax ? 1 : 0;
        }
        System.out.printf(
                "result mode %s records_returned %d seconds %.2f windows %d windows_per_s %.3f"
                        + " records_per_s %.0f cells %d within_emax %d worst_error %.4f load %.1f%n",
                mode,
                returned,
                secs,
                windowsDone,
                windowsDone / secs,
                truthRecords(truth) / secs,
                cells,
                within,
                worst,
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
    }

    private static List<Long> windowsOf(Map<String, double[]> truth) {
        return truth.keySet().stream()
                .map(k -> Long.parseLong(k.split(",")[0]))
                .distinct()
                .sorted()
                .toList();
    }

    private static long truthRecords(Map<String, double[]> truth) {
        long n = 0;
        for (double[] c : truth.values()) {
            n += (long) c[0];
        }
        return n;
    }
}
