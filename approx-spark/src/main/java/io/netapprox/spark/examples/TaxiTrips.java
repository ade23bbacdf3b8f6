package io.netapprox.spark.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * NYC-taxi-shaped trips {@code (hour, zone, distance, fare)}: a generator of realistic synthetic trips and a reader
 * of the public TLC trip-record files (CSV or Parquet, yellow/green schema).
 *
 * <p>Generator: hourly volume follows a day profile (night hours 2-5 are rare strata, ~0.5% of trips each; the
 * evening peak ~7%); pickup zones are Zipf-skewed (s = 1.1 over 263 TLC zones) with an hour-dependent rotation,
 * so each hour has its own top zones; distances are lognormal (median ~1.8 mi, sigma 0.8) with a 2% Pareto tail
 * (airport-like trips, alpha 2.5), longer at night; fare = 3.0 + 2.5/mi * distance + lognormal noise.
 */
public final class TaxiTrips {
    public static final StructType SCHEMA = new StructType()
            .add("hour", DataTypes.IntegerType, false)
            .add("zone", DataTypes.IntegerType, false)
            .add("distance", DataTypes.DoubleType, false)
            .add("fare", DataTypes.DoubleType, false);

    static final double[] HOUR_WEIGHT = {
        2.2, 1.4, 0.6, 0.5, 0.5, 0.8, 2.0, 3.6, 4.6, 4.6, 4.3, 4.3, 4.6, 4.6, 4.9, 5.1,
        5.3, 6.0, 7.0, 6.8, 6.0, 5.6, 5.2, 4.0};
    static final int ZONES = 263;

    private TaxiTrips() {
    }

    /** {@code rows} synthetic trips in {@code partitions} partitions; the same seed gives the same trips. */
    public static Dataset<Row> generate(SparkSession spark, long rows, int partitions, long seed) {
        List<Integer> parts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            parts.add(p);
        }
        double[] cum = new double[24];
        double tot = 0;
        for (double w : HOUR_WEIGHT) {
            tot += w;
        }
        double c = 0;
        for (int h = 0; h < 24; h++) {
            c += HOUR_WEIGHT[h] / tot;
            cum[h] = c;
        }
        double[] zipf = new double[ZONES];
        double z = 0;
        for (int i = 0; i < ZONES; i++) {
            z += 1.0 / Math.pow(i + 1, 1.1);
            zipf[i] = z;
        }
        for (int i = 0; i < ZONES; i++) {
            zipf[i] /= z;
        }
        JavaRDD<Row> rdd = new org.apache.spark.api.java.JavaSparkContext(spark.sparkContext())
                .parallelize(parts, partitions).flatMap(p -> {
                    long from = rows * p / partitions;
                    long to = rows * (p + 1) / partitions;
                    SplittableRandom r = new SplittableRandom(seed * 1_000_003L + p);
                    List<Row> out = new ArrayList<>((int) (to - from));
                    for (long i = from; i < to; i++) {
                        double u = r.nextDouble();
                        int hour = 0;
                        while (hour < 23 && u > cum[hour]) {
                            hour++;
                        }
                        double v = r.nextDouble();
                        int rankIdx = java.util.Arrays.binarySearch(zipf, v);
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
                        out.add(RowFactory.create(hour, zone, Math.round(d * 100) / 100.0, Math.round(fare * 100) / 100.0));
                    }
                    return out.iterator();
                });
        return spark.createDataFrame(rdd, SCHEMA);
    }

    private static double gaussian(SplittableRandom r) {
        double u1 = 1 - r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }

    /**
     * Reads TLC trip records (yellow: {@code tpep_pickup_datetime}, green: {@code lpep_pickup_datetime};
     * {@code PULocationID}, {@code trip_distance}, {@code fare_amount}) from CSV (with header) or Parquet and maps
     * them to {@link #SCHEMA}; rows with missing fields, non-positive distance or fare are dropped.
     */
    public static Dataset<Row> readTlc(SparkSession spark, String path) {
        Dataset<Row> raw = path.endsWith(".csv") || path.endsWith(".csv.gz")
                ? spark.read().option("header", "true").option("inferSchema", "true").csv(path)
                : spark.read().parquet(path);
        String ts = java.util.Arrays.asList(raw.columns()).contains("tpep_pickup_datetime") ? "tpep_pickup_datetime"
                : "lpep_pickup_datetime";
        return raw.select(
                        functions.hour(functions.col(ts).cast(DataTypes.TimestampType)).alias("hour"),
                        functions.col("PULocationID").cast(DataTypes.IntegerType).alias("zone"),
                        functions.col("trip_distance").cast(DataTypes.DoubleType).alias("distance"),
                        functions.col("fare_amount").cast(DataTypes.DoubleType).alias("fare"))
                .na().drop()
                .filter("distance > 0 AND fare > 0");
    }
}
