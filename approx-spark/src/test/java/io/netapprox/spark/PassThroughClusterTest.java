package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/**
 * A pass-through application (ApproxShuffleManager, nothing approximate) on local-cluster[2,1,...]
 * starts nothing of NetApprox in its executor JVMs: no transport ({@link
 * ApproxShuffleManager#transportsStarted}), no {@code netapprox-*} thread, no libnetapprox mapped
 * into the process, and its executors' shuffle manager is ApproxShuffleManager (so the check is not
 * vacuous). A positive control in the same application: after one approximate query, the same probe
 * sees the transport, its threads and the library on the executors that served or pulled map
 * outputs - i.e. the probe can see what it checks for.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PassThroughClusterTest {

    /** What one executor JVM reports about NetApprox's footprint in it. */
    record Footprint(
            String executor, String manager, int starts, int threads, boolean libraryMapped)
            implements java.io.Serializable {}

    static Footprint probe() {
        int threads = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("netapprox-")) {
                threads++;
            }
        }
        boolean mapped;
        try {
            mapped = Files.readString(Path.of("/proc/self/maps")).contains("libnetapprox");
        } catch (IOException e) {
            throw new IllegalStateException("/proc/self/maps", e);
        }
        return new Footprint(
                SparkEnv.get().executorId(),
                SparkEnv.get().shuffleManager().getClass().getName(),
                ApproxShuffleManager.transportsStarted(),
                threads,
                mapped);
    }

    /** One footprint per executor (probe tasks until both executors answered). */
    static Map<String, Footprint> footprints(SparkSession spark) {
        JavaSparkContext jsc = new JavaSparkContext(spark.sparkContext());
        Map<String, Footprint> seen = new TreeMap<>();
        for (int attempt = 0; attempt < 20 && seen.size() < 2; attempt++) {
            List<Integer> parts = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                parts.add(i);
            }
            for (Footprint f :
                    jsc.parallelize(parts, 16)
                            .mapPartitions(
                                    it -> {
                                        Thread.sleep(20); // spread the tasks over both executors
                                        return List.of(probe()).iterator();
                                    })
                            .collect()) {
                seen.put(f.executor(), f);
            }
        }
        assertEquals(2, seen.size(), "both executors probed: " + seen);
        return seen;
    }

    static long passThroughWorkload(Dataset<Row> trips) {
        long n =
                trips.javaRDD()
                        .mapToPair(r -> new Tuple2<>(r.getInt(1), r.getDouble(3)))
                        .reduceByKey(Double::sum)
                        .count();
        List<Row> j =
                trips.groupBy("zone")
                        .agg(functions.avg("fare").alias("f"))
                        .join(
                                trips.groupBy("zone").agg(functions.max("distance").alias("d")),
                                "zone")
                        .collectAsList();
        return n + j.size();
    }

    @Test
    void passThroughStartsNoTransportOnExecutors() throws Exception {
        int driverStartsBefore = ApproxShuffleManager.transportsStarted();
        SparkSession spark = SparkTestSupport.cluster("pass-through-cluster", Map.of());
        try {
            SparkTestSupport.awaitExecutors(spark, 2);
            Dataset<Row> trips = SparkTestSupport.trips(spark, 20_000, 4, 5).cache();
            assertTrue(passThroughWorkload(trips) > 0);
            Map<String, Footprint> after = footprints(spark);
            System.out.println("[spark] pass-through executors' NetApprox footprint: " + after);
            for (Footprint f : after.values()) {
                assertEquals(ApproxShuffleManager.class.getName(), f.manager(), f.toString());
                assertEquals(0, f.starts(), "no transport in a pass-through executor: " + f);
                assertEquals(0, f.threads(), "no netapprox-* thread: " + f);
                assertTrue(!f.libraryMapped(), "libnetapprox not loaded: " + f);
            }
            assertEquals(
                    driverStartsBefore,
                    ApproxShuffleManager.transportsStarted(),
                    "no transport on the driver");

            // positive control: an approximate query starts the transport where it runs
            List<Row> approx =
                    ApproxQuery.on(trips)
                            .groupBy("hour")
                            .avg("distance")
                            .errorBound(0.05)
                            .seed(7)
                            .partitions(4)
                            .run()
                            .collectAsList();
            assertTrue(!approx.isEmpty());
            Map<String, Footprint> control = footprints(spark);
            System.out.println("[spark] after one approximate query: " + control);
            int started = 0;
            for (Footprint f : control.values()) {
                if (f.starts() > 0) {
                    started++;
                    assertTrue(
                            f.threads() > 0, "a started transport has netapprox-* threads: " + f);
                    assertTrue(f.libraryMapped(), "a started transport loaded libnetapprox: " + f);
                }
            }
            assertTrue(started >= 1, "the probe sees a started transport: " + control);
        } finally {
            spark.stop();
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
    }
}
