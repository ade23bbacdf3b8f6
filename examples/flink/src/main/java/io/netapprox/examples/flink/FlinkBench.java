package io.netapprox.examples.flink;

import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.WindowEstimate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

/**
 * Local benchmark of the Flink integration (a local cluster of 2 TaskManagers x 2 slots in one JVM;
 * ATP over loopback, no network bottleneck). Two comparisons, each measured in the same process
 * with the runs interleaved after a warm-up, reported as ratios to the baseline of the same run:
 *
 * <ul>
 *   <li>{@code overhead}: the flag-off query ({@code Approx} with {@code approx.enabled=false})
 *       against the same aggregation written directly with Flink's window API;
 *   <li>{@code approx}: the approximate query against the exact one (flag off).
 * </ul>
 *
 * Time is the job's net runtime as Flink reports it ({@code JobExecutionResult.getNetRuntime}).
 *
 * <pre>
 * examples/flink/run-example.sh io.netapprox.examples.flink.FlinkBench overhead|approx
 *     [--rows 2000000] [--minutes 10] [--runs 5] [--emax 0.05] [--loss 0] [--cluster HOST:PORT]
 * </pre>
 *
 * With {@code --cluster} the jobs run on that running cluster (its REST endpoint), whose
 * TaskManagers have these classes on their classpath (benchmarks/flink/netlab).
 */
public final class FlinkBench {
    private FlinkBench() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || !(args[0].equals("overhead") || args[0].equals("approx"))) {
            throw new IllegalArgumentException(
                    "usage: FlinkBench overhead|approx [--rows N] [--minutes M] [--runs R] [--emax E]"
                            + " [--loss L]");
        }
        String what = args[0];
        Map<String, String> opt = new TreeMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            opt.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        long rows = Long.parseLong(opt.getOrDefault("rows", "2000000"));
        int minutes = Integer.parseInt(opt.getOrDefault("minutes", "10"));
        int runs = Integer.parseInt(opt.getOrDefault("runs", "5"));
        double eMax = Double.parseDouble(opt.getOrDefault("emax", "0.05"));
        double loss = Double.parseDouble(opt.getOrDefault("loss", "0"));
        cluster = opt.get("cluster");
        String base = what.equals("overhead") ? "plain-flink" : "exact";
        String cand = what.equals("overhead") ? "approx-flag-off" : "approximate";
        System.out.printf(
                "# FlinkBench %s: %,d taxi trips over %d minutes, per zone and 1-minute window avg(fare)"
                        + " and count, %d runs each after a warm-up, interleaved; %s; e_max %.2f,"
                        + " loss %.2f; machine: %d cores (shared)%n",
                what,
                rows,
                minutes,
                runs,
                opt.containsKey("cluster")
                        ? "cluster " + opt.get("cluster")
                        : "local cluster 2 TM x 2 slots",
                eMax,
                loss,
                Runtime.getRuntime().availableProcessors());
        run(base, rows, minutes, eMax, loss); // warm-up
        run(cand, rows, minutes, eMax, loss);
        List<Double> b = new ArrayList<>();
        List<Double> c = new ArrayList<>();
        for (int r = 0; r < runs; r++) {
            for (String mode : r % 2 == 0 ? List.of(base, cand) : List.of(cand, base)) {
                Outcome o = run(mode, rows, minutes, eMax, loss);
                (mode.equals(base) ? b : c).add(o.seconds);
                System.out.printf(
                        "RESULT mode=%s run=%d seconds=%.3f records_per_s=%.0f answers=%d"
                                + " sampled_fraction=%.4f%n",
                        mode, r, o.seconds, rows / o.seconds, o.answers, o.sampledFraction);
            }
        }
        double mb = median(b);
        double mc = median(c);
        System.out.printf(
                "SUMMARY %s median %.3f s, %s median %.3f s, ratio %s/%s = %.3f%n",
                base, mb, cand, mc, cand, base, mc / mb);
    }

    /** {@code --cluster HOST:PORT}: a running cluster's REST endpoint instead of a local one. */
    private static String cluster;

    private record Outcome(double seconds, int answers, double sampledFraction) {}

    private static Outcome run(String mode, long rows, int minutes, double eMax, double loss)
            throws Exception {
        Configuration conf = new Configuration();
        conf.setString("parallelism.default", "4");
        conf.setString("pipeline.auto-watermark-interval", "50 ms");
        conf.setString("approx.enabled", String.valueOf(mode.equals("approximate")));
        if (loss > 0) {
            conf.setString("approx.faultDropOutgoing", String.valueOf(loss));
        }
        StreamExecutionEnvironment env;
        if (cluster != null) {
            String[] hp = cluster.split(":");
            env =
                    StreamExecutionEnvironment.createRemoteEnvironment(
                            hp[0], Integer.parseInt(hp[1]), conf);
            env.setParallelism(4);
        } else {
            conf.setString("minicluster.number-of-taskmanagers", "2");
            conf.setString("taskmanager.numberOfTaskSlots", "2");
            env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        }
        DataStream<TaxiRide> trips = TaxiRides.stream(env, rows, minutes, 42).rebalance();
        DataStream<WindowEstimate> answers =
                mode.equals("plain-flink")
                        ? trips.keyBy(TaxiRide::getZone)
                                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                                .aggregate(new SumCount(), new Emit(eMax))
                        : Approx.of(trips)
                                .stratifyBy(TaxiRide::getZone)
                                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                                .errorBound(eMax)
                                .aggregate(
                                        Aggregate.avg("fare", TaxiRide::getFare),
                                        Aggregate.count());
        int n = 0;
        long sampled = 0;
        long population = 0;
        JobClient client;
        try (CloseableIterator<WindowEstimate> it = answers.collectAsync()) {
            client = env.executeAsync("bench " + mode);
            while (it.hasNext()) {
                WindowEstimate e = it.next();
                n++;
                if (e.aggregate.equals("count")) {
                    sampled += e.sampleRecords;
                    population += e.populationRecords;
                }
            }
        }
        JobExecutionResult r = client.getJobExecutionResult().get();
        return new Outcome(
                r.getNetRuntime() / 1000.0, n, population == 0 ? 0 : (double) sampled / population);
    }

    private static double median(List<Double> v) {
        List<Double> s = new ArrayList<>(v);
        s.sort(Double::compare);
        int m = s.size() / 2;
        return s.size() % 2 == 1 ? s.get(m) : (s.get(m - 1) + s.get(m)) / 2;
    }

    /** The baseline aggregation, written directly against Flink's API: fare sum and trip count. */
    static final class SumCount implements AggregateFunction<TaxiRide, double[], double[]> {
        @Override
        public double[] createAccumulator() {
            return new double[2];
        }

        @Override
        public double[] add(TaxiRide ride, double[] acc) {
            acc[0] += ride.fare;
            acc[1]++;
            return acc;
        }

        @Override
        public double[] getResult(double[] acc) {
            return acc;
        }

        @Override
        public double[] merge(double[] a, double[] b) {
            a[0] += b[0];
            a[1] += b[1];
            return a;
        }
    }

    /** Emits the same answers as the flag-off query: avg(fare) and count. */
    static final class Emit
            extends ProcessWindowFunction<double[], WindowEstimate, Integer, TimeWindow> {
        private final double eMax;

        Emit(double eMax) {
            this.eMax = eMax;
        }

        @Override
        public void process(
                Integer zone, Context ctx, Iterable<double[]> in, Collector<WindowEstimate> out) {
            for (double[] acc : in) {
                long n = (long) acc[1];
                out.collect(answer(ctx.window(), zone, "avg(fare)", acc[0] / n, n));
                out.collect(answer(ctx.window(), zone, "count", n, n));
            }
        }

        private WindowEstimate answer(TimeWindow w, int zone, String agg, double v, long n) {
            WindowEstimate e = new WindowEstimate();
            e.windowStart = w.getStart();
            e.windowEnd = w.getEnd();
            e.group = String.valueOf(zone);
            e.aggregate = agg;
            e.estimate = v;
            e.low = v;
            e.high = v;
            e.confidence = 0.95;
            e.eMax = eMax;
            e.sampleRecords = n;
            e.populationRecords = n;
            return e;
        }
    }
}
