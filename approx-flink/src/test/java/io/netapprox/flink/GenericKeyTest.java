package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A group key Flink cannot serialize with its own serializers (a generic type: no public
 * no-argument constructor, final field) goes through Flink's Kryo fallback: in the manifests'
 * stratum tables (sender to receiver over the Flink edge, the key serializer of the job's
 * serializer config) and in the keyed window state. With generic types allowed (Flink's default)
 * the approximate query answers every (window, zone) with exact counts under 30% ATP loss, as the
 * flag-off query does; with {@code pipeline.generic-types: false} the query fails when it is built,
 * naming the type.
 */
class GenericKeyTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    /** A generic type for Flink: no no-argument constructor, a final field. */
    static final class Zone implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        private final String name;

        Zone(String name) {
            this.name = name;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Zone z && z.name.equals(name);
        }

        @Override
        public int hashCode() {
            return Objects.hash(name); // deterministic across JVMs (key groups)
        }

        @Override
        public String toString() {
            return "zone-" + name;
        }
    }

    static final TypeInformation<Zone> ZONE = TypeInformation.of(Zone.class);

    private static DataStream<WindowEstimate> query(StreamExecutionEnvironment env, Rides rides) {
        return Approx.of(rides.stream(env).rebalance())
                .stratifyBy(r -> new Zone("g" + r.getGroup()))
                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                .groupType(ZONE)
                .errorBound(0.05)
                .errorBound(new Zone("g0"), 0.02)
                .aggregate(Aggregate.avg("value", Ride::getValue), Aggregate.count());
    }

    private static StreamExecutionEnvironment env(boolean approx, boolean genericTypes) {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", String.valueOf(approx));
        conf.setString("approx.faultDropOutgoing", "0.3");
        conf.setString("pipeline.auto-watermark-interval", "20 ms");
        conf.setString("pipeline.generic-types", String.valueOf(genericTypes));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        return env;
    }

    @Test
    void aGenericGroupKeyGoesThroughKryoAndEveryWindowIsAnswered() throws Exception {
        assertInstanceOf(GenericTypeInfo.class, ZONE, "the test needs a Kryo-serialized key");
        Rides rides = new Rides(77, 120_000, 3, 5);
        Map<Long, Map<Integer, double[]>> truth = rides.truth();
        Map<Boolean, Map<String, WindowEstimate>> byMode = new HashMap<>();
        for (boolean approx : new boolean[] {false, true}) {
            StreamExecutionEnvironment env = env(approx, true);
            FlinkCluster.Run done =
                    FlinkCluster.collect(env, query(env, rides), "generic key, approx=" + approx);
            List<WindowEstimate> out = done.results();
            Map<String, WindowEstimate> answers = new HashMap<>();
            for (WindowEstimate e : out) {
                assertEquals(approx, e.approximate, e.toString());
                assertTrue(e.group.startsWith("zone-g"), "group from the key's toString: " + e);
                int g = Integer.parseInt(e.group.substring("zone-g".length()));
                double[] t = truth.get(e.windowStart).get(g);
                assertEquals((long) t[0], e.populationRecords, e.toString());
                assertEquals(g == 0 ? 0.02 : 0.05, e.eMax, "per-group bound by a Kryo key: " + e);
                if (e.aggregate.equals("count")) {
                    assertEquals(t[0], e.estimate, e.toString());
                } else {
                    assertTrue(e.sampleRecords > 0, e.toString());
                    assertTrue(e.low <= e.estimate && e.estimate <= e.high, e.toString());
                    if (!approx) {
                        assertEquals(t[1] / t[0], e.estimate, 1e-9 * t[1] / t[0], e.toString());
                    }
                }
                assertEquals(
                        null,
                        answers.put(e.windowStart + "/" + e.group + "/" + e.aggregate, e),
                        "answered twice: " + e);
            }
            byMode.put(approx, answers);
        }
        int pairs = truth.values().stream().mapToInt(Map::size).sum();
        assertEquals(2 * pairs, byMode.get(false).size());
        assertEquals(byMode.get(false).keySet(), byMode.get(true).keySet());
    }

    @Test
    void withGenericTypesDisabledAGenericKeyFailsAtBuildNamingTheType() {
        Rides rides = new Rides(78, 1000, 1, 2);
        for (boolean approx : new boolean[] {false, true}) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> query(env(approx, false), rides),
                            "approx=" + approx);
            assertTrue(e.getMessage().contains(Zone.class.getName()), e.getMessage());
            assertTrue(e.getMessage().contains("pipeline.generic-types"), e.getMessage());
        }
    }

    @Test
    void withGenericTypesDisabledTheApproximateTopologyFailsAtBuildNamingItsState()
            throws Exception {
        Rides rides = new Rides(79, 1000, 1, 2);
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                Approx.of(rides.stream(env(true, false)))
                                        .stratifyBy(Ride::getGroup)
                                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                                        .aggregate(Aggregate.count()));
        assertTrue(e.getMessage().contains(StrataAccumulator.class.getName()), e.getMessage());
        // the same query with the flag off runs: its state uses Flink's own serializers
        StreamExecutionEnvironment off = env(false, false);
        DataStream<WindowEstimate> exact =
                Approx.of(rides.stream(off))
                        .stratifyBy(Ride::getGroup)
                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                        .aggregate(Aggregate.count());
        List<WindowEstimate> out =
                FlinkCluster.collect(off, exact, "flag off, generic types disabled").results();
        assertEquals(2, out.size());
        assertEquals(1000, out.stream().mapToDouble(a -> a.estimate).sum());
    }
}
