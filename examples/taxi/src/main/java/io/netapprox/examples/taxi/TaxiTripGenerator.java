package io.netapprox.examples.taxi;

import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;

/**
 * Realistic synthetic NYC-taxi trips for the examples of every integration (Spark, Flink): no
 * dependency beyond the JDK. Deterministic: the same (rows, partitions, seed) give the same trips,
 * partition by partition, so a framework can generate its partitions in parallel.
 *
 * <p>Hourly volume follows a day profile (night hours 2-5 are rare strata, ~0.5% of trips each; the
 * evening peak ~7%); pickup zones are Zipf-skewed (s = 1.1 over 263 TLC zones) with an
 * hour-dependent rotation, so each hour has its own top zones; distances are lognormal (median ~1.8
 * mi, sigma 0.8) with a 2% Pareto tail (airport-like trips, alpha 2.5), longer at night; fare = 3.0
 * + 2.5/mi * distance + lognormal noise. Distances and fares are rounded to cents.
 */
public final class TaxiTripGenerator {
    /** TLC taxi zones. */
    public static final int ZONES = 263;

    /** Relative trip volume per pickup hour. */
    static final double[] HOUR_WEIGHT = {
        2.2, 1.4, 0.6, 0.5, 0.5, 0.8, 2.0, 3.6, 4.6, 4.6, 4.3, 4.3, 4.6, 4.6, 4.9, 5.1, 5.3, 6.0,
        7.0, 6.8, 6.0, 5.6, 5.2, 4.0
    };

    private static final double[] HOUR_CDF = hourCdf();
    private static final double[] ZIPF_CDF = zipfCdf();

    private TaxiTripGenerator() {}

    private static double[] hourCdf() {
        double tot = 0;
        for (double w : HOUR_WEIGHT) {
            tot += w;
        }
        double[] cum = new double[24];
        double c = 0;
        for (int h = 0; h < 24; h++) {
            c += HOUR_WEIGHT[h] / tot;
            cum[h] = c;
        }
        return cum;
    }

    private static double[] zipfCdf() {
        double[] zipf = new double[ZONES];
        double z = 0;
        for (int i = 0; i < ZONES; i++) {
            z += 1.0 / Math.pow(i + 1, 1.1);
            zipf[i] = z;
        }
        for (int i = 0; i < ZONES; i++) {
            zipf[i] /= z;
        }
        return zipf;
    }

    /**
     * The number of trips of partition {@code p} when {@code rows} trips are split into {@code
     * partitions}.
     */
    public static long partitionSize(long rows, int partitions, int p) {
        return rows * (p + 1) / partitions - rows * p / partitions;
    }

    /**
     * The trips of partition {@code p} (0-based) of {@code partitions}, {@code rows} trips in all.
     *
     * @throws IllegalArgumentException for negative rows or a partition out of range
     */
    public static Iterator<TaxiTrip> partition(long rows, int partitions, int p, long seed) {
        if (rows < 0 || partitions < 1 || p < 0 || p >= partitions) {
            throw new IllegalArgumentException(
                    "rows " + rows + ", partition " + p + " of " + partitions + ": out of range");
        }
        long n = partitionSize(rows, partitions, p);
        SplittableRandom r = new SplittableRandom(seed * 1_000_003L + p);
        return new Iterator<>() {
            long left = n;

            @Override
            public boolean hasNext() {
                return left > 0;
            }

            @Override
            public TaxiTrip next() {
                if (left <= 0) {
                    throw new NoSuchElementException();
                }
                left--;
                return trip(r);
            }
        };
    }

    /**
     * One trip; the draws are always taken in this order, so a seed gives the same trips in every
     * release.
     */
    static TaxiTrip trip(SplittableRandom r) {
        double u = r.nextDouble();
        int hour = 0;
        while (hour < 23 && u > HOUR_CDF[hour]) {
            hour++;
        }
        double v = r.nextDouble();
        int rankIdx = Arrays.binarySearch(ZIPF_CDF, v);
        int rank = rankIdx >= 0 ? rankIdx : Math.min(ZONES - 1, -rankIdx - 1);
        int zone = 1 + (rank * 7 + hour * 11) % ZONES;
        boolean night = hour <= 5;
        double d;
        if (r.nextDouble() < 0.02) {
            d = 8.0 * Math.pow(1 - r.nextDouble(), -1 / 2.5); // Pareto tail
        } else {
            d = Math.exp(Math.log(night ? 2.6 : 1.8) + 0.8 * gaussian(r));
        }
        d = Math.min(d, 200.0);
        double fare = 3.0 + 2.5 * d + Math.exp(0.5 * gaussian(r));
        return new TaxiTrip(
                hour, zone, Math.round(d * 100) / 100.0, Math.round(fare * 100) / 100.0);
    }

    private static double gaussian(SplittableRandom r) {
        double u1 = 1 - r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }
}
