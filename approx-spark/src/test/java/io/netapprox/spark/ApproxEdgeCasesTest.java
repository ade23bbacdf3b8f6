package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Complete groups, non-finite values and bad override keys, checked against plain Spark SQL on the
 * same data (local[2], default configuration: submit=all, planning=shares).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ApproxEdgeCasesTest {
    static SparkSession spark;

    static final StructType SCHEMA =
            new StructType()
                    .add("g", DataTypes.StringType, false)
                    .add("v", DataTypes.DoubleType, false);

    @BeforeAll
    static void start() {
        spark = SparkTestSupport.local("approx-edge-cases", SparkTestSupport.conf());
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    static Dataset<Row> frame(List<Row> rows, int partitions) {
        return spark.createDataFrame(rows, SCHEMA).repartition(partitions).cache();
    }

    /** Spark SQL's answers per group: avg, sum, and median (interpolated, NaN largest). */
    static Map<String, double[]> sparkSql(Dataset<Row> data) {
        data.createOrReplaceTempView("edge");
        Map<String, double[]> out = new HashMap<>();
        for (Row r :
                spark.sql("SELECT g, avg(v), sum(v), median(v) FROM edge " + "GROUP BY g")
                        .collectAsList()) {
            out.put(
                    "g=" + r.getString(0),
                    new double[] {r.getDouble(1), r.getDouble(2), r.getDouble(3)});
        }
        return out;
    }

    @Test
    void completeGroupsAnswerExactlyAndCoverSparksOwnSums() {
        // small groups of ill-conditioned values (mixed signs and magnitudes) over 4 partitions:
        // every group is
        // delivered whole (a tiny e_max), and Spark's own sum depends on the order it adds the
        // partitions in
        SplittableRandom r = new SplittableRandom(5);
        List<Row> rows = new ArrayList<>();
        for (int g = 0; g < 60; g++) {
            for (int i = 0; i < 40 + r.nextInt(200); i++) {
                double v =
                        (r.nextBoolean() ? 1 : -1) * Math.exp(r.nextDouble() * 30 - 10)
                                + r.nextDouble();
                rows.add(RowFactory.create("x" + g, v));
            }
        }
        Dataset<Row> data = frame(rows, 4);
        Map<String, double[]> sql = sparkSql(data);
        Map<String, Row> approx =
                SparkTestSupport.byKey(
                        ApproxQuery.on(data)
                                .groupBy("g")
                                .avg("v")
                                .sum("v")
                                .median("v")
                                .errorBound(1e-6)
                                .seed(3)
                                .run());
        Map<String, Row> exact =
                SparkTestSupport.byKey(
                        ApproxQuery.on(data)
                                .groupBy("g")
                                .avg("v")
                                .sum("v")
                                .median("v")
                                .exact()
                                .run());
        int checks = 0;
        int differentFromSpark = 0;
        for (Map.Entry<String, double[]> e : sql.entrySet()) {
            String[] aggs = {"avg(v)", "sum(v)", "median(v)"};
            for (int a = 0; a < 3; a++) {
                Row ap = approx.get(e.getKey() + "|" + aggs[a]);
                Row ex = exact.get(e.getKey() + "|" + aggs[a]);
                assertEquals(ap.getLong(10), ap.getLong(9), "complete: " + ap);
                // bitwise the exact path's answer, and an interval containing Spark SQL's
                assertEquals(
                        ex.getDouble(4),
                        ap.getDouble(4),
                        0.0,
                        "complete group = exact path: " + ap);
                double spark = e.getValue()[a];
                assertTrue(
                        ap.getDouble(5) <= spark && spark <= ap.getDouble(6),
                        "Spark's " + aggs[a] + " " + spark + " outside " + ap);
                checks++;
                differentFromSpark += ap.getDouble(4) != spark ? 1 : 0;
            }
        }
        System.out.printf(
                "[spark] complete groups: %d group-aggregates, all equal to the exact path and covering "
                        + "Spark SQL's value; %d differ from Spark's rounding%n",
                checks, differentFromSpark);
        assertEquals(180, checks);
    }

    @Test
    void nonFiniteValuesPropagateAsSparkDoes() {
        List<Row> rows = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(7);
        for (int i = 0; i < 4000; i++) {
            rows.add(RowFactory.create("finite", 10 + r.nextDouble()));
            rows.add(RowFactory.create("nan", i == 1234 ? Double.NaN : 10 + r.nextDouble()));
            rows.add(
                    RowFactory.create(
                            "posinf", i == 99 ? Double.POSITIVE_INFINITY : 10 + r.nextDouble()));
            rows.add(
                    RowFactory.create(
                            "neginf", i == 7 ? Double.NEGATIVE_INFINITY : 10 + r.nextDouble()));
            rows.add(
                    RowFactory.create(
                            "both",
                            i == 5
                                    ? Double.POSITIVE_INFINITY
                                    : i == 6 ? Double.NEGATIVE_INFINITY : 10 + r.nextDouble()));
            // most values NaN: the median (NaN sorting last) is NaN
            rows.add(RowFactory.create("mostlynan", i % 4 == 0 ? 10 + r.nextDouble() : Double.NaN));
        }
        Dataset<Row> data = frame(rows, 4);
        Map<String, double[]> sql = sparkSql(data);
        for (boolean exactPath : new boolean[] {false, true}) {
            ApproxQuery q =
                    ApproxQuery.on(data)
                            .groupBy("g")
                            .avg("v")
                            .sum("v")
                            .median("v")
                            .errorBound(0.05)
                            .seed(9);
            Map<String, Row> got = SparkTestSupport.byKey(exactPath ? q.exact().run() : q.run());
            String[] aggs = {"avg(v)", "sum(v)", "median(v)"};
            for (Map.Entry<String, double[]> e : sql.entrySet()) {
                for (int a = 0; a < 3; a++) {
                    Row row = got.get(e.getKey() + "|" + aggs[a]);
                    double spark = e.getValue()[a];
                    double est = row.getDouble(4);
                    if (Double.isNaN(spark)) {
                        assertTrue(
                                Double.isNaN(est)
                                        && Double.isNaN(row.getDouble(5))
                                        && Double.isNaN(row.getDouble(6)),
                                "NaN with a NaN interval, as Spark: " + row);
                    } else if (Double.isInfinite(spark)) {
                        assertEquals(spark, est, row.toString());
                    } else {
                        assertFalse(Double.isNaN(est), row.toString());
                        assertTrue(
                                Math.abs(est - spark) <= 0.05 * Math.abs(spark)
                                        || e.getKey().equals("g=finite"),
                                row.toString());
                    }
                }
            }
            // the cases are what the test means them to be
            assertTrue(Double.isNaN(sql.get("g=nan")[0]) && Double.isNaN(sql.get("g=both")[1]));
            assertEquals(Double.POSITIVE_INFINITY, sql.get("g=posinf")[1]);
            assertTrue(
                    Double.isNaN(sql.get("g=mostlynan")[2])
                            && Double.isFinite(sql.get("g=nan")[2]));
        }
        System.out.println(
                "[spark] NaN / infinities: avg, sum and median equal Spark SQL's (NaN results with NaN "
                        + "intervals), approximate and exact");
    }

    @Test
    void overridesNamingNoGroupFailWithTheKnownGroups() {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            rows.add(RowFactory.create("k" + (i % 3), (double) i));
        }
        Dataset<Row> data = frame(rows, 2);
        IllegalArgumentException unknown =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                ApproxQuery.on(data)
                                        .groupBy("g")
                                        .avg("v")
                                        .errorBound("g=zzz", 0.01)
                                        .run());
        assertTrue(
                unknown.getMessage().contains("[g=zzz]")
                        && unknown.getMessage().contains("[g=k0, g=k1, g=k2]"),
                unknown.getMessage());
        for (String bad : new String[] {"g = k0", "hour=k0", "k0", "G=k0"}) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    ApproxQuery.on(data)
                                            .groupBy("g")
                                            .avg("v")
                                            .errorBound(bad, 0.01)
                                            .run());
            assertTrue(e.getMessage().contains("expected g=<value>"), e.getMessage());
        }
        // a good override applies
        Map<String, Row> ok =
                SparkTestSupport.byKey(
                        ApproxQuery.on(data).groupBy("g").avg("v").errorBound("g=k1", 0.01).run());
        assertEquals(0.01, ok.get("g=k1|avg(v)").getDouble(8), 0.0);
        assertEquals(0.05, ok.get("g=k0|avg(v)").getDouble(8), 0.0);
        System.out.println("[spark] bad override keys: " + unknown.getMessage());
    }
}
