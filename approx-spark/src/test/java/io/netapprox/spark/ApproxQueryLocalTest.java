package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * local[2]: the query API end to end through ApproxShuffleManager in one JVM. With one executor
 * every map output is read from local disk (the ATP path between executors is LocalClusterTest's);
 * the 30% datagram loss configured below would only matter to ATP.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ApproxQueryLocalTest {
    static SparkSession spark;
    static Dataset<Row> trips;

    @BeforeAll
    static void start() {
        // 30% of the engine's outgoing datagrams dropped: ATP must retransmit exactly what each
        // group's MSR needs
        spark =
                SparkTestSupport.local(
                        "approx-local",
                        SparkTestSupport.conf("spark.approx.faultDropOutgoing", "0.3"));
        trips = SparkTestSupport.trips(spark, 200_000, 4, 7).cache();
        trips.count();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void approximateAnswersCarryIntervalsAndSamplingMetadata() {
        ApproxQuery q =
                ApproxQuery.on(trips)
                        .groupBy("hour")
                        .avg("distance")
                        .sum("fare")
                        .count()
                        .median("fare")
                        .topK("zone", 15)
                        .errorBound(0.05)
                        .errorBound("hour=17", 0.01)
                        .seed(1);
        Map<String, Row> approx = SparkTestSupport.byKey(q.run());
        Map<String, Row> exact =
                SparkTestSupport.byKey(
                        ApproxQuery.on(trips)
                                .groupBy("hour")
                                .avg("distance")
                                .sum("fare")
                                .count()
                                .median("fare")
                                .topK("zone", 15)
                                .errorBound(0.05)
                                .exact()
                                .run());
        assertEquals(24 * 4 + 24 * 15, exact.size());
        long sampled = 0;
        long population = 0;
        for (int h = 0; h < 24; h++) {
            String g = "hour=" + h;
            Row a = approx.get(g + "|avg(distance)");
            Row e = exact.get(g + "|avg(distance)");
            assertTrue(a.getBoolean(11), "approximate shuffle used");
            assertFalse(e.getBoolean(11));
            assertEquals(h == 17 ? 0.01 : 0.05, a.getDouble(8), 1e-12);
            assertEquals(e.getLong(10), a.getLong(10), "population rows = exact count");
            assertTrue(a.getDouble(5) <= a.getDouble(4) && a.getDouble(4) <= a.getDouble(6));
            assertEquals(
                    exact.get(g + "|count").getDouble(4),
                    approx.get(g + "|count").getDouble(4),
                    0.0,
                    "count is exact");
            sampled += a.getLong(9);
            population += a.getLong(10);
            System.out.printf(
                    "[spark] %-8s avg(distance) exact %.4f approx %.4f [%.4f, %.4f] sample %d/%d%n",
                    g,
                    e.getDouble(4),
                    a.getDouble(4),
                    a.getDouble(5),
                    a.getDouble(6),
                    a.getLong(9),
                    a.getLong(10));
        }
        assertEquals(200_000, population);
        assertTrue(sampled <= population);
        System.out.printf(
                "[spark] sampled %d of %d rows (%.1f%%)%n",
                sampled, population, 100.0 * sampled / population);
    }

    @Test
    void everyStratumGetsExactlyItsTarget() {
        // hour x zone: ~20k strata. local[2] has one executor, so every block is read from local
        // disk: the reducer takes each stratum's ceil(MSR*N) messages and stops (over ATP between
        // executors: LocalClusterTest)
        java.util.List<int[]> received =
                ApproxQuery.on(trips)
                        .groupBy("hour", "zone")
                        .avg("fare")
                        .errorBound(0.2)
                        .seed(5)
                        .received()
                        .map(
                                o -> {
                                    StratumSample s = (StratumSample) ((scala.Tuple2<?, ?>) o)._2();
                                    // ceil(MSR * N_g) of the share's population, of which the map
                                    // side wrote a sample: every planned message must be written
                                    long planned =
                                            io.netapprox.core.job.Target.of(s.msr, s.population);
                                    return new int[] {
                                        s.deliveredMessages(),
                                        (int) Math.min(planned, s.messages),
                                        s.messages,
                                        planned <= s.messages ? 0 : 1
                                    };
                                })
                        .collect();
        int strata = 0;
        int partial = 0;
        long delivered = 0;
        long messages = 0;
        for (int[] s : received) {
            assertEquals(s[1], s[0], "delivered = target ceil(MSR*N)");
            assertEquals(0, s[3], "no share is short of plan");
            strata++;
            delivered += s[0];
            messages += s[2];
            if (s[0] < s[2]) {
                partial++;
            }
        }
        System.out.printf(
                "[spark] %d strata (group x map), each exactly at its MSR target; %d partial;"
                        + " %d of %d messages taken%n",
                strata, partial, delivered, messages);
        assertTrue(strata > 24 * 4, "many strata: " + strata);
        assertTrue(partial > 0, "some strata were sampled, not complete");
    }
}
