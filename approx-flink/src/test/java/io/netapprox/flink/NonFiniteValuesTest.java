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
import java.util.SplittableRandom;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
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
 * NaN and infinite values and null top-k keys, with the flag off and on, against the same query
 * written directly against Flink's window API (Java double arithmetic over every record, keys
 * counted in a {@code HashMap}): every record counts; a sum or an average with a NaN, or with both
 * infinities, is NaN, with one kind of infinity that infinity; a median whose rank falls among the
 * NaN values (which sort last) is NaN; a null key is a key of its own, not the empty string. Flag
 * off equals plain Flink exactly; flag on equals it on every (window, group) sent whole, and on the
 * large sampled group its count, its NaN average and sum are exact and its top-3 keys (the null key
 * first) are plain Flink's.
 *
 * <p>Before: both modes dropped every record with a non-finite value (counts short, averages
 * finite), the flag-off top-k ignored null keys and the flag-on one counted them as {@code ""}.
 */
class NonFiniteValuesTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int WINDOWS = 2;

    /** Small groups (sent whole with the flag on: at most 2 messages per sender). */
    static final int[] SMALL = {0, 1, 2, 3, 4, 6};

    static final int SMALL_RECORDS = 30;
    static final int LARGE_GROUP = 5;
    static final int LARGE_RECORDS = 10_000;
    static final int PER_WINDOW = SMALL.length * SMALL_RECORDS + LARGE_RECORDS;

    /** Record i (in event-time order). */
    static Ride ride(long i) {
        int w = (int) (i / PER_WINDOW);
        int j = (int) (i % PER_WINDOW);
        long ts = w * Rides.MINUTE + j * (Rides.MINUTE / PER_WINDOW);
        if (j >= SMALL.length * SMALL_RECORDS) {
            SplittableRandom r = new SplittableRandom(31 * i + 7);
            double value = j % 1000 == 0 ? Double.NaN : 5 + 10 * r.nextDouble();
            double u = r.nextDouble();
            String key = u < 0.3 ? null : u < 0.55 ? "a" : u < 0.75 ? "b" : u < 0.9 ? "" : "c";
            return new Ride(ts, LARGE_GROUP, value, key);
        }
        int g = SMALL[j / SMALL_RECORDS];
        int p = j % SMALL_RECORDS;
        double value = 1 + p + 100 * g + w;
        switch (g) {
            case 1 -> value = p == 7 ? Double.NaN : value;
            case 2 -> value = p == 3 ? Double.POSITIVE_INFINITY : value;
            case 3 ->
                    value =
                            p == 4
                                    ? Double.POSITIVE_INFINITY
                                    : p == 9 ? Double.NEGATIVE_INFINITY : value;
            case 4 -> value = p < 16 ? Double.NaN : value; // the median's rank is among the NaN
            case 6 -> value = p == 0 ? Double.NEGATIVE_INFINITY : value;
            default -> {}
        }
        String key = p < 6 ? null : p < 11 ? "a" : p < 15 ? "b" : p < 18 ? "" : "d" + p;
        return new Ride(ts, g, value, key);
    }

    static DataStream<Ride> rides(StreamExecutionEnvironment env) {
        GeneratorFunction<Long, Ride> gen = NonFiniteValuesTest::ride;
        return env.fromSource(
                        new DataGeneratorSource<>(
                                gen,
                                (long) WINDOWS * PER_WINDOW,
                                RateLimiterStrategy.noOp(),
                                TypeInformation.of(Ride.class)),
                        WatermarkStrategy.<Ride>forMonotonousTimestamps()
                                .withTimestampAssigner((r, t) -> r.ts),
                        "rides with NaN, infinities and null keys")
                .setParallelism(1);
    }

    static DataStream<WindowEstimate> query(DataStream<Ride> rides) {
        return Approx.of(rides)
                .stratifyBy(Ride::getGroup)
                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                .errorBound(0.05)
                .confidence(0.95)
                .aggregate(
                        Aggregate.avg("value", Ride::getValue),
                        Aggregate.sum("value", Ride::getValue),
                        Aggregate.count(),
                        Aggregate.median("value", Ride::getValue),
                        Aggregate.topK("key", 3, Ride::getKey));
    }

    private static List<WindowEstimate> run(String mode) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", String.valueOf(mode.equals("on")));
        StreamExecutionEnvironment env = StatisticalRuns.environment(conf);
        DataStream<Ride> rides = rides(env).rebalance();
        DataStream<WindowEstimate> out =
                mode.equals("plain")
                        ? rides.keyBy(Ride::getGroup)
                                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                                .process(new PlainFlink())
                        : query(rides);
        FlinkCluster.Run done = FlinkCluster.collect(env, out, "non-finite " + mode);
        if (mode.equals("on")) {
            long nonFinite = 0;
            for (long i = 0; i < (long) WINDOWS * PER_WINDOW; i++) {
                nonFinite += Double.isFinite(ride(i).value) ? 0 : 1;
            }
            assertEquals(nonFinite, FLINK.senderCounter(done.job(), "approxNonFiniteValues"));
            assertEquals(
                    (long) WINDOWS * PER_WINDOW,
                    FLINK.senderCounter(done.job(), "approxRecordsIn"));
        }
        List<WindowEstimate> result = done.results();
        result.sort(
                Comparator.comparingLong((WindowEstimate e) -> e.windowStart)
                        .thenComparing(e -> e.group)
                        .thenComparing(e -> e.aggregate)
                        .thenComparingInt(e -> e.rank));
        return result;
    }

    @Test
    void bothModesAnswerAsPlainFlinksDoubleArithmetic() throws Exception {
        List<WindowEstimate> plain = run("plain");
        List<WindowEstimate> off = run("off");
        List<WindowEstimate> on = run("on");
        assertEquals(WINDOWS * (SMALL.length + 1) * (4 + 3), plain.size(), plain.toString());
        // what plain Flink says, spelled out for the cases
        Map<String, WindowEstimate> p = new HashMap<>();
        plain.forEach(
                e -> p.put(e.windowStart + "/" + e.group + "/" + e.aggregate + "/" + e.rank, e));
        assertTrue(Double.isNaN(p.get("0/1/avg(value)/0").estimate));
        assertEquals(Double.POSITIVE_INFINITY, p.get("0/2/sum(value)/0").estimate);
        assertTrue(Double.isNaN(p.get("0/3/sum(value)/0").estimate));
        assertTrue(Double.isNaN(p.get("0/4/median(value)/0").estimate));
        assertEquals(Double.NEGATIVE_INFINITY, p.get("0/6/avg(value)/0").estimate);
        assertEquals(SMALL_RECORDS, p.get("0/4/count/0").estimate);
        assertEquals(null, p.get("0/0/top3(key)/1").key);
        assertEquals(6, p.get("0/0/top3(key)/1").estimate);

        // flag off: plain Flink exactly
        assertEquals(plain.size(), off.size());
        for (int i = 0; i < plain.size(); i++) {
            assertEquals(plain.get(i), off.get(i), "flag off, answer " + i);
        }

        // flag on: the same answers (the large group's estimates within their sample)
        assertEquals(plain.size(), on.size(), on.toString());
        for (int i = 0; i < plain.size(); i++) {
            WindowEstimate x = plain.get(i);
            WindowEstimate e = on.get(i);
            String what = "flag on " + e + " vs " + x;
            assertEquals(x.windowStart, e.windowStart, what);
            assertEquals(x.group, e.group, what);
            assertEquals(x.aggregate, e.aggregate, what);
            assertEquals(x.rank, e.rank, what);
            assertEquals(x.populationRecords, e.populationRecords, what);
            assertTrue(e.approximate, what);
            boolean large = e.group.equals(String.valueOf(LARGE_GROUP));
            if (large
                    && !e.aggregate.equals("count")
                    && !e.aggregate.startsWith("avg")
                    && !e.aggregate.startsWith("sum")) {
                assertTrue(e.sampleRecords < e.populationRecords, "sampled: " + what);
                assertEquals(x.key, e.key, what); // top-3: null, "a", "b"
                if (e.aggregate.startsWith("median")) {
                    assertFalse(Double.isNaN(e.estimate), what);
                    assertTrue(e.low <= e.estimate && e.estimate <= e.high, what);
                }
                continue;
            }
            if (!large) {
                assertEquals(e.populationRecords, e.sampleRecords, "sent whole: " + what);
            }
            assertEquals(x.key, e.key, what);
            assertSame(x.estimate, e.estimate, what);
            if (!Double.isFinite(x.estimate)) {
                assertSame(x.estimate, e.low, what);
                assertSame(x.estimate, e.high, what);
            }
        }
    }

    /** Equal, NaN to NaN, infinities exactly, finite values up to a relative 1e-9. */
    private static void assertSame(double expected, double actual, String what) {
        if (Double.isNaN(expected) || Double.isInfinite(expected)) {
            assertEquals(expected, actual, what); // assertEquals(double, double) treats NaN = NaN
        } else {
            assertEquals(expected, actual, 1e-9 * Math.abs(expected), what);
        }
    }

    /** The query written directly against Flink's window API, with plain double arithmetic. */
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
            out.collect(row(ctx.window(), group, "avg(value)", sum / n, n));
            out.collect(row(ctx.window(), group, "sum(value)", sum, n));
            out.collect(row(ctx.window(), group, "count", n, n));
            double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
            Arrays.sort(v);
            out.collect(
                    row(ctx.window(), group, "median(value)", v[(int) Math.ceil(0.5 * n) - 1], n));
            List<Map.Entry<String, Long>> top = new ArrayList<>(keys.entrySet());
            top.sort(
                    Comparator.<Map.Entry<String, Long>>comparingLong(e -> -e.getValue())
                            .thenComparing(
                                    Map.Entry::getKey,
                                    Comparator.nullsFirst(Comparator.naturalOrder())));
            for (int i = 0; i < Math.min(3, top.size()); i++) {
                WindowEstimate e = row(ctx.window(), group, "top3(key)", top.get(i).getValue(), n);
                e.key = top.get(i).getKey();
                e.rank = i + 1;
                out.collect(e);
            }
        }

        private static WindowEstimate row(TimeWindow w, int group, String agg, double v, long n) {
            WindowEstimate e = new WindowEstimate();
            e.windowStart = w.getStart();
            e.windowEnd = w.getEnd();
            e.group = String.valueOf(group);
            e.aggregate = agg;
            e.estimate = v;
            e.low = v;
            e.high = v;
            e.confidence = 0.95;
            e.eMax = 0.05;
            e.sampleRecords = n;
            e.populationRecords = n;
            e.approximate = false;
            return e;
        }
    }
}
