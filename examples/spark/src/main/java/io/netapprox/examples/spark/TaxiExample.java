package io.netapprox.examples.spark;

import io.netapprox.spark.ApproxQuery;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The flagship example: hourly average trip distance and the top-15 pickup zones per hour over
 * NYC-taxi-shaped trips, approximate (ApproxShuffleManager, e_max 5%, hour 17 at 1%) vs exact (sort
 * shuffle), printing both, the error achieved per group and the job completion times.
 *
 * <pre>
 *   TaxiExample [--master local-cluster[2,1,1024]] [--rows 1000000] [--input tlc.parquet|csv] [--emax 0.05]
 *               [--partitions 8] [--runs 3] [--seed 1]
 * </pre>
 *
 * With {@code local-cluster} the application must run with SPARK_TESTING=1 (see scripts/demo.sh).
 * The exact query runs through the same application (the manager sends non-approximate shuffles to
 * sort shuffle).
 */
public final class TaxiExample {
    private TaxiExample() {}

    static Map<String, String> args(String[] a) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("master", "local-cluster[2,1,1024]");
        m.put("rows", "1000000");
        m.put("emax", "0.05");
        m.put("partitions", "8");
        m.put("runs", "3");
        m.put("seed", "1");
        for (int i = 0; i + 1 < a.length; i += 2) {
            if (!a[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --key value, got " + a[i]);
            }
            m.put(a[i].substring(2), a[i + 1]);
        }
        return m;
    }

    static SparkSession session(String app, String master, Map<String, String> extra) {
        SparkSession.Builder b =
                SparkSession.builder()
                        .appName(app)
                        .master(master)
                        .config("spark.ui.enabled", "false")
                        .config("spark.shuffle.manager", "io.netapprox.spark.ApproxShuffleManager");
        if (master.startsWith("local-cluster")) {
            String cp = System.getProperty("java.class.path");
            b.config("spark.executor.extraClassPath", cp)
                    .config("spark.driver.extraClassPath", cp)
                    .config("spark.executor.memory", "768m")
                    .config("spark.driver.host", "127.0.0.1")
                    .config("spark.driver.bindAddress", "127.0.0.1");
        }
        extra.forEach(b::config);
        SparkSession spark = b.getOrCreate();
        spark.sparkContext().setLogLevel("WARN");
        if (master.startsWith("local-cluster")) {
            int want =
                    Integer.parseInt(
                            master.substring(master.indexOf('[') + 1, master.indexOf(',')));
            long deadline = System.currentTimeMillis() + 120_000;
            while (spark.sparkContext().getExecutorIds().size() < want
                    && System.currentTimeMillis() < deadline) {
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        return spark;
    }

    static Dataset<Row> trips(SparkSession spark, Map<String, String> a) {
        Dataset<Row> t = source(spark, a);
        t = t.cache();
        t.count();
        return t;
    }

    /** The input (generated, or read from --input), not cached. */
    static Dataset<Row> source(SparkSession spark, Map<String, String> a) {
        int parts = Integer.parseInt(a.get("partitions"));
        return a.containsKey("input")
                ? TaxiTrips.readTlc(spark, a.get("input")).repartition(parts)
                : TaxiTrips.generate(
                        spark, Long.parseLong(a.get("rows")), parts, Long.parseLong(a.get("seed")));
    }

    static ApproxQuery query(Dataset<Row> trips, double emax, long seed, int partitions) {
        return ApproxQuery.on(trips)
                .groupBy("hour")
                .avg("distance")
                .topK("zone", 15)
                .errorBound(emax)
                .errorBound("hour=17", Math.min(emax, 0.01))
                .confidence(0.95)
                .seed(seed)
                .partitions(partitions);
    }

    static double median(List<Double> v) {
        double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return a.length % 2 == 1 ? a[a.length / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
    }

    public static void main(String[] argv) {
        Map<String, String> a = args(argv);
        SparkSession spark = session("netapprox-taxi", a.get("master"), new HashMap<>());
        try {
            Dataset<Row> trips = trips(spark, a);
            long rows = trips.count();
            double emax = Double.parseDouble(a.get("emax"));
            int runs = Integer.parseInt(a.get("runs"));
            int np = Integer.parseInt(a.get("partitions"));
            List<Double> exactT = new ArrayList<>();
            List<Double> approxT = new ArrayList<>();
            List<Row> exact = null;
            List<Row> approx = null;
            // one untimed warm-up of each (JIT, class loading, executor-side engine start)
            query(trips, emax, 99, np).exact().run().collectAsList();
            query(trips, emax, 99, np).run().collectAsList();
            for (int r = 0; r < runs; r++) {
                long t0 = System.nanoTime();
                exact = query(trips, emax, r, np).exact().run().collectAsList();
                exactT.add((System.nanoTime() - t0) / 1e9);
                t0 = System.nanoTime();
                approx = query(trips, emax, r, np).run().collectAsList();
                approxT.add((System.nanoTime() - t0) / 1e9);
            }
            print(rows, exact, approx, emax);
            System.out.printf(
                    "%nJCT over %d runs after a warm-up (median): exact (sort shuffle) %.2f s, approximate (ATP) %.2f s,"
                            + " ratio %.2f%n  exact runs %s%n  approx runs %s%n",
                    runs,
                    median(exactT),
                    median(approxT),
                    median(approxT) / median(exactT),
                    fmt(exactT),
                    fmt(approxT));
        } finally {
            spark.stop();
        }
    }

    static String fmt(List<Double> v) {
        return Arrays.toString(v.stream().map(d -> String.format("%.2f", d)).toArray());
    }

    static Map<String, Row> index(List<Row> rows) {
        Map<String, Row> m = new HashMap<>();
        for (Row r : rows) {
            m.put(
                    r.getString(0)
                            + "|"
                            + r.getString(1)
                            + (r.isNullAt(3) ? "" : "|" + r.getInt(3)),
                    r);
        }
        return m;
    }

    /** Prints the per-hour comparison; returns the number of groups outside their bound. */
    static int print(long rows, List<Row> exactRows, List<Row> approxRows, double emax) {
        Map<String, Row> exact = index(exactRows);
        Map<String, Row> approx = index(approxRows);
        System.out.printf(
                "%n%d trips. Hourly average distance (miles), approximate (e_max %.0f%%, hour 17 at 1%%,"
                        + " confidence 0.95) vs exact:%n",
                rows, emax * 100);
        System.out.printf(
                "%-5s %9s %9s %21s %9s %7s %6s %17s %s%n",
                "hour",
                "exact",
                "approx",
                "95% interval",
                "error",
                "e_max",
                "ok",
                "sample/population",
                "top-15 zones: overlap");
        int outside = 0;
        long sampled = 0;
        for (int h = 0; h < 24; h++) {
            String g = "hour=" + h;
            Row e = exact.get(g + "|avg(distance)");
            Row x = approx.get(g + "|avg(distance)");
            if (e == null || x == null) {
                continue;
            }
            double err = Math.abs(x.getDouble(4) - e.getDouble(4)) / Math.abs(e.getDouble(4));
            boolean ok = err <= x.getDouble(8);
            if (!ok) {
                outside++;
            }
            sampled += x.getLong(9);
            List<String> te = new ArrayList<>();
            List<String> ta = new ArrayList<>();
            for (int k = 1; k <= 15; k++) {
                Row re = exact.get(g + "|top15(zone)|" + k);
                Row ra = approx.get(g + "|top15(zone)|" + k);
                if (re != null) {
                    te.add(re.getString(2));
                }
                if (ra != null) {
                    ta.add(ra.getString(2));
                }
            }
            long overlap = ta.stream().filter(te::contains).count();
            System.out.printf(
                    "%-5d %9.4f %9.4f [%8.4f, %8.4f] %8.2f%% %6.1f%% %6s %8d/%-8d %d/15 (top-3 exact %s, approx %s)%n",
                    h,
                    e.getDouble(4),
                    x.getDouble(4),
                    x.getDouble(5),
                    x.getDouble(6),
                    100 * err,
                    100 * x.getDouble(8),
                    ok ? "yes" : "NO",
                    x.getLong(9),
                    x.getLong(10),
                    overlap,
                    te.subList(0, Math.min(3, te.size())),
                    ta.subList(0, Math.min(3, ta.size())));
        }
        System.out.printf(
                "groups outside their bound: %d of 24; rows in the sample: %d of %d (%.1f%%)%n",
                outside, sampled, rows, 100.0 * sampled / rows);
        return outside;
    }
}
