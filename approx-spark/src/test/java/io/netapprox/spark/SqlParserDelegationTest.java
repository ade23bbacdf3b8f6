package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.spark.sql.ApproxSqlParser;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The parser's Spark 4 methods, which the shared (Scala 2.12 and 2.13) sources call on Spark's
 * parser through method handles: {@code parseRoutineParam} answers as Spark's own, and a
 * parameterized statement ({@code spark.sql(text, args)}, Spark 4's {@code
 * parsePlanWithParameters}) runs, with and without {@code WITH ERROR}. Spark 4 only (not in the
 * Spark 3.5 subsets: 3.5's parser has neither method).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SqlParserDelegationTest {
    static SparkSession spark;

    @BeforeAll
    static void start() {
        spark =
                SparkTestSupport.local(
                        "approx-sql-parser",
                        Map.of("spark.sql.extensions", ApproxExtensions.class.getName()));
        spark.range(0, 2000)
                .selectExpr("cast(id % 4 as int) AS g", "cast(id % 97 as double) AS x")
                .createOrReplaceTempView("t");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void routineParametersAreSparksOwn() throws Exception {
        assertTrue(spark.sessionState().sqlParser() instanceof ApproxSqlParser);
        StructType params =
                ((ApproxSqlParser) spark.sessionState().sqlParser())
                        .parseRoutineParam("a INT, b STRING");
        assertEquals(
                new StructType()
                        .add("a", DataTypes.IntegerType, true)
                        .add("b", DataTypes.StringType, true),
                params);
    }

    @Test
    void parameterizedStatementsRunWithAndWithoutTheClause() {
        Map<String, Object> args = Map.of("lo", 10);
        List<Row> exact = spark.sql("SELECT count(*) FROM t WHERE x >= :lo", args).collectAsList();
        assertEquals(2000 - countBelow(10), exact.get(0).getLong(0));
        Map<String, Row> approx =
                SparkTestSupport.byKey(
                        spark.sql(
                                "SELECT g, count(*) FROM t WHERE x >= :lo GROUP BY g"
                                        + " WITH ERROR 0.05 REPEATABLE (3)",
                                args));
        long total = 0;
        for (int g = 0; g < 4; g++) {
            total += (long) approx.get("g=" + g + "|count").getDouble(4);
        }
        assertEquals(exact.get(0).getLong(0), total, "the parameter applied to the query");
    }

    /** Rows of t with x = id % 97 below lo. */
    private static long countBelow(int lo) {
        long n = 0;
        for (long id = 0; id < 2000; id++) {
            n += (id % 97) < lo ? 1 : 0;
        }
        return n;
    }
}
