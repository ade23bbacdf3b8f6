package io.netapprox.kafka.flink.demo;

import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.WindowEstimate;
import io.netapprox.kafka.demo.TaxiDemoKafka;
import io.netapprox.kafka.flink.ApproxKafkaSource;
import io.netapprox.kafka.relay.KafkaRelay;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

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
    private static final long DAY = TaxiDemoKafka.DAY;
    private static final long HOUR = TaxiDemoKafka.HOUR;
    private static final int BOROUGHS = 3;

    private KafkaFlinkTaxiDemo() {}

    public static void main(String[] argv) throws Exception {
        TaxiDemoKafka.Args args = TaxiDemoKafka.Args.parse("KafkaFlinkTaxiDemo", argv, 2);
        try (TaxiDemoKafka kafka =
                TaxiDemoKafka.start(
                        args,
                        new TaxiDemoKafka.Encoding(
                                KafkaFlinkTaxiDemo::borough,
                                trip -> Double.toString(trip.fare()),
                                false))) {
            long t = System.nanoTime();
            Map<String, Row> exact = run(kafka, args, false);
            double exactSecs = TaxiDemoKafka.secondsSince(t);
            t = System.nanoTime();
            Map<String, Row> approx = run(kafka, args, true);
            double approxSecs = TaxiDemoKafka.secondsSince(t);
            report(exact, approx, args.emax(), args.rows(), exactSecs, approxSecs, kafka.relay());
        }
        System.exit(0); // the test kit's non-daemon threads
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
            TaxiDemoKafka kafka, TaxiDemoKafka.Args args, boolean approximate) throws Exception {
        Properties consumer =
                kafka.consumerProps(approximate ? "demo-approx" : "demo-exact", approximate);
        consumer.put("approx.stratum", "key");
        consumer.put("approx.window.ms", Long.toString(HOUR));
        consumer.put("approx.window.grace.ms", "0");
        consumer.put("approx.emax", Double.toString(args.emax()));
        consumer.put("approx.seed", Long.toString(args.seed()));
        Configuration conf = new Configuration();
        conf.setString("minicluster.number-of-taskmanagers", "2");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(Math.min(args.partitions(), 4));
        ApproxKafkaSource<Trip> source =
                ApproxKafkaSource.<Trip>builder()
                        .consumerProperties(consumer)
                        .topic(TaxiDemoKafka.TOPIC)
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
