package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The deadline path: when ATP cannot deliver (99.9% of every engine's datagrams dropped), the
 * receivers give each epoch up after {@code approx.epochTimeout}, the watermark moves on, every
 * window still fires with an exact count, and answers that lack data say so with infinite bounds.
 */
class DeadlineTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    @Test
    void watermarksMoveOnWhenEpochsCannotComplete() throws Exception {
        Rides rides = new Rides(5, 20_000, 4, 4);
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        conf.setString("approx.faultDropOutgoing", "0.999");
        // ATP without the UDP probe: at this loss the probe fails too, and auto would (rightly) run
        // the
        // job over TCP, where every epoch completes; this test is about ATP that cannot deliver
        conf.setString("approx.dataPlane", "atp");
        conf.setString("approx.udpProbeTimeout", "0 ms");
        // target: each epoch's planned sample is sent reliably, so over ATP at this loss it never
        // completes and the receivers' deadline is what ends it
        conf.setString("approx.submit", "target");
        conf.setString("approx.epochTimeout", "300 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        DataStream<WindowEstimate> out = FlagOffTest.query(rides.stream(env).rebalance());
        FlinkCluster.Run done = FlinkCluster.collect(env, out, "deadline");
        List<WindowEstimate> result = done.results();
        JobID job = done.job();
        Map<Long, Map<Integer, double[]>> truth = rides.truth();
        int counts = 0;
        int unbounded = 0;
        for (WindowEstimate e : result) {
            double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
            if (e.aggregate.equals("count")) {
                assertEquals(t[0], e.estimate, "counts come from the manifests: " + e);
                counts++;
            } else if (e.low == Double.NEGATIVE_INFINITY && e.high == Double.POSITIVE_INFINITY) {
                unbounded++;
            } else {
                assertTrue(e.low <= e.estimate && e.estimate <= e.high, e.toString());
            }
        }
        assertEquals(
                truth.values().stream().mapToInt(Map::size).sum(), counts, "every window fired");
        long deadlines = FLINK.receiverCounter(job, "approxEpochDeadlines");
        long below = FLINK.receiverCounter(job, "approxGroupsBelowTarget");
        long failed = FLINK.receiverCounter(job, "approxEpochsFailed");
        System.out.printf(
                "[flink-deadline] %d answers, %d without a bound, %d epoch deadlines, %d strata below"
                        + " target, %d epochs failed%n",
                result.size(), unbounded, deadlines, below, failed);
        assertTrue(deadlines > 0, "no epoch hit its deadline");
        assertTrue(below > 0, "no stratum below target");
        assertTrue(unbounded > 0, "no answer reports missing data");
    }
}
