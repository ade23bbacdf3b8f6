package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.AccumulableInfo;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SQL with error bounds on a local-cluster (two executor JVMs, ATP between them, 5% of the engine's
 * datagrams dropped): the statement is parsed and planned on the driver by {@link
 * ApproxExtensions}, its approximate shuffle runs in the executors and pulls across JVMs, and the
 * answer matches Spark SQL's exact one (counts exactly, avg/sum within e_max). Also run on Spark
 * 3.5 by approx-spark-compat-35. {@code submit=target} and {@code REPEATABLE}: the sample is a
 * function of the seeds, so the run is deterministic.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SqlLocalClusterTest {
    static SparkSession spark;
    static final Set<String> executorsWithTasks = ConcurrentHashMap.newKeySet();
    static final AtomicLong atpPackets = new AtomicLong();

    @BeforeAll
    static void start() throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-sql-cluster",
                        SparkTestSupport.conf(
                                "spark.sql.extensions", ApproxExtensions.class.getName(),
                                "spark.approx.submit", "target",
                                "spark.approx.faultDropOutgoing", "0.05"));
        spark.sparkContext()
                .addSparkListener(
                        new SparkListener() {
                            @Override
                            public void onTaskEnd(SparkListenerTaskEnd e) {
                                executorsWithTasks.add(e.taskInfo().executorId());
                            }

                            @Override
                            public void onStageCompleted(SparkListenerStageCompleted e) {
                                for (AccumulableInfo a :
                                        ScalaInterop.javaList(
                                                e.stageInfo().accumulables().values())) {
                                    if (a.name().isDefined()
                                            && a.name().get().startsWith("NetApprox shuffle ")
                                            && a.name().get().endsWith(": ATP packets sent")
                                            && a.value().isDefined()) {
                                        atpPackets.addAndGet(
                                                ((Number) a.value().get()).longValue());
                                    }
                                }
                            }
                        });
        SparkTestSupport.awaitExecutors(spark, 2);
        String expected = System.getProperty("netapprox.expectedSparkVersion");
        if (expected != null) {
            assertEquals(expected, spark.version(), "the Spark version this module runs on");
        }
        SparkTestSupport.trips(spark, 200_000, 4, 13).createOrReplaceTempView("trips");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void sqlWithErrorRunsAcrossExecutorJvmsWithinItsBounds() throws Exception {
        Dataset<Row> sql =
                spark.sql(
                        "SELECT hour, avg(distance), sum(fare), count(*) FROM trips GROUP BY hour"
                                + " WITH ERROR 0.05 CONFIDENCE 0.95 REPEATABLE (5)");
        assertEquals(ApproxQuery.SCHEMA, sql.schema());
        Map<String, Row> approx = SparkTestSupport.byKey(sql);
        spark.sparkContext().listenerBus().waitUntilEmpty();
        Map<Integer, Row> exact = new HashMap<>();
        for (Row r :
                spark.sql(
                                "SELECT hour, avg(distance), sum(fare), count(*) FROM trips GROUP BY hour")
                        .collectAsList()) {
            exact.put(r.getInt(0), r);
        }
        assertEquals(24, exact.size());
        assertEquals(24 * 3, approx.size());
        int checks = 0;
        int within = 0;
        long sampled = 0;
        long rows = 0;
        for (int h = 0; h < 24; h++) {
            Row x = exact.get(h);
            Row count = approx.get("hour=" + h + "|count");
            assertEquals(x.getLong(3), (long) count.getDouble(4), "hour " + h + ": count exact");
            assertEquals(x.getLong(3), count.getLong(10), "hour " + h + ": population rows");
            for (String agg : List.of("avg(distance)", "sum(fare)")) {
                Row a = approx.get("hour=" + h + "|" + agg);
                assertTrue(a.getBoolean(11), "approximate");
                assertEquals(0.05, a.getDouble(8), 0);
                double truth = agg.startsWith("avg") ? x.getDouble(1) : x.getDouble(2);
                checks++;
                within += Math.abs(a.getDouble(4) - truth) <= 0.05 * Math.abs(truth) ? 1 : 0;
            }
            sampled += count.getLong(9);
            rows += count.getLong(10);
        }
        System.out.printf(
                "[spark] SQL on local-cluster (Spark %s): %d/%d within e_max, %.1f%% of rows"
                        + " sampled, %d ATP packets sent between the executors, tasks on executors %s%n",
                spark.version(),
                within,
                checks,
                100.0 * sampled / rows,
                atpPackets.get(),
                executorsWithTasks);
        assertTrue(within >= 0.9 * checks, within + "/" + checks + " within e_max");
        assertTrue(sampled < rows, "a sample, not everything");
        assertTrue(executorsWithTasks.size() >= 2, "tasks ran in both executor JVMs");
        assertTrue(atpPackets.get() > 0, "map output pulled over ATP between the executor JVMs");
    }
}
