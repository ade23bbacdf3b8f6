package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
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
 * The SQL quantiles mean what Spark's functions of those names mean, checked against Spark's own
 * answer to the same statement without the clause (local[2], {@code ApproxExtensions}, default
 * configuration): groups small enough, and an error bound tight enough, that every value is
 * sampled, so each answer must be Spark's exactly, with a zero-width interval. Before: {@code
 * median}/{@code percentile} answered the ceil(qN)-th value (5,000 zeros and 5,000 hundreds: 0.0 in
 * [0, 0] for Spark's 50.0; {2, 3}: 2.0 for 2.5; {1, NaN}: 1.0 for NaN), {@code percentile_disc} and
 * {@code percentile_cont} were refused, and an {@code ERROR ... FOR} a group the data lacks was
 * accepted silently by a query of only avg/sum/count.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SqlPercentileTest {
    static SparkSession spark;

    static final StructType SCHEMA =
            new StructType()
                    .add("g", DataTypes.StringType, false)
                    .add("v", DataTypes.DoubleType, false);

    /** Spark's aggregate and the label of our answer to it. */
    static final String[][] AGGREGATES = {
        {"median(v)", "median(v)"},
        {"percentile(v, 0.3)", "percentile(v,0.3)"},
        {"percentile(v, 0.07)", "percentile(v,0.07)"},
        {"percentile_cont(0.9) WITHIN GROUP (ORDER BY v)", "percentile(v,0.9)"},
        {"percentile_cont(0.25) WITHIN GROUP (ORDER BY v DESC)", "percentile(v,0.25,desc)"},
        {"percentile_disc(0.07) WITHIN GROUP (ORDER BY v)", "quantile(v,0.07)"},
        {"percentile_disc(0.5) WITHIN GROUP (ORDER BY v)", "quantile(v,0.5)"},
        {"percentile_disc(0.3) WITHIN GROUP (ORDER BY v DESC)", "quantile(v,0.3,desc)"},
        {"approx_percentile(v, 0.61)", "quantile(v,0.61)"}
    };

    @BeforeAll
    static void start() {
        spark =
                SparkTestSupport.local(
                        "approx-sql-percentile",
                        SparkTestSupport.conf(
                                "spark.sql.extensions",
                                ApproxExtensions.class.getName(),
                                "spark.approx.exactPartials",
                                "true"));
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            rows.add(RowFactory.create("half", 0.0));
            rows.add(RowFactory.create("half", 100.0));
        }
        rows.add(RowFactory.create("pair", 2.0));
        rows.add(RowFactory.create("pair", 3.0));
        rows.add(RowFactory.create("nan", 1.0));
        rows.add(RowFactory.create("nan", Double.NaN));
        rows.add(RowFactory.create("inf", 1.0));
        rows.add(RowFactory.create("inf", Double.POSITIVE_INFINITY));
        rows.add(RowFactory.create("infs", Double.NEGATIVE_INFINITY));
        rows.add(RowFactory.create("infs", Double.POSITIVE_INFINITY));
        rows.add(RowFactory.create("one", 7.5));
        // small groups of 1..60 values: tied integers, or doubles of mixed signs and magnitudes
        SplittableRandom r = new SplittableRandom(29);
        for (int g = 0; g < 120; g++) {
            int n = 1 + r.nextInt(60);
            for (int i = 0; i < n; i++) {
                double v =
                        g % 2 == 0
                                ? r.nextInt(6)
                                : (r.nextBoolean() ? 1 : -1) * Math.exp(r.nextDouble() * 8 - 2);
                rows.add(RowFactory.create("r" + g, v));
            }
        }
        spark.createDataFrame(rows, SCHEMA).repartition(4).cache().createOrReplaceTempView("pt");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    /** Spark's own answers: group -> one value per {@link #AGGREGATES}. */
    static Map<String, double[]> sparkAnswers() {
        StringBuilder q = new StringBuilder("SELECT g");
        for (String[] a : AGGREGATES) {
            q.append(", ").append(a[0]);
        }
        q.append(" FROM pt GROUP BY g");
        Map<String, double[]> out = new HashMap<>();
        for (Row row : spark.sql(q.toString()).collectAsList()) {
            double[] v = new double[AGGREGATES.length];
            for (int i = 0; i < v.length; i++) {
                v[i] = ((Number) row.get(i + 1)).doubleValue();
            }
            out.put("g=" + row.getString(0), v);
        }
        return out;
    }

    /** Every answer is Spark's, exactly, with a zero-width interval; returns the checks. */
    static int assertSparksAnswers(Map<String, double[]> spark, Map<String, Row> ours) {
        int checks = 0;
        for (Map.Entry<String, double[]> e : spark.entrySet()) {
            for (int i = 0; i < AGGREGATES.length; i++) {
                String what = e.getKey() + " " + AGGREGATES[i][0];
                Row a = ours.get(e.getKey() + "|" + AGGREGATES[i][1]);
                assertNotNull(a, what + " answered (" + ours.size() + " rows)");
                assertEquals(a.getLong(10), a.getLong(9), what + ": every row sampled: " + a);
                double expected = e.getValue()[i];
                if (Double.isNaN(expected)) {
                    assertTrue(
                            Double.isNaN(a.getDouble(4))
                                    && Double.isNaN(a.getDouble(5))
                                    && Double.isNaN(a.getDouble(6)),
                            what + ": NaN as Spark's: " + a);
                } else {
                    assertEquals(expected, a.getDouble(4), 0.0, what + ": " + a);
                    assertEquals(expected, a.getDouble(5), 0.0, what + " low: " + a);
                    assertEquals(expected, a.getDouble(6), 0.0, what + " high: " + a);
                }
                checks++;
            }
        }
        return checks;
    }

    @Test
    void completeGroupsAnswerWhatSparksFunctionsAnswer() {
        Map<String, double[]> expected = sparkAnswers();
        // the cases of the issue are what Spark answers
        assertEquals(50.0, expected.get("g=half")[0]);
        assertEquals(2.5, expected.get("g=pair")[0]);
        assertTrue(Double.isNaN(expected.get("g=nan")[0]));
        assertEquals(Double.POSITIVE_INFINITY, expected.get("g=inf")[0]);
        assertTrue(Double.isNaN(expected.get("g=infs")[0]));
        StringBuilder q = new StringBuilder("SELECT g");
        for (String[] a : AGGREGATES) {
            q.append(", ").append(a[0]);
        }
        q.append(" FROM pt GROUP BY g WITH ERROR 0.0001 REPEATABLE (5)");
        Map<String, Row> approximate = SparkTestSupport.byKey(spark.sql(q.toString()));
        int checks = assertSparksAnswers(expected, approximate);
        assertTrue(
                approximate.values().stream().allMatch(r -> r.getBoolean(11)),
                "answered by the approximate shuffle");
        // the exact path (sort shuffle's reducer) defines them alike
        ApproxQuery exact = ApproxQuery.on(spark.table("pt")).groupBy("g").exact();
        exact.median("v")
                .percentile("v", 0.3)
                .percentile("v", 0.07)
                .percentile("v", 0.9)
                .percentile("v", 0.25, true)
                .quantile("v", 0.07)
                .quantile("v", 0.5)
                .quantile("v", 0.3, true)
                .quantile("v", 0.61);
        assertEquals(checks, assertSparksAnswers(expected, SparkTestSupport.byKey(exact.run())));
        System.out.printf(
                "[spark] SQL quantiles of %d groups equal to Spark's own (approximate and exact"
                        + " path): %d answers each%n",
                expected.size(), checks);
    }

    @Test
    void unknownGroupsInPerGroupBoundsFailForEveryQuery() {
        String[] queries = {
            // Spark's aggregation (no sample needed)
            "SELECT g, avg(v), count(*) FROM pt WHERE g LIKE 'r%' GROUP BY g",
            // the approximate shuffle (a sampled quantile)
            "SELECT g, avg(v), median(v) FROM pt WHERE g LIKE 'r%' GROUP BY g"
        };
        for (String q : queries) {
            Exception e =
                    assertThrows(
                            Exception.class,
                            () ->
                                    spark.sql(q + " WITH ERROR 0.05, ERROR 0.01 FOR g = 'nope'")
                                            .collectAsList(),
                            q);
            String m = messages(e);
            assertTrue(m.contains("[g=nope] match no group"), q + ": " + m);
            assertTrue(m.contains("known groups: [g=r0, g=r1, g=r10"), q + ": " + m);
            // a group the data has is accepted
            assertFalse(
                    spark.sql(q + " WITH ERROR 0.05, ERROR 0.01 FOR g = 'r7'")
                            .collectAsList()
                            .isEmpty());
        }
        // the builder, over sort shuffle
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                ApproxQuery.on(spark.table("pt"))
                                        .groupBy("g")
                                        .avg("v")
                                        .errorBound("g=nope", 0.01)
                                        .exact()
                                        .run());
        assertTrue(e.getMessage().contains("[g=nope] match no group"), e.getMessage());
    }

    private static String messages(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null && b.length() < 10_000; c = c.getCause()) {
            b.append(c.getMessage()).append(" | ");
        }
        return b.toString();
    }
}
