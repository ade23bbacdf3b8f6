package io.netapprox.examples.spark;

import io.netapprox.spark.ApproxQuery;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import scala.Tuple2;

/**
 * Benchmarks for benchmarks/spark (not a test): one line of {@code key=value} results per mode.
 *
 * <pre>
 *   SparkBench query       [--master ...] [--rows N] [--emax 0.05] [--runs 5] [--partitions 8]
 *                          [--layout random|clustered]
 *       exact (sort shuffle) vs approximate (ATP) vs SampleSend (Dataset.sample at the fraction ATP delivered,
 *       then the exact query over sort shuffle, sums scaled by 1/f): hourly avg(distance) and sum(fare).
 *       --layout clustered: the input repartitioned by hour (each hour in one map output).
 *   SparkBench passthrough [--master ...] [--rows N] [--runs 5] [--warmup 1] [--manager sort|approx]
 *                          [--sync-dir DIR --sync-first sort|approx] [--slot sort|approx] [--alloc true|false]
 *       a non-approximate job (RDD reduceByKey + SQL aggregate and join) under the given shuffle manager;
 *       besides the wall clock, the load-independent work of the timed runs: the executors' summed task CPU
 *       (executor + deserialize CPU of every task, {@link TaskTotals}), the driver JVM's and the executor
 *       processes' CPU, and the tasks, stages, shuffle records and bytes (equal when both managers did the same
 *       work), per timed run (task_cpu_runs). --sync-dir: two applications (one per manager) run concurrently in
 *       lock step, taking turns run by run ({@link Turns}). benchmarks/spark/passthrough_cpu.py pairs them.
 *       Allocated bytes (--alloc true, the default; {@link AllocPlugin} via spark.plugins): the bytes the task
 *       threads allocated (task_alloc_bytes, per run task_alloc_runs) and the driver JVM's threads during the
 *       runs (driver_alloc_bytes, driver_alloc_runs). --slot: the lock-step name of this application (default:
 *       the manager), so that an A/A pair (two applications of the same manager) can take turns too.
 *   common: [--balance-input true|false] [--balance-retries 3]
 *       the cached input's partitions per executor are read from the driver's block manager master and printed
 *       in every RESULT line (input_layout=4:4, by executor id); while they are spread unevenly (counts differing
 *       by more than one) the input is unpersisted and cached again, at most --balance-retries times, then used
 *       as it is (input_balanced=no). --balance-input false only records the layout (input_balanced=unchecked).
 * </pre>
 */
public final class SparkBench {
    private SparkBench() {}

    public static void main(String[] argv) {
        String mode = argv.length > 0 ? argv[0] : "query";
        String[] rest = java.util.Arrays.copyOfRange(argv, Math.min(1, argv.length), argv.length);
        Map<String, String> a = TaxiExample.args(rest);
        a.putIfAbsent("runs", "5");
        Map<String, String> extra = new HashMap<>();
        for (Map.Entry<String, String> e : a.entrySet()) {
            if (e.getKey().startsWith("spark.")) {
                extra.put(e.getKey(), e.getValue());
            }
        }
        if ("passthrough".equals(mode)) {
            String manager = a.getOrDefault("manager", "approx");
            extra.put(
                    "spark.shuffle.manager",
                    manager.equals("sort") ? "sort" : "io.netapprox.spark.ApproxShuffleManager");
            if (Boolean.parseBoolean(a.getOrDefault("alloc", "true"))) {
                String p = AllocPlugin.class.getName();
                extra.merge("spark.plugins", p, (old, x) -> old + "," + x);
            }
        }
        SparkSession spark = TaxiExample.session("netapprox-bench-" + mode, a.get("master"), extra);
        // before any job: its count of ended tasks is comparable with AllocPlugin's messages
        TaskTotals totals = TaskTotals.register(spark);
        try {
            int retries =
                    Boolean.parseBoolean(a.getOrDefault("balance-input", "true"))
                            ? Integer.parseInt(a.getOrDefault("balance-retries", "3"))
                            : 0;
            Dataset<Row> trips = TaxiExample.source(spark, a);
            InputLayout layout;
            if ("clustered".equals(a.getOrDefault("layout", "random"))) {
                // every hour in one input partition (a table partitioned by the group key): the
                // layout the map side's spread sizing is short on (docs/sampling.md)
                trips.cache();
                trips.count();
                Dataset<Row> c =
                        trips.repartition(
                                Integer.parseInt(a.get("partitions")), functions.col("hour"));
                layout = InputLayout.cacheEvenly(spark, c, retries);
                trips.unpersist();
                trips = c;
            } else {
                layout = InputLayout.cacheEvenly(spark, trips, retries);
            }
            int runs = Integer.parseInt(a.get("runs"));
            if ("passthrough".equals(mode)) {
                String manager = a.getOrDefault("manager", "approx");
                passthrough(
                        spark,
                        totals,
                        trips,
                        runs,
                        Integer.parseInt(a.getOrDefault("warmup", "1")),
                        manager,
                        layout,
                        a.containsKey("sync-dir")
                                ? new Turns(
                                        a.get("sync-dir"),
                                        a.getOrDefault(
                                                "slot", manager.equals("sort") ? "sort" : "approx"),
                                        a.getOrDefault("sync-first", "sort"))
                                : null,
                        a.getOrDefault("slot", manager.equals("sort") ? "sort" : "approx"),
                        Boolean.parseBoolean(a.getOrDefault("alloc", "true")));
            } else {
                query(
                        trips,
                        runs,
                        Double.parseDouble(a.get("emax")),
                        Integer.parseInt(a.get("partitions")),
                        layout);
            }
        } finally {
            spark.stop();
        }
    }

    static double secs(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    /** The 1-minute load average of the machine (/proc/loadavg), or -1. */
    static double load1() {
        try {
            return Double.parseDouble(
                    java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                            .split(" ")[0]);
        } catch (java.io.IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Lock-step with a second application (--sync-dir): the two applications take turns run by run,
     * through the file {@code turn} in the directory ("sort 3" = the sort application's run 3 is
     * next; run.sh writes the first turn). Run r's first manager is {@code first} for even r, the
     * other for odd r, so that each run of one manager has a run of the other right before or after
     * it, under the same load. A partner that does not take its turn in 10 minutes ends the lock
     * step (sync=lost).
     */
    static final class Turns {
        final java.nio.file.Path file;
        final String me;
        final String other;
        final String first;
        boolean lost;

        Turns(String dir, String me, String first) {
            this.file = java.nio.file.Path.of(dir, "turn");
            this.me = me;
            this.other = me.equals("sort") ? "approx" : "sort";
            this.first = first;
        }

        String firstOf(int r) {
            return r % 2 == 0 ? first : (first.equals("sort") ? "approx" : "sort");
        }

        void await(int r) {
            long deadline = System.currentTimeMillis() + 600_000;
            String want = me + " " + r;
            java.nio.file.Path ready = file.resolveSibling("ready." + me);
            java.nio.file.Path otherReady = file.resolveSibling("ready." + other);
            if (r == 0) {
                // a barrier after the warm-ups: the first timed run must not overlap the other's
                // warm-up
                try {
                    java.nio.file.Files.writeString(ready, "");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            while (!lost) {
                try {
                    if (java.nio.file.Files.exists(otherReady)
                            && want.equals(java.nio.file.Files.readString(file).trim())) {
                        return;
                    }
                } catch (java.io.IOException e) {
                    // not written yet
                }
                if (System.currentTimeMillis() > deadline) {
                    lost = true;
                    System.err.println("lock step lost: no turn " + want);
                    return;
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    lost = true;
                }
            }
        }

        /** After my run r: the other's run r if I went first, else the first of run r + 1. */
        void done(int r) {
            String next = firstOf(r).equals(me) ? other + " " + r : firstOf(r + 1) + " " + (r + 1);
            try {
                java.nio.file.Path tmp = file.resolveSibling("turn." + me);
                java.nio.file.Files.writeString(tmp, next);
                java.nio.file.Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    static void passthrough(
            SparkSession spark,
            TaskTotals totals,
            Dataset<Row> trips,
            int runs,
            int warmup,
            String manager,
            InputLayout layout,
            Turns turns,
            String slot,
            boolean alloc) {
        List<Double> t = new ArrayList<>();
        List<Long> taskAlloc = new ArrayList<>();
        List<Long> driverAlloc = new ArrayList<>();
        long driverLost = 0;
        boolean allocComplete = true;
        List<Double> cpuRuns = new ArrayList<>();
        // the executor processes of THIS application: their command line names its driver's address
        // (two
        // local-cluster applications started in the same second have the same application id)
        String appId =
                "CoarseGrainedScheduler@"
                        + spark.sparkContext().getConf().get("spark.driver.host")
                        + ":"
                        + spark.sparkContext().getConf().get("spark.driver.port")
                        + " ";
        double driverCpu0 = 0;
        double execCpu0 = 0;
        double load0 = 0;
        for (int r = -warmup; r < runs; r++) {
            if (r >= 0 && turns != null) {
                turns.await(r);
            }
            if (r == 0) {
                // the timed runs' work only (the warm-up's JIT and class loading excluded)
                TaskTotals.drain(spark);
                totals.reset();
                driverCpu0 = ExecutorPeaks.driverCpuSeconds();
                execCpu0 = ExecutorPeaks.executorCpuSeconds(appId);
                load0 = load1();
            }
            Map<Long, Long> driverBefore = null;
            long taskAlloc0 = 0;
            if (r >= 0 && alloc) {
                // every task message of the runs before has arrived: this run's tasks start here
                allocComplete &= allocSync(spark, totals);
                taskAlloc0 = AllocPlugin.bytes();
                driverBefore = AllocPlugin.threadBytes();
            }
            long t0 = System.nanoTime();
            JavaPairRDD<Integer, Double> z =
                    trips.javaRDD().mapToPair(x -> new Tuple2<>(x.getInt(1), x.getDouble(3)));
            long n = z.reduceByKey(Double::sum).count();
            List<Row> j =
                    trips.groupBy("zone")
                            .agg(functions.avg("fare").alias("f"))
                            .join(
                                    trips.groupBy("zone").agg(functions.max("distance").alias("d")),
                                    "zone")
                            .collectAsList();
            if (r >= 0) {
                t.add(secs(t0));
                TaskTotals.drain(spark);
                cpuRuns.add(totals.cpuMs());
                if (alloc) {
                    allocComplete &= allocSync(spark, totals);
                    long[] d = AllocPlugin.delta(driverBefore, AllocPlugin.threadBytes());
                    driverAlloc.add(d[0]);
                    driverLost += d[1];
                    taskAlloc.add(AllocPlugin.bytes() - taskAlloc0);
                }
                if (turns != null) {
                    turns.done(r);
                }
            }
            if (n == 0 || j.isEmpty()) {
                throw new IllegalStateException("empty result");
            }
        }
        List<Double> perRun = new ArrayList<>();
        for (int i = 0; i < cpuRuns.size(); i++) {
            perRun.add(cpuRuns.get(i) - (i == 0 ? 0 : cpuRuns.get(i - 1)));
        }
        TaskTotals.drain(spark);
        double driverCpu = ExecutorPeaks.driverCpuSeconds() - driverCpu0;
        double execCpu = ExecutorPeaks.executorCpuSeconds(appId) - execCpu0;
        String allocFields =
                alloc
                        ? String.format(
                                " task_alloc_bytes=%d task_alloc_runs=%s driver_alloc_bytes=%d"
                                        + " driver_alloc_runs=%s driver_alloc_lost_threads=%d"
                                        + " alloc_complete=%s alloc_tasks=%d %s",
                                taskAlloc.stream().mapToLong(Long::longValue).sum(),
                                list(taskAlloc),
                                driverAlloc.stream().mapToLong(Long::longValue).sum(),
                                list(driverAlloc),
                                driverLost,
                                allocComplete ? "yes" : "no",
                                AllocPlugin.tasks(),
                                AllocPlugin.checks())
                        : "";
        System.out.printf(
                "RESULT mode=passthrough manager=%s slot=%s runs=%d warmup=%d sync=%s median_s=%.3f"
                        + " all_s=%s %s task_cpu_runs=%s driver_cpu_ms=%.0f exec_proc_cpu_ms=%.0f"
                        + " load_start=%.2f load_end=%.2f %s%s%n",
                manager,
                slot,
                runs,
                warmup,
                turns == null ? "none" : turns.lost ? "lost" : "lockstep",
                TaxiExample.median(t),
                TaxiExample.fmt(t).replace(" ", ""),
                totals.fields(),
                perRun.stream()
                        .map(d -> String.format("%.0f", d))
                        .collect(java.util.stream.Collectors.joining(",", "[", "]")),
                driverCpu * 1000,
                execCpu * 1000,
                load0,
                load1(),
                layout.fields(),
                allocFields);
    }

    static String list(List<Long> xs) {
        return xs.stream()
                .map(String::valueOf)
                .collect(java.util.stream.Collectors.joining(",", "[", "]"));
    }

    /**
     * Waits (at most 30 s) until {@link AllocPlugin}'s driver side has received a message for every
     * task the listener bus has seen end (call after {@link TaskTotals#drain}); false if it has
     * not.
     */
    static boolean allocSync(SparkSession spark, TaskTotals totals) {
        TaskTotals.drain(spark);
        long want = totals.allTasks();
        long deadline = System.currentTimeMillis() + 30_000;
        while (AllocPlugin.tasks() < want) {
            if (System.currentTimeMillis() > deadline) {
                System.err.println(
                        "alloc: " + AllocPlugin.tasks() + " task messages of " + want + " tasks");
                return false;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return AllocPlugin.tasks() == want;
    }

    /**
     * avg/sum sampled over ATP: with exact partials (the default) a query of only avg/sum needs no
     * sample and would be Spark's own aggregation, not the approximate shuffle this measures.
     */
    static ApproxQuery q(Dataset<Row> d, double emax, long seed, int np) {
        return ApproxQuery.on(d)
                .groupBy("hour")
                .avg("distance")
                .sum("fare")
                .exactPartials(false)
                .errorBound(emax)
                .seed(seed)
                .partitions(np);
    }

    static void query(Dataset<Row> trips, int runs, double emax, int np, InputLayout layout) {
        Map<String, Row> exact =
                TaxiExample.index(q(trips, emax, 0, np).exact().run().collectAsList());
        // warm-up + the fraction of rows ATP delivered (SampleSend then ships the same fraction)
        List<Row> warm = q(trips, emax, 0, np).run().collectAsList();
        long s = 0;
        long p = 0;
        for (Row r : warm) {
            if (r.getString(1).startsWith("avg")) {
                s += r.getLong(9);
                p += r.getLong(10);
            }
        }
        double f = Math.max(0.001, (double) s / p);
        Map<String, List<Double>> t = new HashMap<>();
        Map<String, Double> maxErr = new HashMap<>();
        Map<String, Integer> outside = new HashMap<>();
        for (int r = 0; r < runs; r++) {
            for (String mode : List.of("exact", "approx", "samplesend")) {
                long t0 = System.nanoTime();
                List<Row> res;
                double scale = 1;
                if (mode.equals("exact")) {
                    res = q(trips, emax, r, np).exact().run().collectAsList();
                } else if (mode.equals("approx")) {
                    res = q(trips, emax, r, np).run().collectAsList();
                } else {
                    res =
                            q(trips.sample(false, f, 1000 + r), emax, r, np)
                                    .exact()
                                    .run()
                                    .collectAsList();
                    scale = 1 / f;
                }
                t.computeIfAbsent(mode, k -> new ArrayList<>()).add(secs(t0));
                for (Row x : res) {
                    String key = x.getString(0) + "|" + x.getString(1);
                    Row e = exact.get(key);
                    double est = x.getDouble(4) * (x.getString(1).startsWith("sum") ? scale : 1);
                    double err = Math.abs(est - e.getDouble(4)) / Math.abs(e.getDouble(4));
                    maxErr.merge(mode, err, Math::max);
                    if (err > emax) {
                        outside.merge(mode, 1, Integer::sum);
                    }
                }
            }
        }
        double ex = TaxiExample.median(t.get("exact"));
        for (String mode : List.of("exact", "approx", "samplesend")) {
            double m = TaxiExample.median(t.get(mode));
            System.out.printf(
                    "RESULT mode=%s runs=%d median_s=%.3f ratio_vs_exact=%.3f max_rel_error=%.4f"
                            + " group_aggregates_outside_emax=%d/%d sample_fraction=%.3f all_s=%s %s%n",
                    mode,
                    runs,
                    m,
                    m / ex,
                    maxErr.getOrDefault(mode, 0.0),
                    outside.getOrDefault(mode, 0),
                    exact.size() * runs,
                    mode.equals("exact") ? 1.0 : f,
                    TaxiExample.fmt(t.get(mode)).replace(" ", ""),
                    layout.fields());
        }
    }
}
