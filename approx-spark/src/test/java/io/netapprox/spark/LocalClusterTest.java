package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerExecutorRemoved;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * local-cluster[2,1,1024]: two executor JVMs, real ATP (UDP + control TCP) between them, 10% of
 * every engine's outgoing datagrams dropped, local planning. An approximate query meets every
 * group's bound; an executor killed during an approximate shuffle leads to Spark's normal recovery
 * (map stage rerun) and a correct answer, not a hang.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalClusterTest {
    static SparkSession spark;
    static Dataset<Row> trips;
    static final AtomicInteger executorsRemoved = new AtomicInteger();
    static final AtomicInteger stageRetries = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-local-cluster",
                        SparkTestSupport.conf(
                                "spark.approx.faultDropOutgoing", "0.1",
                                // one run asserts all 24 groups within e_max: plan every map
                                // output's share for e_max on its own
                                // (the default planning meets each group's bound with probability
                                // ~0.95-0.98, so all 24 in one
                                // run only about half the time; see ApproxStatisticalTest and
                                // ApproxLayoutTest)
                                "spark.approx.planning", "local",
                                "spark.task.maxFailures", "4"));
        spark.sparkContext()
                .addSparkListener(
                        new SparkListener() {
                            @Override
                            public void onExecutorRemoved(SparkListenerExecutorRemoved e) {
                                executorsRemoved.incrementAndGet();
                            }

                            @Override
                            public void onStageCompleted(SparkListenerStageCompleted s) {
                                if (s.stageInfo().attemptNumber() > 0) {
                                    stageRetries.incrementAndGet();
                                }
                            }
                        });
        SparkTestSupport.awaitExecutors(spark, 2);
        trips = SparkTestSupport.trips(spark, 100_000, 4, 21).cache();
        trips.count();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    static Map<String, Row> exact() {
        return SparkTestSupport.byKey(
                ApproxQuery.on(trips)
                        .groupBy("hour")
                        .avg("distance")
                        .sum("fare")
                        .count()
                        .exact()
                        .run());
    }

    static void assertWithinBounds(Map<String, Row> exact, Map<String, Row> approx) {
        assertEquals(exact.size(), approx.size());
        for (Map.Entry<String, Row> e : exact.entrySet()) {
            Row a = approx.get(e.getKey());
            double truth = e.getValue().getDouble(4);
            double err = Math.abs(a.getDouble(4) - truth) / Math.abs(truth);
            assertTrue(a.getBoolean(11), "approximate");
            assertTrue(
                    err <= a.getDouble(8),
                    e.getKey() + ": error " + err + " > e_max " + a.getDouble(8));
        }
    }

    @Test
    @Order(1)
    void approximateShuffleBetweenExecutorJvmsMeetsEveryBound() {
        Map<String, Row> exact = exact();
        Dataset<Row> q =
                ApproxQuery.on(trips)
                        .groupBy("hour")
                        .avg("distance")
                        .sum("fare")
                        .count()
                        .errorBound(0.05)
                        .errorBound("hour=17", 0.01)
                        .seed(3)
                        .partitions(4)
                        .run();
        Map<String, Row> approx = SparkTestSupport.byKey(q);
        assertWithinBounds(exact, approx);
        long sampled = 0;
        long population = 0;
        for (Row r : approx.values()) {
            if (r.getString(1).equals("count")) {
                sampled += r.getLong(9);
                population += r.getLong(10);
            }
        }
        System.out.printf(
                "[spark] local-cluster: 24 groups within e_max, sampled %d of %d rows%n",
                sampled, population);
        assertEquals(100_000, population);
        // the map outputs came from both executors and were pulled over ATP
        assertTrue(spark.sparkContext().getExecutorIds().size() >= 2, "two executors");
    }

    @Test
    @Order(2)
    void shuffleMetricsAreInSparkAndAgreeWithTheResult() throws Exception {
        ApproxQuery q =
                ApproxQuery.on(trips)
                        .groupBy("hour")
                        .avg("distance")
                        .count()
                        .errorBound(0.05)
                        .seed(6)
                        .partitions(4);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        ApproxShuffleMetrics m = q.metrics();
        Map<String, Object> v = m.values();
        System.out.printf("[spark] metrics of shuffle %d: %s%n", m.shuffleId(), v);
        long sampleRows = 0;
        long population = 0;
        double minFraction = 1;
        double maxFraction = 0;
        for (Row r : approx.values()) {
            if (r.getString(1).equals("count")) {
                sampleRows += r.getLong(9);
                population += r.getLong(10);
                double f = (double) r.getLong(9) / r.getLong(10);
                minFraction = Math.min(minFraction, f);
                maxFraction = Math.max(maxFraction, f);
            }
        }
        // groups and rows: as in the result
        assertEquals(24L, v.get("groups"));
        assertEquals(0L, v.get("groups below target"));
        assertEquals(population, v.get("rows"));
        assertEquals(sampleRows, v.get("rows sampled"));
        SampleFractionSummary.Summary f = m.sampleFraction();
        assertEquals(24, f.groups());
        assertEquals(minFraction, f.min(), 1e-12);
        assertEquals(maxFraction, f.max(), 1e-12);
        // messages: the reducers took exactly the targets; every executor read its own map output
        // from disk and pulled the other's over ATP
        long planned = (Long) v.get("messages planned");
        long used = (Long) v.get("messages used");
        long delivered = (Long) v.get("messages delivered");
        long local = (Long) v.get("messages read from local disk");
        long sent = (Long) v.get("messages sent");
        assertEquals(planned, used);
        assertEquals(delivered - used, v.get("messages beyond target"));
        assertTrue(local > 0 && delivered - local > 0, "local and remote blocks");
        // the senders' numbers are exact: every serving executor answered with every transfer
        // final (its serving thread's count and its engine report), however slow it was
        // (before: a peer not answering within 4 s was left out, and a count read before the
        // serving thread had set it was 0: sent < delivered in a CI run)
        assertEquals(0L, v.get("transfers without sender counters"), "sender counters exact");
        assertTrue(sent >= delivered - local, "every message delivered over ATP was sent");
        // ATP under 10% injected loss: packets were lost. Retransmissions are counted but not
        // promised: an approximate job may reach every target from first transmissions (CI saw 0 of
        // ~270 packets once, 4-5 usually); exact jobs' repairs are tested in approx-core.
        long packets = (Long) v.get("ATP packets sent");
        long retransmitted = (Long) v.get("ATP packets retransmitted");
        assertTrue(packets > 0);
        assertTrue((Long) v.get("ATP packets lost") > 0, "10% of the datagrams dropped");
        assertTrue(
                retransmitted >= 0 && retransmitted < packets,
                "retransmissions are a part of what was sent: " + retransmitted);
        long blocks = (Long) v.get("block bytes");
        long exactBytes = (Long) v.get("exact bytes");
        long read = (Long) v.get("bytes read");
        assertEquals(exactBytes - read, v.get("bytes saved vs exact"));
        assertTrue(read > 0 && read < blocks, "a sample was read, not every block whole");
        // an exact shuffle moves every record (one double each here: distance), at least what was
        // written (here, planned locally, whole shares)
        assertTrue(exactBytes >= 8L * population, "every record's value: " + exactBytes);
        assertTrue(exactBytes >= blocks, "exact " + exactBytes + " vs written " + blocks);
        // and Spark's status store (what the UI shows) has them on the reduce stage
        spark.sparkContext().listenerBus().waitUntilEmpty();
        boolean shown = false;
        for (org.apache.spark.status.api.v1.StageData st :
                ScalaInterop.javaList(
                        spark.sparkContext()
                                .statusStore()
                                .stageList(
                                        null,
                                        false,
                                        false,
                                        new double[0],
                                        java.util.Collections.emptyList()))) {
            for (org.apache.spark.status.api.v1.AccumulableInfo a :
                    ScalaInterop.javaList(st.accumulatorUpdates())) {
                if (a.name().equals("NetApprox shuffle " + m.shuffleId() + ": groups")) {
                    assertEquals("24", a.value());
                    shown = true;
                }
            }
        }
        assertTrue(shown, "the shuffle's metrics are in Spark's status store (the UI's source)");
    }

    @Test
    @Order(3)
    void killedExecutorDuringApproximateShuffleLeadsToSparkRetry() throws Exception {
        Map<String, Row> exact = exact();
        int removedBefore = executorsRemoved.get();
        int retriesBefore = stageRetries.get();
        ApproxQuery q =
                ApproxQuery.on(trips)
                        .groupBy("hour")
                        .avg("distance")
                        .sum("fare")
                        .count()
                        .errorBound(0.05)
                        .seed(4)
                        .partitions(4);
        ApproxSpec spec = q.spec(0.95);
        JavaRDD<Object> received = q.received();
        // the first attempt of reduce partition 0 kills its executor JVM (with its map outputs)
        // while the other
        // reducers may still be pulling from it
        JavaRDD<Row> rows =
                received.mapPartitions(
                        it -> {
                            TaskContext tc = TaskContext.get();
                            if (tc.partitionId() == 0
                                    && tc.stageAttemptNumber() == 0
                                    && tc.attemptNumber() == 0) {
                                System.err.println(
                                        "killing executor JVM during the approximate shuffle");
                                Runtime.getRuntime().halt(1);
                            }
                            List<Object> all = new ArrayList<>();
                            it.forEachRemaining(all::add);
                            return GroupAggregator.aggregate(spec, all.iterator()).iterator();
                        });
        Map<String, Row> approx =
                SparkTestSupport.byKey(spark.createDataFrame(rows, ApproxQuery.SCHEMA));
        assertWithinBounds(exact, approx);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (executorsRemoved.get() == removedBefore && System.nanoTime() < deadline) {
            Thread.sleep(100); // the listener bus is asynchronous
        }
        System.out.printf(
                "[spark] killed executor: job finished with every group within e_max; executors removed %d,"
                        + " retried stages %d%n",
                executorsRemoved.get() - removedBefore, stageRetries.get());
        assertTrue(executorsRemoved.get() > removedBefore, "an executor was lost");
        assertTrue(
                stageRetries.get() > retriesBefore,
                "Spark retried (map stage rerun after the fetch failure)");
    }
}
