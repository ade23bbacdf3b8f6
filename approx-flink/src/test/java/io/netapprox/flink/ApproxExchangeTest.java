package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Flag on: the approximate exchange between the MiniCluster's two TaskManagers, on either data
 * plane: ATP (30% of each engine's outgoing datagrams dropped) and TCP ({@code
 * approx.dataPlane=tcp}: no ATP engine; the receivers' {@code approxEpochsOverTcp} says the epochs
 * came over TCP; with a 1 ms {@code approx.epochDeadline} its {@code
 * approxGroupWaitsBeyondDeadline} counts groups that waited longer than that for data).
 */
class ApproxExchangeTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    private static final Rides RIDES = new Rides(11, 60_000, 5, 6);

    @ParameterizedTest(name = "approx.dataPlane={0}")
    @ValueSource(strings = {"atp", "tcp"})
    void everyGroupAndWindowIsAnsweredWithExactCountsAndOrderedIntervals(String dataPlane)
            throws Exception {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        // atp, not auto: a slow UDP probe on a loaded machine must not move this run to TCP
        conf.setString("approx.dataPlane", dataPlane);
        conf.setString("approx.faultDropOutgoing", "0.3"); // ATP only
        if (dataPlane.equals("tcp")) {
            // the TCP plane sends no deadline; here it is only the bound of
            // approxGroupWaitsBeyondDeadline, small enough that some group waits beyond it
            conf.setString("approx.epochDeadline", "1 ms");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        DataStream<WindowEstimate> out = FlagOffTest.query(RIDES.stream(env).rebalance());
        FlinkCluster.Run run = FlinkCluster.collect(env, out, "exchange-" + dataPlane);
        List<WindowEstimate> result = run.results();
        Map<Long, Map<Integer, double[]>> truth = RIDES.truth();
        int counts = 0;
        long sampled = 0;
        long population = 0;
        for (WindowEstimate e : result) {
            assertTrue(e.approximate, e.toString());
            assertTrue(e.low <= e.estimate && e.estimate <= e.high, e.toString());
            double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
            assertEquals((long) t[0], e.populationRecords, e.toString());
            assertEquals(e.group.equals("0") ? 0.01 : 0.05, e.eMax);
            if (e.aggregate.equals("count")) {
                assertEquals(t[0], e.estimate, e.toString());
                counts++;
                sampled += e.sampleRecords;
                population += e.populationRecords;
            }
            if (e.aggregate.equals("avg(value)")) {
                System.out.printf(
                        "[flink] %s avg=%.4f truth=%.4f [%.4f, %.4f] sample %d/%d%n",
                        e.windowStart / 60000 + "/" + e.group,
                        e.estimate,
                        t[1] / t[0],
                        e.low,
                        e.high,
                        e.sampleRecords,
                        e.populationRecords);
            }
        }
        assertEquals(truth.values().stream().mapToInt(Map::size).sum(), counts);
        long overTcp = FLINK.receiverCounter(run.job(), "approxEpochsOverTcp");
        long pulled = FLINK.receiverCounter(run.job(), "approxEpochsPulled");
        long pushed = FLINK.receiverCounter(run.job(), "approxEpochsPushed");
        System.out.printf(
                "[flink] %s: sampled %d of %d records; epochs pulled %d, pushed %d, over TCP %d,"
                        + " messages received over the network %d%n",
                dataPlane,
                sampled,
                population,
                pulled,
                pushed,
                overTcp,
                FLINK.receiverCounter(run.job(), "approxMessagesReceived"));
        long waits = FLINK.receiverCounter(run.job(), "approxGroupWaitsBeyondDeadline");
        System.out.printf(
                "[flink] %s: groups that waited beyond approx.epochDeadline %d%n",
                dataPlane, waits);
        assertTrue(pulled + pushed > 0, "epochs crossed between the TaskManagers");
        if (dataPlane.equals("tcp")) {
            assertTrue(0 < overTcp && overTcp <= pulled + pushed, "epochs over TCP: " + overTcp);
            assertTrue(waits > 0, "with a 1 ms bound some group waited beyond it");
        } else {
            assertEquals(0, overTcp, "no epoch over TCP with approx.dataPlane=atp");
        }
    }
}
