package io.netapprox.examples.flink;

import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.examples.taxi.TaxiTripGenerator;
import java.util.Iterator;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * A bounded stream of the shared synthetic taxi trips ({@link TaxiTripGenerator}, the same trips as
 * the Spark example for the same rows and seed) arriving at a constant rate: trip {@code i} of
 * {@code rows} is picked up at {@code i * minutes / rows} minutes, so the stream is in event-time
 * order and every minute holds {@code rows / minutes} trips of the generator's zone mix.
 */
public final class TaxiRides {
    private TaxiRides() {}

    /** The trips as a parallelism-1 source with monotonous event-time watermarks. */
    public static DataStream<TaxiRide> stream(
            StreamExecutionEnvironment env, long rows, int minutes, long seed) {
        return env.fromSource(
                        new DataGeneratorSource<>(
                                new Generator(rows, minutes, seed),
                                rows,
                                RateLimiterStrategy.noOp(),
                                TypeInformation.of(TaxiRide.class)),
                        WatermarkStrategy.<TaxiRide>forMonotonousTimestamps()
                                .withTimestampAssigner((ride, t) -> ride.pickupMillis),
                        "taxi trips")
                .setParallelism(1);
    }

    /** Maps index i to trip i of the generator's single partition (skips ahead after a restore). */
    static final class Generator implements GeneratorFunction<Long, TaxiRide> {
        private static final long serialVersionUID = 1L;
        private final long rows;
        private final int minutes;
        private final long seed;
        private transient Iterator<TaxiTrip> trips;
        private transient long next;

        Generator(long rows, int minutes, long seed) {
            this.rows = rows;
            this.minutes = minutes;
            this.seed = seed;
        }

        @Override
        public void open(SourceReaderContext readerContext) {
            trips = TaxiTripGenerator.partition(rows, 1, 0, seed);
            next = 0;
        }

        @Override
        public TaxiRide map(Long index) {
            while (next < index) {
                trips.next();
                next++;
            }
            TaxiTrip t = trips.next();
            next++;
            long pickup = index * minutes * 60_000L / rows;
            return new TaxiRide(pickup, t.zone(), t.distance(), t.fare());
        }
    }
}
