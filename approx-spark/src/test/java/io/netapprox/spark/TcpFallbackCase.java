package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.FallbackLab;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Run in a JVM without an ATP path (not by surefire: the name is no test's): by {@link
 * UdpBlockedFallbackTest} inside a namespace that drops UDP (the executors cannot reach each other
 * over UDP), by {@link NativeUnavailableFallbackTest} with the native library blocked in the driver
 * and, through {@code spark.executor.extraJavaOptions}, in both executors. On
 * local-cluster[2,1,1024] the executors pull map output over TCP with {@code
 * spark.approx.dataPlane=auto} (a WARN per executor naming the reason, the shuffle metrics say TCP)
 * and fail the query naming the cause with {@code atp}.
 */
class TcpFallbackCase {
    /** What the case JVM needs from the test JVM's surefire set-up (local-cluster's Spark home). */
    static final Map<String, String> CASE_PROPERTIES =
            Map.of(
                    "spark.test.home",
                    System.getProperty("spark.test.home"),
                    "spark.testing",
                    "true");

    private static FallbackLab.Cause cause;
    private SparkSession spark;

    @BeforeAll
    static void inside() {
        cause = FallbackLab.current();
    }

    @AfterEach
    void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    private Dataset<Row> start(String dataPlane) throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-fallback-" + dataPlane,
                        SparkTestSupport.conf(
                                "spark.approx.dataPlane", dataPlane,
                                "spark.approx.udpProbeTimeoutMs", "500",
                                "spark.approx.planning", "local",
                                // a refused pull fails the query at once (no stage retries)
                                "spark.stage.maxConsecutiveAttempts", "1",
                                "spark.task.maxFailures", "1",
                                "spark.executor.extraJavaOptions", cause.jvmOption()));
        SparkTestSupport.awaitExecutors(spark, 2);
        Dataset<Row> trips = SparkTestSupport.trips(spark, 60_000, 4, 23).cache();
        trips.count();
        return trips;
    }

    private static ApproxQuery query(Dataset<Row> trips) {
        return ApproxQuery.on(trips)
                .groupBy("hour")
                .avg("distance")
                .sum("fare")
                .count()
                .errorBound(0.05)
                .seed(5)
                .partitions(4);
    }

    @Test
    void autoPullsOverTcpMeetsEveryBoundAndWarnsOnce() throws Exception {
        Dataset<Row> trips = start("auto");
        Map<String, Row> exact =
                SparkTestSupport.byKey(
                        ApproxQuery.on(trips)
                                .groupBy("hour")
                                .avg("distance")
                                .sum("fare")
                                .count()
                                .exact()
                                .run());
        ApproxQuery q = query(trips);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        LocalClusterTest.assertWithinBounds(exact, approx);
        Map<String, Object> v = q.metrics().values();
        System.out.printf("[lab] spark auto, %s: metrics %s%n", cause, v);
        assertEquals(0L, v.get("groups below target"));
        assertTrue((Long) v.get("blocks pulled over TCP") > 0, "blocks over TCP");
        assertEquals(0L, v.get("blocks pulled over ATP"));
        String warning =
                cause == FallbackLab.Cause.UDP_BLOCKED
                        ? "it uses the TCP data plane"
                        : "the ATP engine cannot run on this platform";
        List<String> warns = executorLog(l -> l.contains("WARN") && l.contains(warning));
        System.out.printf("[lab] spark auto, executors' WARNs: %s%n", warns);
        assertTrue(!warns.isEmpty() && warns.size() <= 2, "one WARN per executor that asked");
    }

    @Test
    void atpFailsTheQueryNamingTheCause() throws Exception {
        Dataset<Row> trips = start("atp");
        Exception e = assertThrows(Exception.class, () -> query(trips).run().collectAsList());
        StringBuilder chain = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            chain.append(t).append('\n');
        }
        System.out.printf("[lab] spark atp, %s: %s%n", cause, chain);
        assertTrue(chain.toString().contains(cause.atpFailure), chain.toString());
    }

    /**
     * Lines of this application's executor logs (local-cluster: each worker's work dir is a {@code
     * worker-<uuid>} temporary directory holding {@code <app id>/<executor id>/stderr}).
     */
    private List<String> executorLog(Predicate<String> keep) throws IOException {
        String app = spark.sparkContext().applicationId();
        List<Path> logs = new ArrayList<>();
        try (DirectoryStream<Path> workers =
                Files.newDirectoryStream(
                        Path.of(System.getProperty("java.io.tmpdir")), "worker-*")) {
            for (Path w : workers) {
                Path dir = w.resolve(app);
                if (Files.isDirectory(dir)) {
                    try (Stream<Path> files = Files.walk(dir)) {
                        files.filter(f -> f.getFileName().toString().equals("stderr"))
                                .forEach(logs::add);
                    }
                }
            }
        }
        assertEquals(2, logs.size(), "both executors' logs of " + app + ": " + logs);
        List<String> lines = new ArrayList<>();
        for (Path f : logs) {
            Files.readAllLines(f).stream().filter(keep).forEach(lines::add);
        }
        return lines;
    }
}
