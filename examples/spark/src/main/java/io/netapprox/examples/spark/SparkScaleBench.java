package io.netapprox.examples.spark;

import io.netapprox.spark.ApproxQuery;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;

/**
 * The production-scale benchmark of benchmarks/spark/scale.sh (not a test): one application per
 * mode, so that each executor JVM's peak RSS belongs to one mode.
 *
 * <pre>
 *   SparkScaleBench --mode exact|approx|samplesend --rows N [--query avg|median|sampled] [--runs 3]
 *                   [--partitions 8] [--reducers 2] [--emax 0.05] [--truth file] [--fraction f]
 *                   [--master local-cluster[2,1,512]] [--spark.x y ...]
 * </pre>
 *
 * The rows are generated inside the job ({@code spark.range} and seeded {@code rand}/{@code randn}:
 * 24 hours of equal size, distance lognormal with a per-hour scale, fare uniform), never stored.
 * {@code exact}: Spark SQL's {@code groupBy(hour).agg(...)} over sort shuffle (what a Spark user
 * runs today), writing the answer to {@code --truth}; {@code approx}: the same aggregates as an
 * {@link ApproxQuery} over ApproxShuffleManager, checked against {@code --truth}. Queries ({@code
 * --query}): {@code avg} (default) {@code avg(distance), sum(fare), count} - with exact partials
 * nothing is sampled and the approximate query is Spark's own partial aggregation; {@code median}
 * {@code median(distance), avg(distance), count} - the median is sampled (exact: Spark's {@code
 * median}, which holds every value of a group); {@code sampled} SparkBench's query {@code
 * avg(distance), sum(fare), count} without exact partials, so avg and sum are answered from the
 * sample (exact: the same {@link ApproxQuery} with {@link ApproxQuery#exact()} over sort shuffle,
 * which ships every row - the network lab's scale mode, benchmarks/spark/netlab/scale.sh). {@code
 * samplesend} ({@code --query sampled} only): TCP-based approximation as SparkBench's SampleSend -
 * {@code Dataset.sample} at {@code --fraction} (the fraction the approximate query delivered) on
 * the map side, then the exact form of the query over sort shuffle, sums and counts scaled by 1/f,
 * checked against {@code --truth}. Prints one {@code RESULT} line: median JCT, the CPU seconds of
 * the driver JVM and of the executor processes during a query (medians; less sensitive to a shared
 * machine's load than the JCT), the largest task's peak execution memory (Spark's task metric),
 * bytes spilled and shuffled, the executors' peak JVM heap (Spark's executor metrics) and peak RSS
 * ({@code VmHWM} of each executor process), and for approx the groups outside e_max.
 */
public final class SparkScaleBench {
    private SparkScaleBench() {}

    /** Bytes of one generated row in Spark's UnsafeRow form: null bits + hour, distance, fare. */
    static final int ROW_BYTES = 8 + 3 * 8;

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = TaxiExample.args(argv);
        a.put(
                "master",
                a.get("master").equals("local-cluster[2,1,1024]")
                        ? "local-cluster[2,1,512]"
                        : a.get("master"));
        a.putIfAbsent("mode", "approx");
        a.putIfAbsent("reducers", "2");
        a.putIfAbsent("query", "avg");
        String mode = a.get("mode");
        String query = a.get("query");
        if (!List.of("exact", "approx", "samplesend").contains(mode)) {
            throw new IllegalArgumentException(
                    "--mode must be exact, approx or samplesend, got " + mode);
        }
        double fraction = 1;
        if (mode.equals("samplesend")) {
            if (!query.equals("sampled") || !a.containsKey("fraction")) {
                throw new IllegalArgumentException(
                        "--mode samplesend needs --query sampled and --fraction f (0 < f <= 1)");
            }
            fraction = Double.parseDouble(a.get("fraction"));
            if (!(fraction > 0 && fraction <= 1)) {
                throw new IllegalArgumentException("--fraction must be in (0, 1], got " + fraction);
            }
        }
        List<String> labels = labels(query);
        long rows = Long.parseLong(a.get("rows"));
        int runs = Integer.parseInt(a.get("runs"));
        int partitions = Integer.parseInt(a.get("partitions"));
        int reducers = Integer.parseInt(a.get("reducers"));
        double emax = Double.parseDouble(a.get("emax"));
        Map<String, String> conf = new HashMap<>();
        conf.put("spark.executor.memory", "512m");
        // spark.testing (set by the local-cluster launcher) would make Spark's 300 MB reserve 0
        conf.put("spark.testing.reservedMemory", Long.toString(300L << 20));
        conf.put("spark.executor.metrics.pollingInterval", "500");
        conf.put("spark.approx.fetchTimeoutMs", "600000");
        if (!mode.equals("approx")) {
            conf.put("spark.shuffle.manager", "sort");
        }
        for (Map.Entry<String, String> e : a.entrySet()) {
            if (e.getKey().startsWith("spark.")) {
                conf.put(e.getKey(), e.getValue());
            }
        }
        SparkSession spark = TaxiExample.session("netapprox-scale-" + mode, a.get("master"), conf);
        AtomicLong peakTask = new AtomicLong();
        AtomicLong spilled = new AtomicLong();
        AtomicLong shuffled = new AtomicLong();
        AtomicLong remoteRead = new AtomicLong();
        spark.sparkContext()
                .addSparkListener(
                        new SparkListener() {
                            @Override
                            public void onTaskEnd(SparkListenerTaskEnd e) {
                                if (e.taskMetrics() != null) {
                                    peakTask.accumulateAndGet(
                                            e.taskMetrics().peakExecutionMemory(), Math::max);
                                    spilled.addAndGet(e.taskMetrics().diskBytesSpilled());
                                    shuffled.addAndGet(
                                            e.taskMetrics().shuffleWriteMetrics().bytesWritten());
                                    remoteRead.addAndGet(
                                            e.taskMetrics().shuffleReadMetrics().remoteBytesRead());
                                }
                            }
                        });
        try {
            Dataset<Row> trips =
                    spark.range(0, rows, 1, partitions)
                            .selectExpr(
                                    "cast(id % 24 as int) as hour",
                                    "exp(randn(11) * 0.75) * (1 + (id % 24) / 8.0) as distance",
                                    "rand(12) * 40 + 5 as fare");
            List<Double> t = new ArrayList<>();
            List<Double> driverCpu = new ArrayList<>();
            List<Double> executorCpu = new ArrayList<>();
            String appId = spark.sparkContext().applicationId();
            List<Row> result = null;
            ApproxQuery last = null;
            for (int r = 0; r < runs; r++) {
                double d0 = ExecutorPeaks.driverCpuSeconds();
                double e0 = ExecutorPeaks.executorCpuSeconds(appId);
                long t0 = System.nanoTime();
                if (query.equals("sampled")) {
                    // SparkBench's q: avg/sum answered from the sample (no exact partials), so
                    // the exact form ships every row through the shuffle
                    last =
                            ApproxQuery.on(
                                            mode.equals("samplesend")
                                                    ? trips.sample(false, fraction, 1000 + r)
                                                    : trips)
                                    .groupBy("hour")
                                    .avg("distance")
                                    .sum("fare")
                                    .count()
                                    .exactPartials(false)
                                    .errorBound(emax)
                                    .seed(r)
                                    .partitions(reducers);
                    if (!mode.equals("approx")) {
                        last.exact();
                    }
                    result = last.run().collectAsList();
                    if (!mode.equals("approx")) {
                        last = null;
                    }
                } else if (mode.equals("exact")) {
                    result =
                            (query.equals("median")
                                            ? trips.groupBy("hour")
                                                    .agg(
                                                            functions.median(
                                                                    functions.col("distance")),
                                                            functions.avg("distance"),
                                                            functions.count("*"))
                                            : trips.groupBy("hour")
                                                    .agg(
                                                            functions.avg("distance"),
                                                            functions.sum("fare"),
                                                            functions.count("*")))
                                    .collectAsList();
                } else {
                    ApproxQuery q = ApproxQuery.on(trips).groupBy("hour");
                    last =
                            (query.equals("median")
                                            ? q.median("distance").avg("distance").count()
                                            : q.avg("distance").sum("fare").count())
                                    .errorBound(emax)
                                    .seed(r)
                                    .partitions(reducers);
                    result = last.run().collectAsList();
                }
                t.add(SparkBench.secs(t0));
                driverCpu.add(ExecutorPeaks.driverCpuSeconds() - d0);
                executorCpu.add(ExecutorPeaks.executorCpuSeconds(appId) - e0);
            }
            spark.sparkContext().listenerBus().waitUntilEmpty();
            Thread.sleep(1500); // one more executor-metrics heartbeat
            Map<String, double[]> answer =
                    answer(query.equals("sampled") ? "approx" : mode, labels, result);
            String check = "";
            if (mode.equals("samplesend")) {
                // the sample's sums and counts estimate the population's: scaled by 1/f
                for (double[] v : answer.values()) {
                    v[labels.indexOf("sum(fare)")] /= fraction;
                    v[labels.indexOf("count")] /= fraction;
                }
                check = String.format(" sample_fraction=%.6f", fraction);
            }
            if (mode.equals("exact") && a.containsKey("truth")) {
                write(Path.of(a.get("truth")), answer);
            } else if (!mode.equals("exact") && a.containsKey("truth")) {
                check += check(read(Path.of(a.get("truth"))), answer, emax);
            }
            String extra = "";
            if (last != null && last.metrics() != null) {
                Map<String, Object> m = last.metrics().values();
                extra =
                        String.format(
                                " sample_fraction=%.6f groups_below_target=%s"
                                        + " groups_short_of_plan=%s",
                                ((Number) m.get("rows sampled")).doubleValue()
                                        / ((Number) m.get("rows")).doubleValue(),
                                m.get("groups below target"),
                                m.get("groups short of plan"));
            }
            System.out.printf(
                    "RESULT mode=%s query=%s rows=%d generated_gb=%.2f runs=%d median_s=%.2f all_s=%s"
                            + " driver_cpu_s=%.2f executor_cpu_s=%.2f"
                            + " peak_task_exec_mb=%.1f spilled_mb=%.1f shuffle_write_mb=%.1f"
                            + " remote_read_mb=%.1f"
                            + " executor_peak_heap_mb=%s executor_peak_rss_mb=%s%s%s%n",
                    mode,
                    query,
                    rows,
                    rows * (double) ROW_BYTES / 1e9,
                    runs,
                    TaxiExample.median(t),
                    TaxiExample.fmt(t),
                    TaxiExample.median(driverCpu),
                    TaxiExample.median(executorCpu),
                    peakTask.get() / 1e6,
                    spilled.get() / 1e6 / runs,
                    shuffled.get() / 1e6 / runs,
                    remoteRead.get() / 1e6 / runs,
                    ExecutorPeaks.heapMb(spark),
                    ExecutorPeaks.rssMb(spark.sparkContext().applicationId()),
                    extra,
                    check);
        } finally {
            spark.stop();
        }
    }

    /** The result labels of {@code --query}'s three aggregates, in the exact query's order. */
    static List<String> labels(String query) {
        return switch (query) {
            case "avg" -> List.of("avg(distance)", "sum(fare)", "count");
            case "median" -> List.of("median(distance)", "avg(distance)", "count");
            case "sampled" -> List.of("avg(distance)", "sum(fare)", "count");
            default ->
                    throw new IllegalArgumentException(
                            "--query must be avg, median or sampled, got " + query);
        };
    }

    /** hour -> the query's three aggregates ({@link #labels}) from either mode's result rows. */
    static Map<String, double[]> answer(String mode, List<String> labels, List<Row> rows) {
        Map<String, double[]> m = new HashMap<>();
        for (Row r : rows) {
            if (mode.equals("exact")) {
                m.put(
                        "hour=" + r.getInt(0),
                        new double[] {r.getDouble(1), r.getDouble(2), r.getLong(3)});
            } else {
                double[] v = m.computeIfAbsent(r.getString(0), k -> new double[3]);
                String agg = r.getString(1);
                v[labels.indexOf(agg)] = r.getDouble(4);
            }
        }
        return m;
    }

    /** The groups (and aggregates) outside e_max of the exact answer, and the largest error. */
    static String check(Map<String, double[]> truth, Map<String, double[]> approx, double emax) {
        int outside = 0;
        int checked = 0;
        double worst = 0;
        for (Map.Entry<String, double[]> e : truth.entrySet()) {
            double[] x = approx.get(e.getKey());
            if (x == null) {
                throw new IllegalStateException(
                        "group " + e.getKey() + " missing from the approximate answer");
            }
            for (int i = 0; i < 3; i++) {
                double err = Math.abs(x[i] - e.getValue()[i]) / Math.abs(e.getValue()[i]);
                worst = Math.max(worst, err);
                checked++;
                if (err > emax) {
                    outside++;
                }
            }
        }
        return String.format(
                " groups=%d group_aggregates_outside_emax=%d/%d max_rel_error=%.4f",
                truth.size(), outside, checked, worst);
    }

    static void write(Path p, Map<String, double[]> m) throws IOException {
        StringBuilder b = new StringBuilder();
        m.forEach(
                (k, v) ->
                        b.append(k)
                                .append(' ')
                                .append(v[0])
                                .append(' ')
                                .append(v[1])
                                .append(' ')
                                .append(v[2])
                                .append('\n'));
        Files.writeString(p, b.toString(), StandardCharsets.UTF_8);
    }

    static Map<String, double[]> read(Path p) throws IOException {
        Map<String, double[]> m = new HashMap<>();
        for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
            String[] f = line.trim().split(" ");
            if (f.length == 4) {
                m.put(
                        f[0],
                        new double[] {
                            Double.parseDouble(f[1]),
                            Double.parseDouble(f[2]),
                            Double.parseDouble(f[3])
                        });
            }
        }
        return m;
    }
}
