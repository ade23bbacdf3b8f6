package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code spark.approx.dataPlane=tcp} on local-cluster[2,1,1024]: the same approximate query as
 * {@link LocalClusterTest}'s first one, its map outputs pulled between the two executor JVMs over
 * the TCP data plane (no ATP engine in either), meets every group's bound, and the shuffle's
 * metrics say every remote block came over TCP.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class TcpLocalClusterTest {
    static SparkSession spark;
    static Dataset<Row> trips;

    @BeforeAll
    static void start() throws Exception {
        spark =
                SparkTestSupport.cluster(
                        "approx-local-cluster-tcp",
                        SparkTestSupport.conf(
                                "spark.approx.dataPlane", "tcp",
                                // every share planned for e_max on its own, so all 24 groups meet
                                // their bound in one run (see LocalClusterTest)
                                "spark.approx.planning", "local"));
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

    @Test
    void approximateShuffleOverTcpMeetsEveryBoundAndSaysItWentOverTcp() {
        Map<String, Row> exact =
                SparkTestSupport.byKey(
                        ApproxQuery.on(trips)
                                .groupBy("hour")
                                .avg("distance")
                                .sum("fare")
                                .count()
                                .exact()
                                .run());
        ApproxQuery q =
                ApproxQuery.on(trips)
                        .groupBy("hour")
                        .avg("distance")
                        .sum("fare")
                        .count()
                        .errorBound(0.05)
                        .errorBound("hour=17", 0.01)
                        .seed(3)
                        .partitions(4);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        LocalClusterTest.assertWithinBounds(exact, approx);
        Map<String, Object> v = q.metrics().values();
        System.out.printf("[spark] local-cluster over TCP: metrics %s%n", v);
        assertEquals(24L, v.get("groups"));
        assertEquals(0L, v.get("groups below target"));
        assertEquals(100_000L, v.get("rows"));
        long local = (Long) v.get("messages read from local disk");
        long delivered = (Long) v.get("messages delivered");
        assertTrue(local > 0 && delivered - local > 0, "local and remote blocks");
        // every remote block came over TCP: neither executor runs an ATP engine
        assertTrue((Long) v.get("blocks pulled over TCP") > 0, "blocks over TCP");
        assertEquals(0L, v.get("blocks pulled over ATP"));
        assertEquals(0L, v.get("transfers without sender counters"), "sender counters exact");
        assertTrue((Long) v.get("messages sent") >= delivered - local, "sent what was delivered");
        // TCP is reliable: nothing was retransmitted or lost by the transport
        assertEquals(0L, v.get("ATP packets retransmitted"));
        assertEquals(0L, v.get("ATP packets lost"));
        // what TCP sent is counted as TCP messages written, not as ATP packets
        assertEquals(0L, v.get("ATP packets sent"));
        assertTrue(
                (Long) v.get("TCP messages written") >= delivered - local,
                "wrote what was delivered over TCP");
    }
}
