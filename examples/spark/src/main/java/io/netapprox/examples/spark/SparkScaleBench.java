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
 *   SparkScaleBench --mode MODE --rows N [--query avg|median|sampled|wide] [--config cpu-bound|network-bound]
 *                   [--runs 3] [--partitions 8] [--reducers 2] [--emax 0.05] [--truth file] [--fraction f]
 *                   [--fractions file] [--payload 200] [--master local-cluster[2,1,512]] [--spark.x y ...]
 *   MODE: exact | atp | tcp_ss | tcp_es | spark_sampleby | spark_sample   (old names: approx, samplesend)
 * </pre>
 *
 * <p>The modes of issue 31's end-to-end comparison (benchmarks/spark/scale.sh --config,
 * docs/spark-netlab.md): {@code atp}, {@code tcp_ss}, {@code tcp_es} run the same approximate query
 * (same plan, map side and estimator) with {@code spark.approx.dataPlane=atp}, or {@code tcp} with
 * {@code tcpSendPolicy=sampleSend} / {@code earlySend}; each writes its per-group sample fractions
 * (sample_rows / population_rows, the largest over the group's aggregates) to {@code --fractions}
 * when given. {@code spark_sampleby}: Spark's stratified sampling, {@code stat().sampleBy("hour",
 * f_g)} at those per-group fractions, then the exact query over sort shuffle (sums and counts
 * scaled by 1/f_g); {@code spark_sample}: {@code Dataset.sample} at the smallest uniform fraction
 * that gives every group its planned share (the largest f_g of {@code --fractions}, or {@code
 * --fraction}), then the same. {@code approx} is the approximate query with the configured data
 * plane (default auto) and {@code samplesend} the old name of {@code spark_sample}; RESULT lines
 * keep the name given. {@code --config cpu-bound} is {@code --query sampled}; {@code --config
 * network-bound} is {@code --query wide}: {@code median(distance), avg(distance), count, topK(zone,
 * 10)} over rows that carry a {@code zone} string of {@code --payload} bytes (skewed over 200
 * zones): the median and top-k are answered from shipped values, and the exact form
 * (ApproxQuery.exact() over sort shuffle) ships every row with its payload (shuffle compression off
 * in this configuration: the generated payload repeats over 200 zones and LZ4 would shrink it as a
 * real payload does not).
 *
 * <p>The rows are generated inside the job ({@code spark.range} and seeded {@code rand}/{@code
 * randn}: 24 hours of equal size, distance lognormal with a per-hour scale, fare uniform), never
 * stored. {@code exact}: Spark SQL's {@code groupBy(hour).agg(...)} over sort shuffle (what a Spark
 * user runs today), writing the answer to {@code --truth}; {@code approx}: the same aggregates as
 * an {@link ApproxQuery} over ApproxShuffleManager, checked against {@code --truth}. Queries
 * ({@code --query}): {@code avg} (default) {@code avg(distance), sum(fare), count} - with exact
 * partials nothing is sampled and the approximate query is Spark's own partial aggregation; {@code
 * median} {@code median(distance), avg(distance), count} - the median is sampled (exact: Spark's
 * {@code median}, which holds every value of a group); {@code sampled} SparkBench's query {@code
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
        if (a.containsKey("config")) {
            String c = a.get("config");
            String q =
                    switch (c) {
                        case "cpu-bound" -> "sampled";
                        case "network-bound" -> "wide";
                        default ->
                                throw new IllegalArgumentException(
                                        "--config must be cpu-bound or network-bound, got " + c);
                    };
            if (a.containsKey("query") && !a.get("query").equals(q)) {
                throw new IllegalArgumentException(
                        "--config " + c + " is --query " + q + ", got --query " + a.get("query"));
            }
            a.put("query", q);
        }
        a.putIfAbsent("query", "avg");
        a.putIfAbsent("payload", "200");
        String mode = a.get("mode");
        String query = a.get("query");
        String canon = canonical(mode);
        boolean approximate = APPROXIMATE.contains(canon);
        boolean sampling = canon.equals("spark_sample") || canon.equals("spark_sampleby");
        boolean viaApproxQuery = query.equals("sampled") || query.equals("wide");
        int payload = Integer.parseInt(a.get("payload"));
        if (payload < 0 || payload > 1 << 16) {
            throw new IllegalArgumentException("--payload must be in [0, 65536], got " + payload);
        }
        double fraction = 1;
        Map<Integer, Double> byHour = new HashMap<>();
        if (sampling) {
            if (!viaApproxQuery) {
                throw new IllegalArgumentException(
                        "--mode " + mode + " needs --query sampled or wide (or --config)");
            }
            if (a.containsKey("fractions")) {
                for (Map.Entry<String, double[]> e :
                        read(Path.of(a.get("fractions")), 1).entrySet()) {
                    byHour.put(hour(e.getKey()), checkFraction(e.getValue()[0]));
                }
                fraction = byHour.values().stream().mapToDouble(x -> x).max().orElse(1);
            } else if (a.containsKey("fraction") && canon.equals("spark_sample")) {
                fraction = checkFraction(Double.parseDouble(a.get("fraction")));
            } else {
                throw new IllegalArgumentException(
                        "--mode "
                                + mode
                                + " needs --fractions file (the approximate mode's per-group"
                                + " fractions)"
                                + (canon.equals("spark_sample") ? " or --fraction f" : ""));
            }
        }
        if (!approximate && !canon.equals("exact") && !sampling) {
            throw new IllegalArgumentException(
                    "--mode must be one of exact, atp, tcp_ss, tcp_es, spark_sampleby,"
                            + " spark_sample (or approx, samplesend), got "
                            + mode);
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
        if (!approximate) {
            conf.put("spark.shuffle.manager", "sort");
        }
        if (query.equals("wide")) {
            // the generated payload repeats (200 zone strings), so LZ4 would shrink sort shuffle's
            // blocks to a tenth: the bytes a real payload ships are the uncompressed ones
            conf.put("spark.shuffle.compress", "false");
        }
        switch (canon) {
            case "atp" -> {
                if (!mode.equals("approx")) {
                    conf.put("spark.approx.dataPlane", "atp");
                }
            }
            case "tcp_ss" -> {
                conf.put("spark.approx.dataPlane", "tcp");
                conf.put("spark.approx.tcpSendPolicy", "sampleSend");
            }
            case "tcp_es" -> {
                conf.put("spark.approx.dataPlane", "tcp");
                conf.put("spark.approx.tcpSendPolicy", "earlySend");
            }
            default -> {}
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
            List<String> columns =
                    new ArrayList<>(
                            List.of(
                                    "cast(id % 24 as int) as hour",
                                    "exp(randn(11) * 0.75) * (1 + (id % 24) / 8.0) as distance",
                                    "rand(12) * 40 + 5 as fare"));
            if (query.equals("wide")) {
                // the payload the query carries: a zone string of --payload bytes, skewed over
                // 200 zones (the top-k column)
                columns.add(
                        "concat('zone-', cast(floor(pow(rand(13), 3) * 200) as int), '-',"
                                + " repeat('p', "
                                + payload
                                + ")) as zone");
            }
            Dataset<Row> trips =
                    spark.range(0, rows, 1, partitions).selectExpr(columns.toArray(new String[0]));
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
                if (viaApproxQuery) {
                    // sampled: SparkBench's q, avg/sum answered from the sample (no exact
                    // partials); wide: median + top-k of a payload column. Either way the exact
                    // form ships every row through the shuffle
                    Dataset<Row> input =
                            canon.equals("spark_sample")
                                    ? trips.sample(false, fraction, 1000 + r)
                                    : canon.equals("spark_sampleby")
                                            ? trips.stat().sampleBy("hour", byHour, 1000L + r)
                                            : trips;
                    ApproxQuery q = ApproxQuery.on(input).groupBy("hour");
                    if (query.equals("wide")) {
                        q.median("distance").avg("distance").count().topK("zone", 10);
                    } else {
                        q.avg("distance").sum("fare").count().exactPartials(false);
                    }
                    last = q.errorBound(emax).seed(r).partitions(reducers);
                    if (!approximate) {
                        last.exact();
                    }
                    result = last.run().collectAsList();
                    if (!approximate) {
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
            Map<String, double[]> answer = answer(viaApproxQuery ? "approx" : mode, labels, result);
            String check = "";
            if (sampling) {
                // the sample's sums and counts estimate the population's: scaled by 1/f (per
                // group under sampleBy)
                for (Map.Entry<String, double[]> e : answer.entrySet()) {
                    double f =
                            canon.equals("spark_sampleby")
                                    ? byHour.get(hour(e.getKey()))
                                    : fraction;
                    for (String l : List.of("sum(fare)", "count")) {
                        if (labels.contains(l)) {
                            e.getValue()[labels.indexOf(l)] /= f;
                        }
                    }
                }
                check = String.format(" sample_fraction=%.6f", fraction);
            }
            if (approximate && a.containsKey("fractions")) {
                writeFractions(Path.of(a.get("fractions")), result);
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
                                        + " groups_short_of_plan=%s approx_read_mb=%.1f",
                                ((Number) m.get("rows sampled")).doubleValue()
                                        / ((Number) m.get("rows")).doubleValue(),
                                m.get("groups below target"),
                                m.get("groups short of plan"),
                                ((Number) m.get("bytes read")).doubleValue() / 1e6);
            }
            System.out.printf(
                    "RESULT mode=%s config=%s query=%s rows=%d generated_gb=%.2f runs=%d median_s=%.2f all_s=%s"
                            + " driver_cpu_s=%.2f executor_cpu_s=%.2f"
                            + " peak_task_exec_mb=%.1f spilled_mb=%.1f shuffle_write_mb=%.1f"
                            + " remote_read_mb=%.1f"
                            + " executor_peak_heap_mb=%s executor_peak_rss_mb=%s%s%s%n",
                    mode,
                    query.equals("wide")
                            ? "network-bound"
                            : query.equals("sampled") ? "cpu-bound" : "-",
                    query,
                    rows,
                    rows * (double) (ROW_BYTES + (query.equals("wide") ? 16 + payload : 0)) / 1e9,
                    runs,
                    TaxiExample.median(t),
                    TaxiExample.fmt(t).replace(" ", ""),
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

    /** The approximate modes (the approximate query over ApproxShuffleManager). */
    static final List<String> APPROXIMATE = List.of("atp", "tcp_ss", "tcp_es");

    /**
     * A mode's name in issue 31's table: {@code approx} is atp, {@code samplesend} spark_sample.
     */
    static String canonical(String mode) {
        return switch (mode) {
            case "approx" -> "atp";
            case "samplesend" -> "spark_sample";
            default -> mode;
        };
    }

    private static double checkFraction(double f) {
        if (!(f > 0 && f <= 1)) {
            throw new IllegalArgumentException("a sampling fraction must be in (0, 1], got " + f);
        }
        return f;
    }

    /** The hour of a group key {@code hour=H}. */
    static int hour(String key) {
        if (!key.startsWith("hour=")) {
            throw new IllegalArgumentException("not an hour group: " + key);
        }
        return Integer.parseInt(key.substring(5));
    }

    /**
     * Per group, the fraction of its rows the approximate answer used: the largest {@code
     * sample_rows / population_rows} over the group's result rows (its aggregates).
     */
    static void writeFractions(Path p, List<Row> rows) throws IOException {
        Map<String, Double> f = new java.util.TreeMap<>();
        for (Row r : rows) {
            long pop = r.getLong(10);
            if (pop > 0) {
                f.merge(r.getString(0), Math.min(1.0, (double) r.getLong(9) / pop), Math::max);
            }
        }
        StringBuilder b = new StringBuilder();
        f.forEach((k, v) -> b.append(k).append(' ').append(v).append('\n'));
        Files.writeString(p, b.toString(), StandardCharsets.UTF_8);
    }

    /** The result labels of {@code --query}'s three aggregates, in the exact query's order. */
    static List<String> labels(String query) {
        return switch (query) {
            case "avg" -> List.of("avg(distance)", "sum(fare)", "count");
            case "median" -> List.of("median(distance)", "avg(distance)", "count");
            case "sampled" -> List.of("avg(distance)", "sum(fare)", "count");
            case "wide" -> List.of("median(distance)", "avg(distance)", "count");
            default ->
                    throw new IllegalArgumentException(
                            "--query must be avg, median, sampled or wide, got " + query);
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
                int i = labels.indexOf(r.getString(1));
                if (i >= 0) { // (top-k rows are not checked)
                    m.computeIfAbsent(r.getString(0), k -> new double[3])[i] = r.getDouble(4);
                }
            }
        }
        return m;
    }

    /** The groups (and aggregates) outside e_max of the exact answer, and the largest error. */
    static String check(Map<String, double[]> truth, Map<String, double[]> approx, double emax) {
        int outside = 0;
        int checked = 0;
        int groupsOutside = 0;
        double worst = 0;
        for (Map.Entry<String, double[]> e : truth.entrySet()) {
            boolean out = false;
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
                    out = true;
                }
            }
            groupsOutside += out ? 1 : 0;
        }
        return String.format(
                " groups=%d groups_outside=%d group_aggregates_outside_emax=%d/%d"
                        + " max_rel_error=%.4f",
                truth.size(), groupsOutside, outside, checked, worst);
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
        return read(p, 3);
    }

    /** Lines {@code key v1 .. vn} of a file ({@code n} values), by key. */
    static Map<String, double[]> read(Path p, int n) throws IOException {
        Map<String, double[]> m = new HashMap<>();
        for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
            String[] f = line.trim().split(" ");
            if (f.length == n + 1) {
                double[] v = new double[n];
                for (int i = 0; i < n; i++) {
                    v[i] = Double.parseDouble(f[i + 1]);
                }
                m.put(f[0], v);
            }
        }
        return m;
    }
}
