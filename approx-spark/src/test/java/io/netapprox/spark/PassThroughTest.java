package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import scala.Tuple2;

/**
 * With nothing approximate in the application, ApproxShuffleManager is sort shuffle: the same
 * handles (unwrapped), the same results for RDD and SQL shuffles (reduceByKey, groupByKey, sortBy,
 * join, SQL aggregate + join + window, repartition) as a session with Spark's own sort shuffle
 * manager. Bad configuration fails at startup.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PassThroughTest {

    static List<String> workload(SparkSession spark) {
        List<String> out = new ArrayList<>();
        Dataset<Row> trips = SparkTestSupport.trips(spark, 50_000, 4, 3);
        JavaRDD<Row> rows = trips.javaRDD();
        JavaPairRDD<Integer, Double> byZone =
                rows.mapToPair(r -> new Tuple2<>(r.getInt(1), r.getDouble(3)));
        out.add("reduceByKey " + new TreeMap<>(byZone.reduceByKey(Double::sum).collectAsMap()));
        out.add(
                "groupByKey "
                        + new TreeMap<>(
                                byZone.groupByKey(3)
                                        .mapValues(
                                                v -> {
                                                    int n = 0;
                                                    for (Double ignored : v) {
                                                        n++;
                                                    }
                                                    return n;
                                                })
                                        .collectAsMap()));
        out.add("sortBy " + rows.map(r -> r.getDouble(2)).sortBy(d -> d, true, 4).take(20));
        JavaPairRDD<Integer, Integer> hours =
                rows.mapToPair(r -> new Tuple2<>(r.getInt(1), r.getInt(0))).reduceByKey(Math::max);
        out.add("join " + new TreeMap<>(byZone.reduceByKey(Math::max).join(hours).collectAsMap()));
        Dataset<Row> agg =
                trips.groupBy("hour")
                        .agg(
                                functions.avg("distance").alias("d"),
                                functions
                                        .percentile_approx(
                                                functions.col("fare"),
                                                functions.lit(0.5),
                                                functions.lit(10000))
                                        .alias("m"),
                                functions.count("*").alias("n"));
        Dataset<Row> joined =
                agg.join(trips.groupBy("hour").agg(functions.max("zone").alias("z")), "hour")
                        .orderBy("hour");
        out.add("sql " + joined.collectAsList());
        out.add(
                "window "
                        + trips.withColumn(
                                        "rk",
                                        functions
                                                .row_number()
                                                .over(
                                                        org.apache.spark.sql.expressions.Window
                                                                .partitionBy("hour")
                                                                .orderBy(
                                                                        functions.desc("fare"),
                                                                        functions.asc("zone"),
                                                                        functions.asc("distance"))))
                                .filter("rk <= 2")
                                .orderBy("hour", "rk")
                                .collectAsList());
        out.add(
                "repartition "
                        + trips.repartition(5, functions.col("zone"))
                                .groupBy("zone")
                                .count()
                                .orderBy("zone")
                                .collectAsList());
        return out;
    }

    @Test
    void nonApproximateJobsAreSortShuffle() {
        List<String> withApprox;
        SparkSession spark = SparkTestSupport.local("pass-through", SparkTestSupport.conf());
        try {
            assertInstanceOf(ApproxShuffleManager.class, SparkEnv.get().shuffleManager());
            withApprox = workload(spark);
            JavaPairRDD<Integer, Integer> p =
                    new org.apache.spark.api.java.JavaSparkContext(spark.sparkContext())
                            .parallelize(List.of(1, 2, 3, 4), 2)
                            .mapToPair(i -> new Tuple2<>(i % 2, i))
                            .reduceByKey(Integer::sum);
            ShuffleDependency<?, ?, ?> dep =
                    (ShuffleDependency<?, ?, ?>) p.rdd().dependencies().head();
            assertFalse(
                    dep.shuffleHandle() instanceof ApproxShuffleHandle,
                    "plain shuffles get sort's own handle");
            assertTrue(
                    dep.shuffleHandle()
                            .getClass()
                            .getName()
                            .startsWith("org.apache.spark.shuffle."),
                    dep.shuffleHandle().getClass().getName());
        } finally {
            spark.stop();
        }
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
        SparkSession sort =
                SparkTestSupport.base("local[2]", "sort")
                        .config("spark.shuffle.manager", "sort")
                        .getOrCreate();
        List<String> withSort;
        try {
            assertFalse(SparkEnv.get().shuffleManager() instanceof ApproxShuffleManager);
            withSort = workload(sort);
        } finally {
            sort.stop();
        }
        assertEquals(withSort.size(), withApprox.size());
        for (int i = 0; i < withSort.size(); i++) {
            assertEquals(withSort.get(i), withApprox.get(i));
        }
    }

    @Test
    void badConfigurationFailsAtStartupNamingTheKey() {
        for (Map.Entry<String, String> bad :
                Map.of(
                                "spark.approx.confidence", "1.5",
                                "spark.approx.mode", "FAST",
                                "spark.approx.dscp", "1,2,3",
                                "spark.approx.lineRateBps", "lots",
                                "spark.approx.dataPlane", "udp",
                                "spark.approx.recordsPerMesage", "8")
                        .entrySet()) {
            Exception e =
                    assertThrows(
                            Exception.class,
                            () -> {
                                SparkSession s =
                                        SparkTestSupport.local(
                                                "bad-conf",
                                                SparkTestSupport.conf(
                                                        bad.getKey(), bad.getValue()));
                                s.stop();
                            });
            Throwable t = e;
            while (!(t instanceof IllegalArgumentException) && t.getCause() != null) {
                t = t.getCause();
            }
            assertInstanceOf(IllegalArgumentException.class, t, String.valueOf(e));
            assertTrue(t.getMessage().contains(bad.getKey()), t.getMessage());
            System.out.println(
                    "[spark] " + bad.getKey() + "=" + bad.getValue() + ": " + t.getMessage());
            SparkSession.clearActiveSession();
            SparkSession.clearDefaultSession();
        }
    }
}
