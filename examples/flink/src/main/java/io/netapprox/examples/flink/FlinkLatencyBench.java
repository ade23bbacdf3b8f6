package io.netapprox.examples.flink;

import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.examples.taxi.TaxiTripGenerator;
import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.WindowEstimate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.util.CloseableIterator;

/**
 * Window result latency of the approximate vs the exact query on a running Flink cluster (the
 * network-lab benchmark, benchmarks/flink/netlab). The source emits the taxi trips at a fixed rate
 * with event time = the wall-clock time it emits them (trip {@code i} at {@code start + i/rate},
 * {@code start} on a window boundary), so a window's result latency is the wall-clock time its last
 * answer reaches this client minus the window's end. Same input rate for both modes; runs alternate
 * after one warm-up run of each. Per window: every average checked against the truth (recomputed
 * here from the same trips) and its e_max.
 *
 * <pre>
 * FlinkLatencyBench --cluster HOST:PORT [--rate 20000] [--seconds 30] [--window-ms 2000]
 *     [--groups 16] [--runs 5] [--emax 0.05] [--parallelism 4] [--payload-bytes 0]
 *     [--approx.KEY VALUE ...]
 *     [--variants "NAME:approx.KEY=VALUE,approx.KEY=VALUE;NAME:..."]
 * </pre>
 *
 * <p>{@code --variants} replaces the one approximate mode by several named ones (each with its own
 * options on top of the common {@code --approx.*}), so that e.g. two settings of one option are
 * compared with exact in the same invocation; the modes' order rotates from run to run.
 *
 * <p>{@code --payload-bytes B} widens every trip, after the source's rebalance and before the
 * query, by a string of B bytes the query does not read (a wide record, e.g. after an enrichment),
 * in both modes: the exact {@code keyBy} ships it with every record, the approximate sender only
 * the values the aggregates read, of the sampled records.
 *
 * <p>Output: one {@code RESULT} line per run, one {@code WINDOW} line per (run, window); {@code
 * mode} is {@code exact}, {@code approx} or the variant's name.
 */
public final class FlinkLatencyBench {
    private FlinkLatencyBench() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new TreeMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        if (!opt.containsKey("cluster")) {
            throw new IllegalArgumentException(
                    "usage: FlinkLatencyBench --cluster HOST:PORT [--rate R] [--seconds S]"
                            + " [--window-ms W] [--groups G] [--runs N] [--emax E] [--parallelism P]"
                            + " [--payload-bytes B] [--approx.KEY VALUE ...]"
                            + " [--variants NAME:approx.K=V,...;NAME:...]");
        }
        Params p = new Params(opt);
        System.out.printf(
                "# FlinkLatencyBench: %d trips/s for %d s, %d groups, %d ms windows, avg(fare) and"
                        + " count, e_max %.2f, parallelism %d, payload %d bytes per trip, cluster %s,"
                        + " %d runs each after a warm-up; %d cores visible to the client (shared"
                        + " machine)%n",
                p.rate,
                p.seconds,
                p.groups,
                p.windowMs,
                p.eMax,
                p.parallelism,
                p.payloadBytes,
                p.cluster,
                p.runs,
                Runtime.getRuntime().availableProcessors());
        List<String> modes = new ArrayList<>();
        modes.add("exact");
        modes.addAll(p.variants.keySet());
        for (String m : modes) {
            run(p, m, -1);
        }
        for (int r = 0; r < p.runs; r++) {
            for (int i = 0; i < modes.size(); i++) {
                run(p, modes.get((i + r) % modes.size()), r);
            }
        }
    }

    private static final class Params {
        final String cluster;
        final int rate;
        final int seconds;
        final long windowMs;
        final int groups;
        final int runs;
        final double eMax;
        final int parallelism;
        final int payloadBytes;
        final Map<String, String> approxConf = new HashMap<>();

        /** Approximate modes by name, each with its own options; "approx" with none by default. */
        final Map<String, Map<String, String>> variants = new java.util.LinkedHashMap<>();

        Params(Map<String, String> opt) {
            cluster = opt.get("cluster");
            rate = Integer.parseInt(opt.getOrDefault("rate", "20000"));
            seconds = Integer.parseInt(opt.getOrDefault("seconds", "30"));
            windowMs = Long.parseLong(opt.getOrDefault("window-ms", "2000"));
            groups = Integer.parseInt(opt.getOrDefault("groups", "16"));
            runs = Integer.parseInt(opt.getOrDefault("runs", "5"));
            eMax = Double.parseDouble(opt.getOrDefault("emax", "0.05"));
            parallelism = Integer.parseInt(opt.getOrDefault("parallelism", "4"));
            payloadBytes = Integer.parseInt(opt.getOrDefault("payload-bytes", "0"));
            if (payloadBytes < 0) {
                throw new IllegalArgumentException("--payload-bytes must be >= 0: " + payloadBytes);
            }
            opt.forEach(
                    (k, v) -> {
                        if (k.startsWith("approx.")) {
                            approxConf.put(k, v);
                        }
                    });
            String spec = opt.getOrDefault("variants", "approx:");
            for (String variant : spec.split(";")) {
                int colon = variant.indexOf(':');
                String name = (colon < 0 ? variant : variant.substring(0, colon)).trim();
                if (!name.matches("[A-Za-z][A-Za-z0-9_-]*") || name.equals("exact")) {
                    throw new IllegalArgumentException(
                            "--variants: bad variant name '" + name + "'");
                }
                Map<String, String> conf = new HashMap<>();
                String kvs = colon < 0 ? "" : variant.substring(colon + 1).trim();
                for (String kv : kvs.isEmpty() ? new String[0] : kvs.split(",")) {
                    int eq = kv.indexOf('=');
                    if (eq < 0 || !kv.trim().startsWith("approx.")) {
                        throw new IllegalArgumentException(
                                "--variants: expected approx.KEY=VALUE, got '" + kv + "'");
                    }
                    conf.put(kv.substring(0, eq).trim(), kv.substring(eq + 1).trim());
                }
                variants.put(name, conf);
            }
        }

        long rows() {
            return (long) rate * seconds;
        }
    }

    private static void run(Params p, String mode, int run) throws Exception {
        boolean approx = !mode.equals("exact");
        String[] hp = p.cluster.split(":");
        Configuration conf = new Configuration();
        conf.setString("pipeline.auto-watermark-interval", "50 ms");
        conf.setString("approx.enabled", String.valueOf(approx));
        p.approxConf.forEach(conf::setString);
        if (approx) {
            p.variants.get(mode).forEach(conf::setString);
        }
        StreamExecutionEnvironment env =
                StreamExecutionEnvironment.createRemoteEnvironment(
                        hp[0], Integer.parseInt(hp[1]), conf);
        env.setParallelism(p.parallelism);
        long rows = p.rows();
        int groups = p.groups;
        DataStream<TaxiRide> trips =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        new PacedTrips(rows, p.rate, p.windowMs, groups),
                                        rows,
                                        RateLimiterStrategy.noOp(),
                                        TypeInformation.of(TaxiRide.class)),
                                WatermarkStrategy.<TaxiRide>forMonotonousTimestamps()
                                        .withTimestampAssigner((ride, t) -> ride.pickupMillis),
                                "paced taxi trips")
                        .setParallelism(1)
                        .rebalance()
                        .map(new Widen(p.payloadBytes))
                        .returns(TypeInformation.of(TaxiRide.class));
        DataStream<WindowEstimate> answers =
                Approx.of(trips)
                        .stratifyBy(TaxiRide::getZone)
                        .window(TumblingEventTimeWindows.of(Duration.ofMillis(p.windowMs)))
                        .errorBound(p.eMax)
                        .aggregate(Aggregate.avg("fare", TaxiRide::getFare), Aggregate.count());
        Map<Long, Long> lastArrival = new TreeMap<>();
        Map<Long, Long> firstArrival = new TreeMap<>();
        List<WindowEstimate> all = new ArrayList<>();
        long submitted = System.currentTimeMillis();
        try (CloseableIterator<WindowEstimate> it = answers.collectAsync()) {
            env.executeAsync(mode + " latency run " + run);
            while (it.hasNext()) {
                WindowEstimate e = it.next();
                long now = System.currentTimeMillis();
                all.add(e);
                lastArrival.put(e.windowEnd, now);
                firstArrival.putIfAbsent(e.windowEnd, now);
            }
        }
        long done = System.currentTimeMillis();
        // the truth: trip i is in window (i * 1000 / rate) / windowMs after the first window
        long start = all.stream().mapToLong(e -> e.windowStart).min().orElse(0);
        Map<Long, Map<String, double[]>> truth = new HashMap<>();
        Iterator<TaxiTrip> t = TaxiTripGenerator.partition(rows, 1, 0, 42);
        for (long i = 0; i < rows; i++) {
            TaxiTrip trip = t.next();
            long w = start + PacedTrips.offsetMillis(i, p.rate) / p.windowMs * p.windowMs;
            double[] s =
                    truth.computeIfAbsent(w, x -> new HashMap<>())
                            .computeIfAbsent(
                                    String.valueOf(trip.zone() % groups), x -> new double[2]);
            s[0]++;
            s[1] += trip.fare();
        }
        int avgs = 0;
        int outside = 0;
        int wrongCounts = 0;
        long sampled = 0;
        long population = 0;
        double maxErr = 0;
        for (WindowEstimate e : all) {
            double[] s = truth.getOrDefault(e.windowStart, Map.of()).get(e.group);
            if (s == null) {
                wrongCounts++;
                continue;
            }
            if (e.aggregate.equals("count")) {
                wrongCounts += e.estimate == s[0] ? 0 : 1;
                sampled += e.sampleRecords;
                population += e.populationRecords;
            } else {
                avgs++;
                double err = e.relativeError(s[1] / s[0]);
                maxErr = Math.max(maxErr, err);
                outside += err <= e.eMax ? 0 : 1;
            }
        }
        int expected = truth.values().stream().mapToInt(Map::size).sum();
        List<Long> lat = new ArrayList<>();
        for (Map.Entry<Long, Long> w : lastArrival.entrySet()) {
            long l = w.getValue() - w.getKey();
            lat.add(l);
            if (run >= 0) {
                System.out.printf(
                        "WINDOW mode=%s run=%d window_end=%d latency_ms=%d first_answer_ms=%d%n",
                        mode,
                        run,
                        w.getKey() - start,
                        l,
                        firstArrival.get(w.getKey()) - w.getKey());
            }
        }
        lat.sort(Long::compare);
        long lastEnd =
                lastArrival.isEmpty()
                        ? start
                        : lastArrival.keySet().stream().max(Long::compare).get();
        System.out.printf(
                "RESULT mode=%s run=%d windows=%d avg_answers=%d expected_pairs=%d outside_emax=%d"
                        + " wrong_or_missing_counts=%d max_rel_error=%.4f sample_fraction=%.4f"
                        + " latency_p50_ms=%d latency_max_ms=%d input_rate=%d"
                        + " sustained_records_per_s=%.0f job_wall_s=%.1f%n",
                run < 0 ? mode + "-warmup" : mode,
                run,
                lastArrival.size(),
                avgs,
                expected,
                outside + (expected - avgs),
                wrongCounts,
                maxErr,
                population == 0 ? 0 : (double) sampled / population,
                lat.isEmpty() ? -1 : lat.get(lat.size() / 2),
                lat.isEmpty() ? -1 : lat.get(lat.size() - 1),
                p.rate,
                rows * 1000.0 / Math.max(1, lastArrival.getOrDefault(lastEnd, done) - start),
                (done - submitted) / 1000.0);
    }

    /**
     * Sets a trip's payload to {@code bytes} ASCII characters (1 byte each in Flink's encoding).
     */
    static final class Widen implements MapFunction<TaxiRide, TaxiRide> {
        private static final long serialVersionUID = 1L;
        private final int bytes;
        private transient String payload;

        Widen(int bytes) {
            this.bytes = bytes;
        }

        @Override
        public TaxiRide map(TaxiRide ride) {
            if (bytes > 0) {
                if (payload == null) {
                    payload = "x".repeat(bytes);
                }
                ride.payload = payload;
            }
            return ride;
        }
    }

    /**
     * Trip {@code i} at {@code start + i * 1000 / rate} ms of wall-clock time, which is also its
     * event time; {@code start} is the first window boundary at least 1 s after the source opens.
     * The zone is reduced to {@code groups} groups so that strata are large enough to sample.
     */
    static final class PacedTrips implements GeneratorFunction<Long, TaxiRide> {
        private static final long serialVersionUID = 1L;
        private final long rows;
        private final int rate;
        private final long windowMs;
        private final int groups;
        private transient Iterator<TaxiTrip> trips;
        private transient long next;
        private transient long start;

        PacedTrips(long rows, int rate, long windowMs, int groups) {
            this.rows = rows;
            this.rate = rate;
            this.windowMs = windowMs;
            this.groups = groups;
        }

        static long offsetMillis(long i, int rate) {
            return i * 1000 / rate;
        }

        @Override
        public void open(SourceReaderContext readerContext) {
            trips = TaxiTripGenerator.partition(rows, 1, 0, 42);
            next = 0;
            long now = System.currentTimeMillis() + 1000;
            start = (now / windowMs + 1) * windowMs;
        }

        @Override
        public TaxiRide map(Long index) throws InterruptedException {
            while (next < index) {
                trips.next();
                next++;
            }
            TaxiTrip t = trips.next();
            next++;
            long due = start + offsetMillis(index, rate);
            long wait = due - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            return new TaxiRide(due, t.zone() % groups, t.distance(), t.fare());
        }
    }
}
