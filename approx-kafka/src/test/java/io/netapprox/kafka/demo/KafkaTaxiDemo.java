package io.netapprox.kafka.demo;

import io.netapprox.core.sampling.ApproxResult;
import io.netapprox.kafka.ApproxConsumers;
import io.netapprox.kafka.ApproxEstimates;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * The consumer-only taxi demo (Kafka -> Flink is {@code bash scripts/demo.sh kafka}): the broker,
 * trips and relay of {@link TaxiDemoKafka} (one day; header {@code hour} = the pickup hour, key =
 * the zone, value = the trip distance), then the average trip distance per pickup hour read twice:
 * by a plain {@code KafkaConsumer} (exact) and by an approximate consumer ({@code
 * approx.stratum=header:hour}, one window for the day, e_max 5 %, hour 17 at 1 %). Prints both per
 * hour with the interval and whether the error is within the bound.
 *
 * <pre>
 * KafkaTaxiDemo [--rows 1000000] [--partitions 4] [--emax 0.05] [--seed 42]
 * </pre>
 */
public final class KafkaTaxiDemo {
    private static final long DAY = TaxiDemoKafka.DAY;
    private static final String TOPIC = TaxiDemoKafka.TOPIC;

    private KafkaTaxiDemo() {}

    public static void main(String[] argv) throws Exception {
        TaxiDemoKafka.Args args = TaxiDemoKafka.Args.parse("KafkaTaxiDemo", argv, 4);
        try (TaxiDemoKafka kafka =
                TaxiDemoKafka.start(
                        args,
                        new TaxiDemoKafka.Encoding(
                                trip -> Integer.toString(trip.zone()),
                                trip -> Double.toString(trip.distance()),
                                true))) {
            long t = System.nanoTime();
            Hours exact = readExact(kafka, args.partitions());
            double exactSecs = TaxiDemoKafka.secondsSince(t);
            t = System.nanoTime();
            Approx approx = readApprox(kafka, args.partitions(), args.emax(), args.seed());
            double approxSecs = TaxiDemoKafka.secondsSince(t);
            report(exact, approx, args.emax(), exactSecs, approxSecs);
        }
        System.exit(0); // the test kit's non-daemon threads
    }

    /** Per-hour record counts and distance sums. */
    private static final class Hours {
        final long[] count = new long[24];
        final double[] sum = new double[24];
        long records;
    }

    private static Hours readExact(TaxiDemoKafka kafka, int partitions) {
        Hours h = new Hours();
        try (KafkaConsumer<String, String> c =
                new KafkaConsumer<>(kafka.broker().stringConsumerProps("taxi-demo-exact"))) {
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

    private static Approx readApprox(TaxiDemoKafka kafka, int partitions, double emax, long seed) {
        Properties p = kafka.consumerProps("taxi-demo-approx", true);
        p.put("approx.stratum", "header:hour");
        p.put("approx.window.ms", "86400000");
        p.put("approx.window.grace.ms", "0");
        p.put("approx.emax", Double.toString(emax));
        p.put("approx.group.17.emax", "0.01");
        p.put("approx.seed", Long.toString(seed));
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
            return new Approx(est, kafka.relay().metrics().toString());
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
