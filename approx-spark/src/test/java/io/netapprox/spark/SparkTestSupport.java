package io.netapprox.spark;

import io.netapprox.examples.taxi.TaxiTripGenerator;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** Spark sessions for the tests: local[2] and local-cluster (separate executor JVMs). */
final class SparkTestSupport {
    private SparkTestSupport() {}

    static SparkSession.Builder base(String master, String app) {
        new File(System.getProperty("spark.test.home", "target/spark-home")).mkdirs();
        return SparkSession.builder()
                .master(master)
                .appName(app)
                .config("spark.ui.enabled", "false")
                .config("spark.shuffle.manager", ApproxShuffleManager.class.getName())
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.default.parallelism", "4")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.approx.peerDeathTimeoutMs", "5000")
                // the tests of the sampling path (estimators, coverage, layouts) sample avg and sum
                // too; exact partials are tested where asked (exactPartials(true), true here)
                .config("spark.approx.exactPartials", "false")
                .config("spark.approx.fetchTimeoutMs", "30000");
    }

    static SparkSession local(String app, Map<String, String> extra) {
        SparkSession.Builder b = base("local[2]", app);
        extra.forEach(b::config);
        return b.getOrCreate();
    }

    /**
     * local-cluster[2,1,1024]: two executors (separate JVMs) on this machine, real ATP between
     * them.
     */
    static SparkSession cluster(String app, Map<String, String> extra) {
        return cluster(app, 1024, "768m", extra);
    }

    /**
     * local-cluster[2,1,workerMb]: two executors of {@code executorMemory} each (separate JVMs).
     */
    static SparkSession cluster(
            String app, int workerMb, String executorMemory, Map<String, String> extra) {
        String cp = System.getProperty("java.class.path");
        SparkSession.Builder b =
                base("local-cluster[2,1," + workerMb + "]", app)
                        .config("spark.executor.memory", executorMemory)
                        .config("spark.executor.extraClassPath", cp)
                        .config("spark.driver.extraClassPath", cp)
                        .config("spark.testing", "true")
                        .config("spark.test.home", System.getProperty("spark.test.home"));
        extra.forEach(b::config);
        return b.getOrCreate();
    }

    /**
     * Waits (at most 2 minutes) until {@code n} executors have registered: a local-cluster's
     * executor JVMs start after the context, and a query run before would use fewer of them.
     */
    static void awaitExecutors(SparkSession spark, int n) throws InterruptedException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(120);
        while (spark.sparkContext().getExecutorIds().size() < n) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "executors did not register: " + spark.sparkContext().getExecutorIds());
            }
            Thread.sleep(200);
        }
    }

    /**
     * {@code rows} synthetic taxi trips {@code (hour, zone, distance, fare)} in {@code partitions}
     * partitions (the examples' generator; the example application has its own copy of this
     * adapter, as an application would).
     */
    static Dataset<Row> trips(SparkSession spark, long rows, int partitions, long seed) {
        List<Integer> parts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            parts.add(p);
        }
        StructType schema =
                new StructType()
                        .add("hour", DataTypes.IntegerType, false)
                        .add("zone", DataTypes.IntegerType, false)
                        .add("distance", DataTypes.DoubleType, false)
                        .add("fare", DataTypes.DoubleType, false);
        return spark.createDataFrame(
                new JavaSparkContext(spark.sparkContext())
                        .parallelize(parts, partitions)
                        .flatMap(
                                p -> {
                                    List<Row> out = new ArrayList<>();
                                    TaxiTripGenerator.partition(rows, partitions, p, seed)
                                            .forEachRemaining(
                                                    t ->
                                                            out.add(
                                                                    RowFactory.create(
                                                                            t.hour(),
                                                                            t.zone(),
                                                                            t.distance(),
                                                                            t.fare())));
                                    return out.iterator();
                                }),
                schema);
    }

    static Map<String, String> conf(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    /** group|aggregate|key -> row */
    static Map<String, Row> byKey(Dataset<Row> result) {
        Map<String, Row> m = new HashMap<>();
        for (Row r : result.collectAsList()) {
            String k =
                    r.getString(0)
                            + "|"
                            + r.getString(1)
                            + (r.isNullAt(3) ? "" : "|" + r.getInt(3));
            m.put(k, r);
        }
        return m;
    }
}
