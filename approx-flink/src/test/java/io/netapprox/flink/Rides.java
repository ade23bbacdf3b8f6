package io.netapprox.flink;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Deterministic test data: ride {@code i} of {@code n} depends only on (seed, i). Times are spread
 * evenly over {@code minutes} minutes in index order; groups are skewed (weight {@code 1/(g+1)}),
 * values lognormal (sigma 0.8) with a group-dependent median, keys Zipf-like over 20 names.
 */
final class Rides implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    static final long MINUTE = 60_000L;

    final long seed;
    final long n;
    final int minutes;
    final int groups;
    private final double[] cum;

    Rides(long seed, long n, int minutes, int groups) {
        this.seed = seed;
        this.n = n;
        this.minutes = minutes;
        this.groups = groups;
        this.cum = new double[groups];
        double tot = 0;
        for (int g = 0; g < groups; g++) {
            tot += 1.0 / (g + 1);
            cum[g] = tot;
        }
        for (int g = 0; g < groups; g++) {
            cum[g] /= tot;
        }
    }

    Ride ride(long i) {
        SplittableRandom r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + i);
        long ts = i * (minutes * MINUTE) / n;
        double u = r.nextDouble();
        int g = 0;
        while (g < groups - 1 && u > cum[g]) {
            g++;
        }
        double value = Math.exp(Math.log(5 + g) + 0.8 * gaussian(r));
        int k = (int) Math.floor(20 * Math.pow(r.nextDouble(), 2)); // low keys more frequent
        return new Ride(ts, g, value, "k" + k);
    }

    private static double gaussian(SplittableRandom r) {
        double u1 = 1 - r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    /** The rides as a bounded, parallelism-1 stream with event-time timestamps in index order. */
    DataStream<Ride> stream(StreamExecutionEnvironment env) {
        return stream(env, RateLimiterStrategy.noOp());
    }

    /**
     * The same, at most {@code perCheckpoint} rides between two completed checkpoints: checkpoints
     * happen mid-stream however slow the machine (a rate per second let a loaded machine finish the
     * stream before its first checkpoint).
     */
    DataStream<Ride> streamPerCheckpoint(StreamExecutionEnvironment env, int perCheckpoint) {
        return stream(env, RateLimiterStrategy.perCheckpoint(perCheckpoint));
    }

    /** The same, paced at {@code perSecond} rides per second (a stream that lasts a while). */
    DataStream<Ride> streamPerSecond(StreamExecutionEnvironment env, double perSecond) {
        return stream(env, RateLimiterStrategy.perSecond(perSecond));
    }

    private DataStream<Ride> stream(StreamExecutionEnvironment env, RateLimiterStrategy rate) {
        Rides self = this;
        GeneratorFunction<Long, Ride> gen = self::ride;
        return env.fromSource(
                        new DataGeneratorSource<>(gen, n, rate, TypeInformation.of(Ride.class)),
                        WatermarkStrategy.<Ride>forMonotonousTimestamps()
                                .withTimestampAssigner((ride, t) -> ride.ts),
                        "rides")
                .setParallelism(1);
    }

    /** Exact per (window start, group): count, sum, and the values. */
    Map<Long, Map<Integer, double[]>> truth() {
        Map<Long, Map<Integer, double[]>> t = new HashMap<>();
        for (long i = 0; i < n; i++) {
            Ride r = ride(i);
            long w = r.ts - r.ts % MINUTE;
            double[] s =
                    t.computeIfAbsent(w, x -> new HashMap<>())
                            .computeIfAbsent(r.group, x -> new double[2]);
            s[0]++;
            s[1] += r.value;
        }
        return t;
    }
}
