package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Flag on: the approximate exchange over ATP between the MiniCluster's two TaskManagers. */
class ApproxExchangeTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    private static final Rides RIDES = new Rides(11, 60_000, 5, 6);

    @Test
    void everyGroupAndWindowIsAnsweredWithExactCountsAndOrderedIntervals() throws Exception {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        conf.setString("approx.faultDropOutgoing", "0.3");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        DataStream<WindowEstimate> out = FlagOffTest.query(RIDES.stream(env).rebalance());
        List<WindowEstimate> result = new ArrayList<>();
        out.executeAndCollect().forEachRemaining(result::add);
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
        System.out.printf("[flink] sampled %d of %d records%n", sampled, population);
    }
}
