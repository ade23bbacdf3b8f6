package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What SQL users write that the approximate form answered otherwise than Spark SQL, or failed
 * without saying why: NULLs in aggregated columns (count(*) counts every row, avg/sum ignore NULLs
 * per column), group values that contain the key's separators, GROUP BY a select alias of a column,
 * the clause inside a subquery. local[2], {@code ApproxExtensions}, the default configuration
 * (exact partials on: a query of only avg/sum/count is Spark's aggregation; with a median it takes
 * the approximate shuffle).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class SqlUserQueriesTest {
    static SparkSession spark;

    @BeforeAll
    static void start() {
        spark =
                SparkTestSupport.local(
                        "approx-sql-user-queries",
                        SparkTestSupport.conf(
                                "spark.sql.extensions",
                                ApproxExtensions.class.getName(),
                                "spark.approx.exactPartials",
                                "true"));
        // 12,000 rows in 4 partitions, groups s = id % 3; a NULL in a every 4th row, in b every
        // 5th; c never NULL
        spark.sql(
                "CREATE OR REPLACE TEMP VIEW nk AS SELECT CAST(id % 3 AS STRING) AS s,"
                        + " CASE WHEN id % 4 = 0 THEN NULL ELSE CAST(id % 10 AS DOUBLE) END AS a,"
                        + " CASE WHEN id % 5 = 0 THEN NULL ELSE CAST(id % 9 AS DOUBLE) END AS b,"
                        + " CAST(id % 7 AS DOUBLE) AS c FROM range(0, 12000, 1, 4)");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void nullsInAggregatedColumnsFailWhereSparkSqlWouldAnswerOtherwise() {
        String with = " FROM nk GROUP BY s WITH ERROR 0.05 REPEATABLE (3)";
        // count(*) beside a column with NULLs: Spark counts every row (4,000 per group); skipping
        // the rows with a NULL gave 3,000 and avg/sum over them, silently
        expectNullFailure("SELECT s, avg(a), count(*)" + with, "column a");
        expectNullFailure("SELECT s, avg(a), sum(a), count(*), median(c)" + with, "column a");
        // two columns with NULLs in different rows: each of Spark's averages uses its own rows
        expectNullFailure("SELECT s, avg(a), avg(b)" + with, "[a, b]");
        expectNullFailure("SELECT s, avg(a), median(b)" + with, "column ");
        expectNullFailure("SELECT s, approx_top_k(a, 3), count(*)" + with, "column a");

        Map<String, Row> exact = new HashMap<>();
        for (Row r :
                spark.sql(
                                "SELECT s, avg(a), sum(a), count(a), avg(c), count(*) FROM nk"
                                        + " GROUP BY s")
                        .collectAsList()) {
            exact.put(r.getString(0), r);
        }
        // one column and no count: skipping its NULLs is what Spark SQL does (the exact
        // partials make avg and sum exact; the median is sampled)
        Map<String, Row> one =
                SparkTestSupport.byKey(spark.sql("SELECT s, avg(a), sum(a), median(a)" + with));
        // columns without NULLs beside count(*): nothing is skipped
        Map<String, Row> complete =
                SparkTestSupport.byKey(spark.sql("SELECT s, avg(c), count(*)" + with));
        for (String s : new String[] {"0", "1", "2"}) {
            Row x = exact.get(s);
            Row avg = one.get("s=" + s + "|avg(a)");
            assertEquals(x.getDouble(1), avg.getDouble(4), 1e-12 * x.getDouble(1), "avg(a) " + s);
            assertEquals(x.getDouble(2), one.get("s=" + s + "|sum(a)").getDouble(4), 1e-9);
            assertEquals(x.getLong(3), avg.getLong(10), "rows of a: Spark's count(a)");
            assertEquals(x.getDouble(4), complete.get("s=" + s + "|avg(c)").getDouble(4), 1e-12);
            assertEquals(x.getLong(5), (long) complete.get("s=" + s + "|count").getDouble(4));
        }
        // the filter the message proposes answers as Spark SQL with the same filter
        Row filtered =
                spark.sql(
                                "SELECT s, avg(a), count(*) FROM nk WHERE a IS NOT NULL GROUP BY s"
                                        + " WITH ERROR 0.05")
                        .where("`group` = 's=1' AND aggregate = 'count'")
                        .first();
        assertEquals(exact.get("1").getLong(3), (long) filtered.getDouble(4));
        // the builder keeps its documented behaviour: rows with a NULL are skipped
        Dataset<Row> nk = spark.table("nk");
        Map<String, Row> builder =
                SparkTestSupport.byKey(ApproxQuery.on(nk).groupBy("s").avg("a").count().run());
        assertEquals(3000.0, builder.get("s=1|count").getDouble(4), 0.0);
    }

    @Test
    void groupValuesWithTheKeySeparatorsAreDistinctGroups() {
        // (p, q) = ("x,q=y", "z") and ("x", "y,q=z") were both the key "p=x,q=y,q=z": one group
        // of 2,000 rows on the sampling path, two rows of one key on Spark's aggregation
        spark.sql(
                "CREATE OR REPLACE TEMP VIEW sep AS SELECT"
                        + " CASE WHEN id % 2 = 0 THEN 'x,q=y' ELSE 'x' END AS p,"
                        + " CASE WHEN id % 2 = 0 THEN 'z' ELSE 'y,q=z' END AS q,"
                        + " CASE WHEN id % 2 = 0 THEN 1.0 ELSE 3.0 END + (id % 10) / 10.0 AS v"
                        + " FROM range(0, 4000, 1, 4) UNION ALL"
                        + " SELECT 'back\\\\slash', 'w', 5.0 FROM range(0, 10)");
        String even = "p=x\\,q=y,q=z";
        String odd = "p=x,q=y\\,q=z";
        String slash = "p=back\\\\slash,q=w";
        for (String aggregates : new String[] {"avg(v), count(*)", "avg(v), count(*), median(v)"}) {
            Map<String, Row> r =
                    SparkTestSupport.byKey(
                            spark.sql(
                                    "SELECT p, q, "
                                            + aggregates
                                            + " FROM sep GROUP BY p, q WITH ERROR 0.05"
                                            + " REPEATABLE (1), ERROR 0.01 FOR p = 'x,q=y' AND"
                                            + " q = 'z'"));
            assertEquals(2000.0, r.get(even + "|count").getDouble(4), 0.0, aggregates + r.keySet());
            assertEquals(2000.0, r.get(odd + "|count").getDouble(4), 0.0, aggregates);
            assertEquals(10.0, r.get(slash + "|count").getDouble(4), 0.0, aggregates);
            assertEquals(1.4, r.get(even + "|avg(v)").getDouble(4), 1e-9, aggregates);
            assertEquals(3.5, r.get(odd + "|avg(v)").getDouble(4), 1e-9, aggregates);
            assertEquals(0.01, r.get(even + "|avg(v)").getDouble(8), 0.0, "the bound's group");
            assertEquals(0.05, r.get(odd + "|avg(v)").getDouble(8), 0.0);
            assertEquals(aggregates.contains("median") ? 9 : 6, r.size(), r.keySet().toString());
        }
    }

    @Test
    void groupByAnAliasOfAColumnAndAClauseInsideASubquery() {
        // Spark groups by the select alias when the input has no column of that name; the
        // projection read h from the input and failed with "h cannot be resolved"
        Map<String, Row> byAlias =
                SparkTestSupport.byKey(
                        spark.sql(
                                "SELECT s AS h, avg(c), count(*), median(c) FROM nk GROUP BY h"
                                        + " WITH ERROR 0.05 REPEATABLE (2), ERROR 0.01 FOR h = '2'"));
        Map<String, Row> exact = new HashMap<>();
        for (Row r : spark.sql("SELECT s AS h, count(*) FROM nk GROUP BY h").collectAsList()) {
            exact.put(r.getString(0), r);
        }
        assertEquals(3, exact.size());
        for (String h : exact.keySet()) {
            Row count = byAlias.get("h=" + h + "|count");
            assertEquals(exact.get(h).getLong(1), (long) count.getDouble(4), "count of h=" + h);
            assertEquals(h.equals("2") ? 0.01 : 0.05, count.getDouble(8), 0.0);
        }
        // the clause ends the statement: inside parentheses it was Spark's bare syntax error
        io.netapprox.core.sql.ApproxSqlException inner =
                assertThrows(
                        io.netapprox.core.sql.ApproxSqlException.class,
                        () ->
                                spark.sql(
                                        "SELECT * FROM (SELECT s, avg(c) FROM nk GROUP BY s WITH"
                                                + " ERROR 0.05) WHERE estimate > 1"));
        assertTrue(inner.getMessage().contains("cannot be inside a subquery"), inner.getMessage());
    }

    private static void expectNullFailure(String sql, String column) {
        Exception e = assertThrows(Exception.class, () -> spark.sql(sql).collectAsList(), sql);
        StringBuilder all = new StringBuilder();
        for (Throwable c = e; c != null; c = c.getCause()) {
            all.append(c.getMessage()).append(" | ");
        }
        String m = all.toString();
        assertTrue(m.contains("NULL in ") && m.contains(column) && m.contains("IS NOT NULL"), m);
        System.out.println(
                "[spark] "
                        + sql
                        + " -> "
                        + m.substring(m.indexOf("NULL in ")).lines().findFirst().orElse(""));
    }
}
