package io.netapprox.core.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The clause grammar and its error messages in both dialects, without a framework. */
class ApproxClauseParserTest {
    private static final String Q = "SELECT hour, avg(distance) FROM trips GROUP BY hour";

    @Test
    void parsesTheWholeClause() {
        ApproxClause c =
                ApproxClauseParser.parse(
                                Q
                                        + " WITH ERROR 0.05 CONFIDENCE 0.9 REPEATABLE (42),"
                                        + " ERROR 1% FOR hour = 17, ERROR 0.02 FOR hour = -3 AND zone"
                                        + " = 'JFK';",
                                SqlDialect.SPARK)
                        .orElseThrow();
        assertEquals(Q.length() + 1, c.queryEnd());
        assertEquals(0.05, c.errorBound(), 0);
        assertEquals(0.9, c.confidence(), 0);
        assertEquals(42L, c.seed());
        assertEquals(2, c.groupBounds().size());
        assertEquals(0.01, c.groupBounds().get(0).errorBound(), 1e-15);
        assertEquals(
                List.of(
                        new ApproxClause.ColumnValue(
                                "hour", "17", c.groupBounds().get(0).values().get(0).offset())),
                c.groupBounds().get(0).values());
        List<ApproxClause.ColumnValue> second = c.groupBounds().get(1).values();
        assertEquals("-3", second.get(0).value());
        assertEquals("zone", second.get(1).column());
        assertEquals("JFK", second.get(1).value());
    }

    @Test
    void percentAndDefaults() {
        ApproxClause c =
                ApproxClauseParser.parse(Q + "\nwith error 5%", SqlDialect.SPARK).orElseThrow();
        assertEquals(0.05, c.errorBound(), 1e-15);
        assertNull(c.confidence());
        assertNull(c.seed());
        assertTrue(c.groupBounds().isEmpty());
    }

    @Test
    void statementsWithoutTheClauseAreNotTouched() {
        for (String sql :
                List.of(
                        Q,
                        "WITH error AS (SELECT 1 AS x) SELECT x FROM error",
                        "WITH error (x) AS (SELECT 1) SELECT x FROM error",
                        "SELECT 'a WITH ERROR 0.05' AS s",
                        "SELECT \"WITH ERROR 0.05\" AS s",
                        "SELECT r'\\' AS s, 'WITH ERROR 0.05'",
                        "SELECT 1 -- WITH ERROR 0.05",
                        "SELECT 1 /* WITH /* nested */ ERROR 0.05 */",
                        "SELECT `with error 0.05` FROM t",
                        "SELECT * FROM (SELECT 1) WITH",
                        "SELECT * FROM (WITH error AS (SELECT 1 AS x) SELECT x FROM error)",
                        "SELECT error FROM t WITH")) {
            assertEquals(Optional.empty(), ApproxClauseParser.parse(sql, SqlDialect.SPARK), sql);
        }
        // the clause inside parentheses is no Spark SQL either: named here (Spark 4.1.3's own
        // ParseException for it showed only the statement in a probe)
        expectError(
                "SELECT * FROM (SELECT 1 WITH ERROR 0.05)",
                "cannot be inside a subquery or parentheses",
                1,
                24);
    }

    @Test
    void syntaxErrorsNameTheProblemAndThePosition() {
        expectError(Q + " WITH ERROR abc", "expected a number after ERROR", 1, Q.length() + 12);
        expectError(
                Q + " WITH ERROR 1.5", "must be a relative bound in (0, 1)", 1, Q.length() + 12);
        expectError(Q + " WITH ERROR 0", "must be a relative bound", 1, Q.length() + 12);
        expectError(
                Q + " WITH ERROR 0.05 CONFIDENCE",
                "expected a number after CONFIDENCE (e.g. 0.95 or 95%), found end of input",
                1,
                Q.length() + 27);
        expectError(
                Q + " WITH ERROR 0.05 CONFIDENCE 95",
                "CONFIDENCE must be in (0, 1)",
                1,
                Q.length() + 28);
        expectError(
                Q + " WITH ERROR 0.05 ORDER BY hour",
                "expected CONFIDENCE, REPEATABLE, WITHIN, BEHAVIOR, ',' (a per-group ERROR ... FOR ...) or the end of"
                        + " the statement, found 'ORDER'",
                1,
                Q.length() + 17);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 hour = 17",
                "expected FOR, found 'hour'",
                1,
                Q.length() + 29);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 FOR hour 17",
                "expected '=' after hour, found '17'",
                1,
                Q.length() + 38);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 FOR hour = 17 CONFIDENCE 0.9",
                "found 'CONFIDENCE'",
                1,
                Q.length() + 43);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 CONFIDENCE 0.9 FOR hour = 17",
                "CONFIDENCE applies to the whole query",
                1,
                Q.length() + 29);
        expectError(
                Q + " WITH ERROR 0.05 REPEATABLE 3",
                "expected '(' after REPEATABLE",
                1,
                Q.length() + 28);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 FOR hour = NULL",
                "NULL group",
                1,
                Q.length() + 40);
        expectError(
                Q + " WITH ERROR 0.05 CONFIDENCE 0.9 CONFIDENCE 0.8",
                "CONFIDENCE given twice",
                1,
                Q.length() + 32);
        expectError("WITH ERROR 0.05", "must follow a query", 1, 0);
        // position within the line, on the right line
        expectError(
                "SELECT hour, avg(x)\nFROM t GROUP BY hour\nWITH ERROR x",
                "expected a number",
                3,
                11);
    }

    @Test
    void theMessageShowsTheStatementWithTheProblemMarked() {
        ApproxSqlException e =
                assertThrows(
                        ApproxSqlException.class,
                        () -> ApproxClauseParser.parse(Q + " WITH ERROR abc", SqlDialect.SPARK));
        String[] lines = e.getMessage().split("\n");
        assertEquals("== SQL ==", lines[2]);
        assertEquals(Q + " WITH ERROR abc", lines[3]);
        assertEquals("-".repeat(Q.length() + 12) + "^^^", lines[4]);
    }

    @Test
    void withinAndBehaviorInAnyOrder() {
        ApproxClause c =
                ApproxClauseParser.parse(
                                Q + " WITH ERROR 0.05 CONFIDENCE 0.95 WITHIN 2 SECONDS",
                                SqlDialect.SPARK)
                        .orElseThrow();
        assertEquals(java.time.Duration.ofSeconds(2), c.within());
        assertNull(c.behavior());
        c =
                ApproxClauseParser.parse(
                                Q
                                        + " WITH ERROR 0.05 behavior fail WITHIN 250 milliseconds"
                                        + " CONFIDENCE 0.9, ERROR 0.01 FOR hour = 1",
                                SqlDialect.SPARK)
                        .orElseThrow();
        assertEquals(java.time.Duration.ofMillis(250), c.within());
        assertEquals(ApproxClause.Behavior.FAIL, c.behavior());
        assertEquals(0.9, c.confidence(), 0);
        assertEquals(1, c.groupBounds().size());
        c =
                ApproxClauseParser.parse(Q + " WITH ERROR 0.05 BEHAVIOR ANSWER", SqlDialect.SPARK)
                        .orElseThrow();
        assertNull(c.within());
        assertEquals(ApproxClause.Behavior.ANSWER, c.behavior());
        assertEquals(
                java.time.Duration.ofMillis(1500),
                ApproxClauseParser.parse(Q + " WITH ERROR 0.05 WITHIN 1.5 SECOND", SqlDialect.SPARK)
                        .orElseThrow()
                        .within());
    }

    /**
     * A time bound alone is the clause too, planned at the default error bound; {@code WITHIN
     * GROUP} of an ordered-set aggregate is not. Before, a statement ending in {@code WITHIN 2
     * SECONDS} went to Spark untouched (its own syntax error at WITHIN).
     */
    @Test
    void withinAloneUsesTheDefaultErrorBound() {
        ApproxClause c =
                ApproxClauseParser.parse(Q + " WITHIN 2 SECONDS CONFIDENCE 0.9", SqlDialect.SPARK)
                        .orElseThrow();
        assertEquals(ApproxClause.DEFAULT_ERROR_BOUND, c.errorBound(), 0);
        assertEquals(java.time.Duration.ofSeconds(2), c.within());
        assertEquals(0.9, c.confidence(), 0);
        assertEquals(Q.length() + 1, c.queryEnd());
        c =
                ApproxClauseParser.parse(
                                Q
                                        + "\nwithin 500 milliseconds behavior fail, ERROR 0.01 FOR hour = 1;",
                                SqlDialect.SPARK)
                        .orElseThrow();
        assertEquals(java.time.Duration.ofMillis(500), c.within());
        assertEquals(ApproxClause.Behavior.FAIL, c.behavior());
        assertEquals(0.01, c.groupBounds().get(0).errorBound(), 1e-15);
        String ordered =
                "SELECT hour, percentile_cont(0.5) WITHIN GROUP (ORDER BY fare) FROM trips GROUP BY"
                        + " hour";
        assertEquals(Optional.empty(), ApproxClauseParser.parse(ordered, SqlDialect.SPARK));
        assertEquals(
                ordered.length() + 1,
                ApproxClauseParser.parse(ordered + " WITHIN 2 SECONDS", SqlDialect.SPARK)
                        .orElseThrow()
                        .queryEnd());
        expectError(
                Q + " WITHIN 2 SECONDS WITHIN 3 SECONDS", "WITHIN given twice", 1, Q.length() + 18);
        expectError(
                Q + " WITHIN 2 SECONDS WITH ERROR 0.05",
                "expected CONFIDENCE, REPEATABLE, WITHIN, BEHAVIOR",
                1,
                Q.length() + 18);
        expectError("WITHIN 2 SECONDS", "WITHIN must follow a query", 1, 0);
        expectError(
                "SELECT * FROM (SELECT 1 WITHIN 2 SECONDS)",
                "WITHIN ends the whole statement",
                1,
                24);
        expectFlinkError(
                Q + " WITHIN 2 SECONDS", "WITHIN is not supported in Flink SQL", Q.length() + 1);
    }

    @Test
    void badWithinAndBehaviorClauses() {
        int at = Q.length() + 24; // the token after "WITH ERROR 0.05 WITHIN "
        expectError(
                Q + " WITH ERROR 0.05 WITHIN SECONDS",
                "expected a number after WITHIN (e.g. WITHIN 2 SECONDS), found 'SECONDS'",
                1,
                at);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN 2",
                "expected SECONDS or MILLISECONDS after WITHIN 2, found end of input",
                1,
                at + 1);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN 2 MINUTES",
                "expected SECONDS or MILLISECONDS after WITHIN 2, found 'MINUTES'",
                1,
                at + 2);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN 0 SECONDS",
                "WITHIN must be between 1 millisecond and 1 day, got 0 SECONDS",
                1,
                at);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN 100000 SECONDS",
                "WITHIN must be between 1 millisecond and 1 day",
                1,
                at);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN -2 SECONDS", "expected a number after WITHIN", 1, at);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN 2s",
                "expected a plain decimal number after WITHIN, found '2s'",
                1,
                at);
        expectError(
                Q + " WITH ERROR 0.05 WITHIN 2 SECONDS WITHIN 3 SECONDS",
                "WITHIN given twice",
                1,
                Q.length() + 34);
        expectError(
                Q + " WITH ERROR 0.05 BEHAVIOR RERUN",
                "expected ANSWER (answer every group and flag the ones that missed their bound) or"
                        + " FAIL (fail naming them) after BEHAVIOR, found 'RERUN'",
                1,
                Q.length() + 26);
        expectError(
                Q + " WITH ERROR 0.05 BEHAVIOR",
                "after BEHAVIOR, found end of input",
                1,
                Q.length() + 25);
        expectError(
                Q + " WITH ERROR 0.05 BEHAVIOR FAIL BEHAVIOR ANSWER",
                "BEHAVIOR given twice",
                1,
                Q.length() + 31);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 FOR hour = 1 WITHIN 2 SECONDS",
                "expected ',' (another per-group ERROR ... FOR ...), AND or the end",
                1,
                Q.length() + 42);
        expectError(
                Q + " WITH ERROR 0.05, ERROR 0.01 WITHIN 2 SECONDS FOR hour = 1",
                "WITHIN applies to the whole query: write it after the first ERROR",
                1,
                Q.length() + 29);
        expectFlinkError(
                Q + " WITH ERROR 0.05 BEHAVIOR FAIL",
                "BEHAVIOR is not supported in Flink SQL",
                Q.length() + 17);
    }

    @Test
    void flinkReadsErrorAndConfidenceOnly() {
        ApproxClause c =
                ApproxClauseParser.parse(Q + " WITH ERROR 5% CONFIDENCE 0.9;", SqlDialect.FLINK)
                        .orElseThrow();
        assertEquals(0.05, c.errorBound(), 1e-15);
        assertEquals(0.9, c.confidence(), 0);
        assertNull(c.seed());
        assertEquals(Q.length() + 1, c.queryEnd());
        expectFlinkError(
                Q + " WITH ERROR 0.05 REPEATABLE (7)",
                "REPEATABLE is not supported in Flink SQL",
                Q.length() + 17);
        expectFlinkError(
                Q + " WITH ERROR 0.05, ERROR 0.01 FOR zone = 1",
                "per-group bounds (', ERROR e FOR column = value') are not supported in Flink SQL",
                Q.length() + 16);
        expectFlinkError(
                Q + " WITH ERROR 0.05 WITHIN 2 SECONDS",
                "WITHIN is not supported in Flink SQL",
                Q.length() + 17);
        expectFlinkError(
                Q + " WITH ERROR 0.05 ORDER BY zone",
                "expected CONFIDENCE or the end of the statement, found 'ORDER'",
                Q.length() + 17);
        expectFlinkError(
                Q + " WITH ERROR 0.05 CONFIDENCE 0.9 CONFIDENCE 0.9",
                "CONFIDENCE given twice",
                Q.length() + 32);
        expectFlinkError(
                "SELECT * FROM (SELECT 1 WITH ERROR 0.05)",
                "cannot be inside a subquery or parentheses",
                24);
        expectFlinkError("  WITH ERROR 0.05", "must follow a query", 2);
    }

    @Test
    void badNumbersInBothDialects() {
        for (SqlDialect d : SqlDialect.values()) {
            for (String bad : List.of("0", "1", "1.5", "0%", "100%", "1e3", "0.0")) {
                expectError(
                        d,
                        Q + " WITH ERROR " + bad,
                        "must be a relative bound in (0, 1)",
                        1,
                        Q.length() + 12);
                expectError(
                        d,
                        Q + " WITH ERROR 0.1 CONFIDENCE " + bad,
                        "CONFIDENCE must be in (0, 1) or (0%, 100%), got",
                        1,
                        Q.length() + 27);
            }
            expectError(
                    d,
                    Q + " WITH ERROR -0.1",
                    "expected a number after ERROR (e.g. 0.05 or" + " 5%), found '-'",
                    1,
                    Q.length() + 12);
            expectError(d, Q + " WITH ERROR 'x'", "found ''x''", 1, Q.length() + 12);
            expectError(d, Q + " WITH ERROR 0.05 0.9", "found '0.9'", 1, Q.length() + 17);
            expectError(d, Q + " WITH ERROR 0.05; SELECT 1", "found 'SELECT'", 1, Q.length() + 18);
            ApproxClause c = ApproxClauseParser.parse(Q + " WITH ERROR 1e-2", d).orElseThrow();
            assertEquals(0.01, c.errorBound(), 1e-15);
            ApproxClause pct =
                    ApproxClauseParser.parse(Q + " WITH ERROR .5% CONFIDENCE 99.9%", d)
                            .orElseThrow();
            assertEquals(0.005, pct.errorBound(), 1e-15);
            assertEquals(0.999, pct.confidence(), 1e-15);
        }
        // a Spark typed literal is one token: refused as a number, not split
        expectError(
                SqlDialect.SPARK,
                Q + " WITH ERROR 5L",
                "expected a plain decimal number" + " after ERROR, found '5L'",
                1,
                Q.length() + 12);
    }

    @Test
    void theDialectsLexDifferently() {
        // Spark: backslash escapes and raw strings; Flink: a doubled quote escapes
        assertEquals(
                List.of("it's"), strings(SqlLexer.tokenize("SELECT 'it\\'s'", SqlDialect.SPARK)));
        assertEquals(
                List.of("it's"), strings(SqlLexer.tokenize("SELECT 'it''s'", SqlDialect.FLINK)));
        assertEquals(
                List.of("a\\b"), strings(SqlLexer.tokenize("SELECT r'a\\b'", SqlDialect.SPARK)));
        assertEquals(
                List.of("say \"hi\""),
                strings(SqlLexer.tokenize("SELECT \"say \"\"hi\"\"\"", SqlDialect.FLINK)));
        // back-quoted names alike; Flink names may hold $
        for (SqlDialect d : SqlDialect.values()) {
            List<SqlLexer.Token> t = SqlLexer.tokenize("`a``b` x$1", d);
            assertEquals(SqlLexer.Kind.QUOTED_IDENTIFIER, t.get(0).kind());
            assertEquals("a`b", t.get(0).value());
            assertEquals(d == SqlDialect.FLINK ? "x$1" : "x", t.get(1).text());
        }
        // Spark's comments nest, Calcite's end at the first */
        String nested = "SELECT 1 /* a /* b */ WITH ERROR 0.05 */";
        assertEquals(Optional.empty(), ApproxClauseParser.parse(nested, SqlDialect.SPARK));
        expectError(SqlDialect.FLINK, nested, "found '*'", 1, nested.length() - 2);
        // Spark's typed numbers are one token
        assertEquals("12L", SqlLexer.tokenize("12L", SqlDialect.SPARK).get(0).text());
        assertEquals("12", SqlLexer.tokenize("12L", SqlDialect.FLINK).get(0).text());
        // depth and offsets
        List<SqlLexer.Token> t = SqlLexer.tokenize("f((x)) y", SqlDialect.FLINK);
        assertEquals(
                List.of(0, 0, 1, 2, 1, 0, 0, 0), t.stream().map(SqlLexer.Token::depth).toList());
        assertEquals(7, t.get(6).start());
        assertTrue(t.get(7).isEnd());
        assertEquals(8, t.get(7).start());
    }

    private static List<String> strings(List<SqlLexer.Token> tokens) {
        return tokens.stream()
                .filter(t -> t.kind() == SqlLexer.Kind.STRING)
                .map(SqlLexer.Token::value)
                .toList();
    }

    private static void expectFlinkError(String sql, String fragment, int pos) {
        expectError(SqlDialect.FLINK, sql, fragment, 1, pos);
    }

    private static void expectError(String sql, String fragment, int line, int pos) {
        expectError(SqlDialect.SPARK, sql, fragment, line, pos);
    }

    private static void expectError(SqlDialect d, String sql, String fragment, int line, int pos) {
        ApproxSqlException e =
                assertThrows(ApproxSqlException.class, () -> ApproxClauseParser.parse(sql, d), sql);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertEquals(line, e.line(), e.getMessage());
        assertEquals(pos, e.position(), e.getMessage());
        assertTrue(e.getMessage().contains("(line " + line + ", pos " + pos + ")"), e.getMessage());
    }
}
