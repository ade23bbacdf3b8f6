package io.netapprox.core.sql;

import io.netapprox.core.sql.SqlLexer.Kind;
import io.netapprox.core.sql.SqlLexer.Token;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Finds and parses the {@code WITH ERROR} clause at the end of a statement (grammar in {@link
 * ApproxClause}), for Spark SQL and Flink SQL alike. The clause starts at the first {@code WITH
 * ERROR} outside parentheses that is not a common table expression named {@code error} ({@code WITH
 * error AS (...)}, {@code WITH error (cols) AS (...)}), or at a time bound alone ({@code WITHIN 2
 * SECONDS ...}, planned at {@link ApproxClause#DEFAULT_ERROR_BOUND}); a statement without either is
 * not touched. Everything after {@code WITH} must be the clause, up to optional semicolons. Parts
 * of the grammar a dialect does not run (REPEATABLE and per-group bounds in Flink) are refused by
 * name.
 */
public final class ApproxClauseParser {
    private final SqlDialect dialect;
    private final TokenCursor in;

    private ApproxClauseParser(String sql, List<Token> tokens, int at, SqlDialect dialect) {
        this.dialect = dialect;
        this.in = new TokenCursor(sql, tokens, at);
    }

    /** The clause of {@code sql}, or empty when it has none. */
    public static Optional<ApproxClause> parse(String sql, SqlDialect dialect) {
        List<Token> tokens = SqlLexer.tokenize(sql, dialect);
        for (int i = 0; i + 2 < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.depth() == 0 && startsClause(tokens, i)) {
                return Optional.of(new ApproxClauseParser(sql, tokens, i + 1, dialect).clause(t));
            }
        }
        // "WITH ERROR <number>" inside parentheses is no SQL of either framework: say what is
        // wrong instead of the framework's syntax error at WITH
        for (int i = 0; i + 2 < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.depth() > 0
                    && startsClause(tokens, i)
                    && (t.isWord("WITHIN") || tokens.get(i + 2).kind() == Kind.NUMBER)) {
                throw new ApproxSqlException(
                        (t.isWord("WITHIN") ? "WITHIN" : "WITH ERROR")
                                + " ends the whole statement; it cannot be inside a subquery or"
                                + " parentheses"
                                + dialect.nestedHint(),
                        sql,
                        t.start(),
                        t.text().length());
            }
        }
        return Optional.empty();
    }

    /**
     * {@code WITH ERROR} (not a CTE named error), or a time bound alone: {@code WITHIN} and a
     * number ({@code WITHIN GROUP (ORDER BY ...)} of an ordered-set aggregate is SQL, not the
     * clause).
     */
    private static boolean startsClause(List<Token> tokens, int i) {
        Token t = tokens.get(i);
        if (t.isWord("WITHIN")) {
            return tokens.get(i + 1).kind() == Kind.NUMBER;
        }
        return t.isWord("WITH")
                && tokens.get(i + 1).isWord("ERROR")
                && !tokens.get(i + 2).isWord("AS")
                && !tokens.get(i + 2).isSymbol('(');
    }

    private ApproxClause clause(Token start) {
        boolean timeBoundAlone = start.isWord("WITHIN");
        String name = timeBoundAlone ? "WITHIN" : "WITH ERROR";
        if (in.sql().substring(0, start.start()).isBlank()) {
            throw in.error(name + " must follow a query (SELECT ... GROUP BY ...)", start);
        }
        Duration within = null;
        double e;
        if (timeBoundAlone) {
            if (!dialect.fullClause()) {
                throw in.error("WITHIN is not supported in " + dialect.shown(), start);
            }
            // a time bound alone: the best answer by the deadline, planned at the default bound
            within = within();
            e = ApproxClause.DEFAULT_ERROR_BOUND;
        } else {
            in.expectWord("ERROR", "");
            e = bound("ERROR", false);
        }
        Double confidence = null;
        Long seed = null;
        ApproxClause.Behavior behavior = null;
        while (true) {
            Token t = in.peek();
            if (t.isWord("CONFIDENCE")) {
                if (confidence != null) {
                    throw in.error("CONFIDENCE given twice", t);
                }
                in.next();
                confidence = bound("CONFIDENCE", true);
            } else if (t.isWord("REPEATABLE") && dialect.fullClause()) {
                if (seed != null) {
                    throw in.error("REPEATABLE given twice", t);
                }
                in.next();
                seed = seed();
            } else if (t.isWord("WITHIN") && dialect.fullClause()) {
                if (within != null) {
                    throw in.error("WITHIN given twice", t);
                }
                in.next();
                within = within();
            } else if (t.isWord("BEHAVIOR") && dialect.fullClause()) {
                if (behavior != null) {
                    throw in.error("BEHAVIOR given twice", t);
                }
                in.next();
                behavior = behavior();
            } else {
                break;
            }
        }
        List<ApproxClause.GroupBound> groups = new ArrayList<>();
        while (in.peek().isSymbol(',') && dialect.fullClause()) {
            groups.add(groupBound());
        }
        while (in.peek().isSymbol(';')) {
            in.next();
        }
        Token end = in.peek();
        if (!end.isEnd()) {
            throw in.error(endProblem(end, groups.isEmpty()), end);
        }
        return new ApproxClause(
                e, confidence, seed, List.copyOf(groups), within, behavior, start.start());
    }

    private String endProblem(Token t, boolean noGroupBounds) {
        if (!dialect.fullClause()) {
            if (t.isSymbol(',')) {
                return "per-group bounds (', ERROR e FOR column = value') are not supported in "
                        + dialect.shown()
                        + " yet; use the DataStream API's errorBound(group, e)";
            }
            if (t.isWord("REPEATABLE") || t.isWord("WITHIN") || t.isWord("BEHAVIOR")) {
                return t.text().toUpperCase(Locale.ROOT)
                        + " is not supported in "
                        + dialect.shown();
            }
        }
        String expected =
                !dialect.fullClause()
                        ? "CONFIDENCE or the end of the statement"
                        : noGroupBounds
                                ? "CONFIDENCE, REPEATABLE, WITHIN, BEHAVIOR, ',' (a per-group"
                                        + " ERROR ... FOR ...) or the end of the statement"
                                : "',' (another per-group ERROR ... FOR ...), AND or the end of the"
                                        + " statement";
        return "expected "
                + expected
                + ", found "
                + t.shown()
                + " (the clause ends the statement: ORDER BY, LIMIT and other clauses go before it"
                + " or are not supported)";
    }

    /** {@code , ERROR e FOR col = value [AND col = value]...}. */
    private ApproxClause.GroupBound groupBound() {
        in.next();
        Token start = in.peek();
        in.expectWord("ERROR", "");
        double ge = bound("ERROR", false);
        Token t = in.peek();
        if (t.isWord("CONFIDENCE")
                || t.isWord("REPEATABLE")
                || t.isWord("WITHIN")
                || t.isWord("BEHAVIOR")) {
            throw in.error(
                    t.text().toUpperCase(Locale.ROOT)
                            + " applies to the whole query: write it after the first ERROR",
                    t);
        }
        in.expectWord("FOR", "");
        List<ApproxClause.ColumnValue> values = new ArrayList<>();
        values.add(columnValue());
        while (in.peek().isWord("AND")) {
            in.next();
            values.add(columnValue());
        }
        Token last = in.previous();
        return new ApproxClause.GroupBound(ge, values, start.start(), last.end() - start.start());
    }

    /** A number in (0, 1), or a percentage {@code 5%} (confidence: {@code 95%}). */
    private double bound(String what, boolean confidence) {
        Token t = in.next();
        if (t.kind() != Kind.NUMBER) {
            throw in.error(
                    "expected a number after "
                            + what
                            + (confidence ? " (e.g. 0.95 or 95%)" : " (e.g. 0.05 or 5%)")
                            + ", found "
                            + t.shown(),
                    t);
        }
        double v;
        try {
            v = Double.parseDouble(t.text());
        } catch (NumberFormatException ex) {
            throw in.error(
                    "expected a plain decimal number after " + what + ", found " + t.shown(), t);
        }
        if (in.peek().isSymbol('%')) {
            in.next();
            v /= 100;
        }
        if (!(v > 0 && v < 1)) {
            throw in.error(
                    what
                            + (confidence
                                    ? " must be in (0, 1) or (0%, 100%)"
                                    : " must be a relative bound in (0, 1) or (0%, 100%)")
                            + ", got "
                            + t.text(),
                    t);
        }
        return v;
    }

    /** Longest time bound accepted: a day (a longer one is surely a mistake in the unit). */
    static final Duration MAX_WITHIN = Duration.ofDays(1);

    /** {@code n SECONDS|SECOND|MILLISECONDS|MILLISECOND}, n > 0 and at most a day. */
    private Duration within() {
        Token t = in.next();
        if (t.kind() != Kind.NUMBER) {
            throw in.error(
                    "expected a number after WITHIN (e.g. WITHIN 2 SECONDS), found " + t.shown(),
                    t);
        }
        double v;
        try {
            v = Double.parseDouble(t.text());
        } catch (NumberFormatException ex) {
            throw in.error("expected a plain decimal number after WITHIN, found " + t.shown(), t);
        }
        Token unit = in.next();
        double nanosPerUnit;
        if (unit.isWord("SECONDS") || unit.isWord("SECOND")) {
            nanosPerUnit = 1e9;
        } else if (unit.isWord("MILLISECONDS") || unit.isWord("MILLISECOND")) {
            nanosPerUnit = 1e6;
        } else {
            throw in.error(
                    "expected SECONDS or MILLISECONDS after WITHIN "
                            + t.text()
                            + ", found "
                            + unit.shown(),
                    unit);
        }
        double nanos = v * nanosPerUnit;
        if (!(nanos >= 1e6 && nanos <= MAX_WITHIN.toNanos())) {
            throw in.error(
                    "WITHIN must be between 1 millisecond and 1 day, got "
                            + t.text()
                            + " "
                            + unit.text(),
                    t);
        }
        return Duration.ofNanos((long) nanos);
    }

    /** {@code ANSWER} or {@code FAIL}. */
    private ApproxClause.Behavior behavior() {
        Token t = in.next();
        if (t.isWord("ANSWER")) {
            return ApproxClause.Behavior.ANSWER;
        }
        if (t.isWord("FAIL")) {
            return ApproxClause.Behavior.FAIL;
        }
        throw in.error(
                "expected ANSWER (answer every group and flag the ones that missed their bound) or"
                        + " FAIL (fail naming them) after BEHAVIOR, found "
                        + t.shown(),
                t);
    }

    private long seed() {
        in.expectSymbol('(', "after REPEATABLE");
        Token t = in.next();
        long s;
        try {
            if (t.kind() != Kind.NUMBER) {
                throw new NumberFormatException();
            }
            s = Long.parseLong(t.text());
        } catch (NumberFormatException ex) {
            throw in.error("expected an integer seed in REPEATABLE (...), found " + t.shown(), t);
        }
        in.expectSymbol(')', "after the REPEATABLE seed");
        return s;
    }

    private ApproxClause.ColumnValue columnValue() {
        Token col = in.next();
        if (!col.isIdentifier()) {
            throw in.error(
                    "expected a GROUP BY column name after FOR/AND, found " + col.shown(), col);
        }
        in.expectSymbol('=', "after " + col.text());
        Token v = in.next();
        String sign = "";
        if (v.isSymbol('-') || v.isSymbol('+')) {
            sign = v.text().equals("-") ? "-" : "";
            v = in.next();
            if (v.kind() != Kind.NUMBER) {
                throw in.error("expected a number after the sign, found " + v.shown(), v);
            }
        }
        String value;
        if (v.kind() == Kind.NUMBER || v.kind() == Kind.STRING) {
            value = sign + v.value();
        } else if (v.isWord("TRUE") || v.isWord("FALSE")) {
            value = v.text().toLowerCase(Locale.ROOT);
        } else if (v.isWord("NULL")) {
            throw in.error(
                    "a per-group bound cannot name the NULL group (rows with a NULL group are"
                            + " skipped)",
                    v);
        } else {
            throw in.error(
                    "expected a literal value (number, 'string', true or false) for "
                            + col.value()
                            + ", found "
                            + v.shown(),
                    v);
        }
        return new ApproxClause.ColumnValue(col.value(), value, col.start());
    }
}
