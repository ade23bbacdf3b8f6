package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flag off ({@code approx.enabled} unset or false): an approximate query is plain Flink's {@code
 * keyBy().window().aggregate()}, and its answers equal a hand-written plain Flink job's exactly.
 */
class FlagOffTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    private static final Rides RIDES = new Rides(7, 40_000, 5, 6);

    @Test
    void flagOffAnswersEqualPlainFlinkExactly() throws Exception {
        List<WindowEstimate> approx = run(false);
        List<WindowEstimate> plain = run(true);
        assertFalse(approx.isEmpty());
        assertEquals(plain.size(), approx.size());
        for (int i = 0; i < plain.size(); i++) {
            assertEquals(plain.get(i), approx.get(i), "answer " + i);
        }
        for (WindowEstimate e : approx) {
            assertFalse(e.approximate);
            assertEquals(e.estimate, e.low);
            assertEquals(e.estimate, e.high);
            assertEquals(e.sampleRecords, e.populationRecords);
        }
        // every (window, group) of the data has its answers, and the counts are the truth
        Map<Long, Map<Integer, double[]>> truth = RIDES.truth();
        int counts = 0;
        for (WindowEstimate e : approx) {
            if (e.aggregate.equals("count")) {
                double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
                assertEquals(t[0], e.estimate);
                counts++;
            }
        }
        assertEquals(truth.values().stream().mapToInt(Map::size).sum(), counts);
    }

    @Test
    void explicitFalseIsTheSameAsUnset() throws Exception {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "false");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        DataStream<WindowEstimate> r = query(RIDES.stream(env));
        assertTrue(r.getTransformation().getName().contains("exact"));
    }

    static DataStream<WindowEstimate> query(DataStream<Ride> rides) {
        return Approx.of(rides)
                .stratifyBy(Ride::getGroup)
                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                .errorBound(0.05)
                .errorBound(0, 0.01)
                .confidence(0.95)
                .aggregate(
                        Aggregate.avg("value", Ride::getValue),
                        Aggregate.sum("value", Ride::getValue),
                        Aggregate.count(),
                        Aggregate.median("value", Ride::getValue),
                        Aggregate.topK("key", 3, Ride::getKey));
    }

    private static List<WindowEstimate> run(boolean plainFlink) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(FlinkCluster.PARALLELISM);
        DataStream<Ride> rides = RIDES.stream(env);
        DataStream<WindowEstimate> out =
                plainFlink
                        ? rides.keyBy(Ride::getGroup)
                                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                                .process(new PlainFlink())
                        : query(rides);
        List<WindowEstimate> result = new ArrayList<>();
        out.executeAndCollect().forEachRemaining(result::add);
        result.sort(
                Comparator.comparingLong((WindowEstimate e) -> e.windowStart)
                        .thenComparing(e -> e.group)
                        .thenComparing(e -> e.aggregate)
                        .thenComparingInt(e -> e.rank));
        return result;
    }

    /** The same query written directly against Flink's window API. */
    static final class PlainFlink
            extends ProcessWindowFunction<Ride, WindowEstimate, Integer, TimeWindow> {
        @Override
        public void process(
                Integer group, Context ctx, Iterable<Ride> rides, Collector<WindowEstimate> out) {
            double sum = 0;
            long n = 0;
            List<Double> values = new ArrayList<>();
            Map<String, Long> keys = new HashMap<>();
            for (Ride r : rides) {
                sum += r.value;
                n++;
                values.add(r.value);
                keys.merge(r.key, 1L, Long::sum);
            }
            double eMax = group == 0 ? 0.01 : 0.05;
            out.collect(row(ctx.window(), group, "avg(value)", sum / n, eMax, n));
            out.collect(row(ctx.window(), group, "sum(value)", sum, eMax, n));
            out.collect(row(ctx.window(), group, "count", n, eMax, n));
            double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
            Arrays.sort(v);
            out.collect(
                    row(
                            ctx.window(),
                            group,
                            "median(value)",
                            v[(int) Math.ceil(0.5 * n) - 1],
                            eMax,
                            n));
            List<Map.Entry<String, Long>> top = new ArrayList<>(keys.entrySet());
            top.sort(
                    (a, b) ->
                            b.getValue().equals(a.getValue())
                                    ? a.getKey().compareTo(b.getKey())
                                    : Long.compare(b.getValue(), a.getValue()));
            for (int i = 0; i < Math.min(3, top.size()); i++) {
                WindowEstimate e =
                        row(ctx.window(), group, "top3(key)", top.get(i).getValue(), eMax, n);
                e.key = top.get(i).getKey();
                e.rank = i + 1;
                out.collect(e);
            }
        }

        private static WindowEstimate row(
                TimeWindow w, int group, String agg, double v, double eMax, long n) {
            WindowEstimate e = new WindowEstimate();
            e.windowStart = w.getStart();
            e.windowEnd = w.getEnd();
            e.group = String.valueOf(group);
            e.aggregate = agg;
            e.estimate = v;
            e.low = v;
            e.high = v;
            e.confidence = 0.95;
            e.eMax = eMax;
            e.sampleRecords = n;
            e.populationRecords = n;
            e.approximate = false;
            return e;
        }
    }
}
