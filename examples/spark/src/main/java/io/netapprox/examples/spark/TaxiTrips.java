package io.netapprox.examples.spark;

import io.netapprox.examples.taxi.TaxiTrip;
import io.netapprox.examples.taxi.TaxiTripGenerator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * NYC-taxi-shaped trips {@code (hour, zone, distance, fare)} as a Spark {@link Dataset}: the
 * synthetic trips of {@link TaxiTripGenerator}, or the public TLC trip-record files (CSV or
 * Parquet, yellow/green schema).
 */
public final class TaxiTrips {
    public static final StructType SCHEMA =
            new StructType()
                    .add("hour", DataTypes.IntegerType, false)
                    .add("zone", DataTypes.IntegerType, false)
                    .add("distance", DataTypes.DoubleType, false)
                    .add("fare", DataTypes.DoubleType, false);

    private TaxiTrips() {}

    /**
     * {@code rows} synthetic trips in {@code partitions} partitions; the same seed gives the same
     * trips.
     */
    public static Dataset<Row> generate(SparkSession spark, long rows, int partitions, long seed) {
        List<Integer> parts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            parts.add(p);
        }
        JavaRDD<Row> rdd =
                new JavaSparkContext(spark.sparkContext())
                        .parallelize(parts, partitions)
                        .flatMap(
                                p -> {
                                    List<Row> out = new ArrayList<>();
                                    TaxiTripGenerator.partition(rows, partitions, p, seed)
                                            .forEachRemaining(t -> out.add(row(t)));
                                    return out.iterator();
                                });
        return spark.createDataFrame(rdd, SCHEMA);
    }

    static Row row(TaxiTrip t) {
        return RowFactory.create(t.hour(), t.zone(), t.distance(), t.fare());
    }

    /**
     * Reads TLC trip records (yellow: {@code tpep_pickup_datetime}, green: {@code
     * lpep_pickup_datetime}; {@code PULocationID}, {@code trip_distance}, {@code fare_amount}) from
     * CSV (with header) or Parquet and maps them to {@link #SCHEMA}; rows with missing fields,
     * non-positive distance or fare are dropped.
     */
    public static Dataset<Row> readTlc(SparkSession spark, String path) {
        Dataset<Row> raw =
                path.endsWith(".csv") || path.endsWith(".csv.gz")
                        ? spark.read()
                                .option("header", "true")
                                .option("inferSchema", "true")
                                .csv(path)
                        : spark.read().parquet(path);
        String ts =
                Arrays.asList(raw.columns()).contains("tpep_pickup_datetime")
                        ? "tpep_pickup_datetime"
                        : "lpep_pickup_datetime";
        return raw.select(
                        functions
                                .hour(functions.col(ts).cast(DataTypes.TimestampType))
                                .alias("hour"),
                        functions.col("PULocationID").cast(DataTypes.IntegerType).alias("zone"),
                        functions.col("trip_distance").cast(DataTypes.DoubleType).alias("distance"),
                        functions.col("fare_amount").cast(DataTypes.DoubleType).alias("fare"))
                .na()
                .drop()
                .filter("distance > 0 AND fare > 0");
    }
}
