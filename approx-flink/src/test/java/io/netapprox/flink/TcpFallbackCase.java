package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.FallbackLab;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Run in a JVM without an ATP path (not by surefire: the name is no test's): by {@link
 * UdpBlockedFallbackTest} inside a namespace that drops UDP, by {@link
 * NativeUnavailableFallbackTest} with the native library blocked. The approximate exchange between
 * the MiniCluster's two TaskManagers with {@code approx.dataPlane=auto} falls back to TCP and
 * answers every window; with {@code atp} the job fails naming the cause.
 */
class TcpFallbackCase {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    private static final Rides RIDES = new Rides(17, 20_000, 3, 6);

    private static FallbackLab.Cause cause;

    @BeforeAll
    static void inside() {
        cause = FallbackLab.current();
    }

    private static StreamExecutionEnvironment env(String dataPlane) {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        conf.setString("approx.dataPlane", dataPlane);
        conf.setString("approx.udpProbeTimeout", "500 ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        return env;
    }

    @Test
    void autoFallsBackToTcpAndAnswersEveryWindow() throws Exception {
        StreamExecutionEnvironment env = env("auto");
        DataStream<WindowEstimate> out = FlagOffTest.query(RIDES.stream(env).rebalance());
        FlinkCluster.Run run = FlinkCluster.collect(env, out, "fallback-auto");
        Map<Long, Map<Integer, double[]>> truth = RIDES.truth();
        int counts = 0;
        for (WindowEstimate e : run.results()) {
            double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
            assertEquals((long) t[0], e.populationRecords, e.toString());
            if (e.aggregate.equals("count")) {
                assertEquals(t[0], e.estimate, e.toString());
                counts++;
            }
        }
        assertEquals(truth.values().stream().mapToInt(Map::size).sum(), counts);
        long overTcp = FLINK.receiverCounter(run.job(), "approxEpochsOverTcp");
        long pulled = FLINK.receiverCounter(run.job(), "approxEpochsPulled");
        long pushed = FLINK.receiverCounter(run.job(), "approxEpochsPushed");
        System.out.printf(
                "[lab] flink auto, %s: epochs pulled %d, pushed %d, over TCP %d%n",
                cause, pulled, pushed, overTcp);
        assertTrue(pulled + pushed > 0, "epochs crossed between the TaskManagers");
        assertEquals(pulled + pushed, overTcp, "every epoch came over TCP");
    }

    @Test
    void atpFailsTheJobNamingTheCause() {
        StreamExecutionEnvironment env = env("atp");
        DataStream<WindowEstimate> out = FlagOffTest.query(RIDES.stream(env).rebalance());
        Exception e =
                assertThrows(Exception.class, () -> FlinkCluster.collect(env, out, "fallback-atp"));
        String chain = ExceptionUtils.stringifyException(e);
        System.out.printf(
                "[lab] flink atp, %s: %s%n",
                cause,
                chain.lines()
                        .filter(l -> l.contains(cause.atpFailure))
                        .findFirst()
                        .orElse(chain.lines().findFirst().orElse("")));
        assertTrue(chain.contains(cause.atpFailure), chain);
        if (cause == FallbackLab.Cause.UDP_BLOCKED) {
            assertTrue(chain.contains("no fallback"), chain);
        }
    }
}
