package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.Partitioner;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One group split unequally over the parallel senders, 85/5/5/5, the large share's values from
 * another (heavier-tailed) distribution than the small shares' and with other frequent keys: each
 * sender samples its share at its own fraction (the small shares at a larger one), so an answer
 * that pools the shares' samples as one over-represents the small shares. Over 15 seeded jobs of 8
 * one-minute windows on the MiniCluster (2 TaskManagers, 30% of every engine's outgoing datagrams
 * dropped, exactly the planned sample sent) at the default planning, the (window) medians covered
 * by their interval, the averages within e_max and covered, the top-3 keys reported at their true
 * rank and their counts covered each reach the exact binomial floor of 0.95 at a family-wise
 * false-alarm rate of 1e-3 ({@link StatisticalRuns}).
 *
 * <p>Before the shares were weighted per share the median covered the truth in 0 of 120 windows
 * (the pooled sample's median sat well above the group's) and top-3 ranked the small shares' keys
 * first; with {@code approx.planning=balanced} as the default the averages were within e_max in
 * about 80% of the windows (the large share was planned for {@code 2 e_max}).
 */
class UnequalSplitTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int RUNS = 15;
    static final int WINDOWS = 8;
    static final double E_MAX = 0.05;

    /** Records of the group per window: sender 0 holds 85%, senders 1-3 5% each. */
    static final int PER_WINDOW = 8000;

    static final int LARGE = 6800;
    static final int SMALL = 400;

    /** The assertions sharing {@link StatisticalRuns#FALSE_ALARM}. */
    static final int ASSERTIONS = 5;

    /** The data of one run: record i depends only on (seed, i). */
    record Split(long seed) implements java.io.Serializable {
        long n() {
            return (long) WINDOWS * PER_WINDOW;
        }

        SplitRide ride(long i) {
            SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + i);
            int w = (int) (i / PER_WINDOW);
            int j = (int) (i % PER_WINDOW);
            int sender = j < LARGE ? 0 : 1 + (j - LARGE) / SMALL;
            long ts = w * Rides.MINUTE + j * (Rides.MINUTE / PER_WINDOW);
            double value;
            String key;
            if (sender == 0) {
                value = Math.exp(Math.log(10) + 1.0 * gaussian(r));
                double u = r.nextDouble();
                key =
                        u < 0.40
                                ? "k0"
                                : u < 0.65 ? "k1" : u < 0.80 ? "k2" : "k" + (3 + r.nextInt(10));
            } else {
                value = Math.exp(Math.log(4) + 0.5 * gaussian(r));
                double u = r.nextDouble();
                key = u < 0.5 ? "x0" : u < 0.8 ? "x1" : "x2";
            }
            return new SplitRide(ts, 0, sender, value, key);
        }

        DataStream<SplitRide> stream(StreamExecutionEnvironment env) {
            GeneratorFunction<Long, SplitRide> gen = this::ride;
            return env.fromSource(
                            new DataGeneratorSource<>(
                                    gen,
                                    n(),
                                    RateLimiterStrategy.noOp(),
                                    TypeInformation.of(SplitRide.class)),
                            WatermarkStrategy.<SplitRide>forMonotonousTimestamps()
                                    .withTimestampAssigner((ride, t) -> ride.ts),
                            "split rides")
                    .setParallelism(1)
                    // each record to the sender subtask it names
                    .partitionCustom((Partitioner<Integer>) (s, n) -> s, SplitRide::getSender);
        }

        /** Per window: the sorted values, their mean and the key counts. */
        Map<Long, Truth> truth() {
            Map<Long, Truth> t = new HashMap<>();
            for (int w = 0; w < WINDOWS; w++) {
                double[] v = new double[PER_WINDOW];
                Map<String, Long> keys = new HashMap<>();
                double sum = 0;
                for (int j = 0; j < PER_WINDOW; j++) {
                    SplitRide r = ride((long) w * PER_WINDOW + j);
                    v[j] = r.value;
                    sum += r.value;
                    keys.merge(r.key, 1L, Long::sum);
                }
                Arrays.sort(v);
                List<Map.Entry<String, Long>> top = new ArrayList<>(keys.entrySet());
                top.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
                t.put(
                        w * Rides.MINUTE,
                        new Truth(v[PER_WINDOW / 2 - 1], sum / PER_WINDOW, keys, top));
            }
            return t;
        }
    }

    record Truth(
            double median,
            double mean,
            Map<String, Long> keys,
            List<Map.Entry<String, Long>> ranked) {}

    private static double gaussian(SplittableRandom r) {
        double u1 = 1 - r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    @Test
    void unequalSharesAreWeightedPerShareForEveryAggregate() throws Exception {
        int medians = 0;
        int medianCovered = 0;
        int medianWithin = 0;
        int avgs = 0;
        int avgWithin = 0;
        int avgCovered = 0;
        int ranks = 0;
        int rankRight = 0;
        int countCovered = 0;
        long sampled = 0;
        long population = 0;
        for (int run = 1; run <= RUNS; run++) {
            Split data = new Split(9000 + run);
            StreamExecutionEnvironment env =
                    StatisticalRuns.environment(StatisticalRuns.lossyRun(run));
            DataStream<WindowEstimate> out =
                    Approx.of(data.stream(env))
                            .stratifyBy(SplitRide::getGroup)
                            .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                            .errorBound(E_MAX)
                            .confidence(StatisticalRuns.CONFIDENCE)
                            .aggregate(
                                    Aggregate.avg("value", SplitRide::getValue),
                                    Aggregate.count(),
                                    Aggregate.median("value", SplitRide::getValue),
                                    Aggregate.topK("key", 3, SplitRide::getKey));
            FlinkCluster.Run done = FlinkCluster.collect(env, out, "unequal split run " + run);
            StatisticalRuns.assertRunHealthy(FLINK, done.job(), "run " + run, false);
            Map<Long, Truth> truth = data.truth();
            int counts = 0;
            for (WindowEstimate e : done.results()) {
                Truth t = truth.get(e.windowStart);
                assertEquals(PER_WINDOW, e.populationRecords, e.toString());
                switch (e.aggregate) {
                    case "count" -> {
                        assertEquals(PER_WINDOW, e.estimate, e.toString());
                        sampled += e.sampleRecords;
                        population += e.populationRecords;
                        counts++;
                    }
                    case "avg(value)" -> {
                        avgs++;
                        avgWithin += e.relativeError(t.mean()) <= E_MAX ? 1 : 0;
                        avgCovered += e.covers(t.mean()) ? 1 : 0;
                    }
                    case "median(value)" -> {
                        medians++;
                        medianWithin += e.relativeError(t.median()) <= E_MAX ? 1 : 0;
                        medianCovered += e.covers(t.median()) ? 1 : 0;
                    }
                    case "top3(key)" -> {
                        ranks++;
                        rankRight += t.ranked().get(e.rank - 1).getKey().equals(e.key) ? 1 : 0;
                        countCovered += e.covers(t.keys().getOrDefault(e.key, 0L)) ? 1 : 0;
                    }
                    default -> throw new AssertionError("unexpected answer " + e);
                }
            }
            assertEquals(WINDOWS, counts, "one count per window, run " + run);
        }
        String report =
                String.format(
                        "%n  medians: covered %d of %d, within e_max %d%n  averages: within e_max"
                                + " %d, covered %d of %d%n  top-3: right key %d, count covered %d"
                                + " of %d%n  %.1f%% of the records sampled",
                        medianCovered,
                        medians,
                        medianWithin,
                        avgWithin,
                        avgCovered,
                        avgs,
                        rankRight,
                        countCovered,
                        ranks,
                        100.0 * sampled / population);
        System.out.printf("[flink-unequal] %d runs:%s%n", RUNS, report);
        assertEquals(RUNS * WINDOWS, medians, report);
        assertEquals(RUNS * WINDOWS * 3, ranks, report);
        double alpha = StatisticalRuns.FALSE_ALARM / ASSERTIONS;
        int floor = StatisticalRuns.floor(medians, alpha);
        int rankFloor = StatisticalRuns.floor(ranks, alpha);
        assertTrue(medianCovered >= floor, "medians covered < " + floor + report);
        assertTrue(avgWithin >= floor, "averages within e_max < " + floor + report);
        assertTrue(avgCovered >= floor, "averages covered < " + floor + report);
        assertTrue(rankRight >= rankFloor, "top-3 keys at their rank < " + rankFloor + report);
        assertTrue(countCovered >= rankFloor, "top-3 counts covered < " + rankFloor + report);
    }
}
