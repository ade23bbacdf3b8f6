package io.netapprox.spark.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The clause grammar and its error messages, without Spark. */
class ApproxClauseParserTest {
    private static final String Q = "SELECT hour, avg(distance) FROM trips GROUP BY hour";

    @Test
    void parsesTheWholeClause() {
        ApproxClause c =
                ApproxClauseParser.parse(
                                Q
                                        + " WITH ERROR 0.05 CONFIDENCE 0.9 REPEATABLE (42),"
                                        + " ERROR 1% FOR hour = 17, ERROR 0.02 FOR hour = -3 AND zone"
                                        + " = 'JFK';")
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
        ApproxClause c = ApproxClauseParser.parse(Q + "\nwith error 5%").orElseThrow();
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
            assertEquals(Optional.empty(), ApproxClauseParser.parse(sql), sql);
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
                "expected CONFIDENCE, REPEATABLE, ',' (a per-group ERROR ... FOR ...) or the end of"
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
                        () -> ApproxClauseParser.parse(Q + " WITH ERROR abc"));
        String[] lines = e.getMessage().split("\n");
        assertEquals("== SQL ==", lines[2]);
        assertEquals(Q + " WITH ERROR abc", lines[3]);
        assertEquals("-".repeat(Q.length() + 12) + "^^^", lines[4]);
    }

    private static void expectError(String sql, String fragment, int line, int pos) {
        ApproxSqlException e =
                assertThrows(ApproxSqlException.class, () -> ApproxClauseParser.parse(sql), sql);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
        assertEquals(line, e.line(), e.getMessage());
        assertEquals(pos, e.position(), e.getMessage());
        assertTrue(e.getMessage().contains("(line " + line + ", pos " + pos + ")"), e.getMessage());
    }
}
