package io.netapprox.spark.sql;

import io.netapprox.spark.sql.SqlLexer.Kind;
import io.netapprox.spark.sql.SqlLexer.Token;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Finds and parses the {@code WITH ERROR} clause at the end of a statement (grammar in {@link
 * ApproxClause}). The clause starts at the first {@code WITH ERROR} outside parentheses that is not
 * a common table expression named {@code error} ({@code WITH error AS (...)}, {@code WITH error
 * (cols) AS (...)}); a statement without one is not touched. Everything after {@code WITH} must be
 * the clause, up to optional semicolons.
 */
final class ApproxClauseParser {
    private final String sql;
    private final List<Token> tokens;
    private int at;

    private ApproxClauseParser(String sql, List<Token> tokens, int at) {
        this.sql = sql;
        this.tokens = tokens;
        this.at = at;
    }

    /** The clause of {@code sql}, or empty when it has none. */
    static Optional<ApproxClause> parse(String sql) {
        List<Token> tokens = SqlLexer.tokenize(sql);
        for (int i = 0; i + 2 < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.depth() == 0
                    && t.isWord("WITH")
                    && tokens.get(i + 1).isWord("ERROR")
                    && !tokens.get(i + 2).isWord("AS")
                    && !tokens.get(i + 2).isSymbol('(')) {
                return Optional.of(new ApproxClauseParser(sql, tokens, i + 1).clause(t.start()));
            }
        }
        // "WITH ERROR <number>" inside parentheses is no Spark SQL either: say what is wrong
        // instead of Spark's syntax error at WITH
        for (int i = 0; i + 2 < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.depth() > 0
                    && t.isWord("WITH")
                    && tokens.get(i + 1).isWord("ERROR")
                    && tokens.get(i + 2).kind() == SqlLexer.Kind.NUMBER) {
                throw new ApproxSqlException(
                        "WITH ERROR ends the whole statement; it cannot be inside a subquery or"
                                + " parentheses (run the approximate query as a statement of its"
                                + " own and query its result, e.g. through"
                                + " spark.sql(...).createOrReplaceTempView(...))",
                        sql,
                        t.start(),
                        4);
            }
        }
        return Optional.empty();
    }

    private ApproxClause clause(int queryEnd) {
        if (sql.substring(0, queryEnd).isBlank()) {
            throw error("WITH ERROR must follow a query (SELECT ... GROUP BY ...)", tokens.get(0));
        }
        expectWord("ERROR");
        double e = bound("ERROR", false);
        Double confidence = null;
        Long seed = null;
        while (true) {
            Token t = peek();
            if (t.isWord("CONFIDENCE")) {
                if (confidence != null) {
                    throw error("CONFIDENCE given twice", t);
                }
                next();
                confidence = bound("CONFIDENCE", true);
            } else if (t.isWord("REPEATABLE")) {
                if (seed != null) {
                    throw error("REPEATABLE given twice", t);
                }
                next();
                seed = seed();
            } else {
                break;
            }
        }
        List<ApproxClause.GroupBound> groups = new ArrayList<>();
        while (peek().isSymbol(',')) {
            next();
            Token start = peek();
            expectWord("ERROR");
            double ge = bound("ERROR", false);
            Token t = peek();
            if (t.isWord("CONFIDENCE") || t.isWord("REPEATABLE")) {
                throw error(
                        t.text().toUpperCase()
                                + " applies to the whole query: write it after the first ERROR",
                        t);
            }
            expectWord("FOR");
            List<ApproxClause.ColumnValue> values = new ArrayList<>();
            values.add(columnValue());
            while (peek().isWord("AND")) {
                next();
                values.add(columnValue());
            }
            Token last = tokens.get(at - 1);
            groups.add(
                    new ApproxClause.GroupBound(
                            ge,
                            values,
                            start.start(),
                            last.start() + last.text().length() - start.start()));
        }
        while (peek().isSymbol(';')) {
            next();
        }
        Token end = peek();
        if (end.kind() != Kind.END) {
            String expected =
                    groups.isEmpty()
                            ? "CONFIDENCE, REPEATABLE, ',' (a per-group ERROR ... FOR ...) or the end of"
                                    + " the statement"
                            : "',' (another per-group ERROR ... FOR ...), AND or the end of the"
                                    + " statement";
            throw error(
                    "expected "
                            + expected
                            + ", found "
                            + end.shown()
                            + " (the clause ends the statement: ORDER BY, LIMIT and other"
                            + " clauses go before it or are not supported)",
                    end);
        }
        return new ApproxClause(e, confidence, seed, List.copyOf(groups), queryEnd);
    }

    /** A number in (0, 1), or a percentage {@code 5%} (confidence: {@code 95%}). */
    private double bound(String what, boolean confidence) {
        Token t = next();
        if (t.kind() != Kind.NUMBER) {
            throw error(
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
            throw error(
                    "expected a plain decimal number after " + what + ", found " + t.shown(), t);
        }
        if (peek().isSymbol('%')) {
            next();
            v /= 100;
        }
        if (!(v > 0 && v < 1)) {
            throw error(
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

    private long seed() {
        expectSymbol('(', "after REPEATABLE");
        Token t = next();
        long s;
        try {
            if (t.kind() != Kind.NUMBER) {
                throw new NumberFormatException();
            }
            s = Long.parseLong(t.text());
        } catch (NumberFormatException ex) {
            throw error("expected an integer seed in REPEATABLE (...), found " + t.shown(), t);
        }
        expectSymbol(')', "after the REPEATABLE seed");
        return s;
    }

    private ApproxClause.ColumnValue columnValue() {
        Token col = next();
        if (col.kind() != Kind.WORD && col.kind() != Kind.QUOTED_IDENTIFIER) {
            throw error("expected a GROUP BY column name after FOR/AND, found " + col.shown(), col);
        }
        expectSymbol('=', "after " + col.text());
        Token v = next();
        String sign = "";
        if (v.isSymbol('-') || v.isSymbol('+')) {
            sign = v.text().equals("-") ? "-" : "";
            v = next();
            if (v.kind() != Kind.NUMBER) {
                throw error("expected a number after the sign, found " + v.shown(), v);
            }
        }
        String value;
        if (v.kind() == Kind.NUMBER || v.kind() == Kind.STRING) {
            value = sign + v.value();
        } else if (v.isWord("TRUE") || v.isWord("FALSE")) {
            value = v.text().toLowerCase(java.util.Locale.ROOT);
        } else if (v.isWord("NULL")) {
            throw error(
                    "a per-group bound cannot name the NULL group (rows with a NULL group are"
                            + " skipped)",
                    v);
        } else {
            throw error(
                    "expected a literal value (number, 'string', true or false) for "
                            + col.value()
                            + ", found "
                            + v.shown(),
                    v);
        }
        return new ApproxClause.ColumnValue(col.value(), value, col.start());
    }

    private Token peek() {
        return tokens.get(at);
    }

    private Token next() {
        Token t = tokens.get(at);
        if (t.kind() != Kind.END) {
            at++;
        }
        return t;
    }

    private void expectWord(String w) {
        Token t = next();
        if (!t.isWord(w)) {
            throw error("expected " + w + ", found " + t.shown(), t);
        }
    }

    private void expectSymbol(char c, String where) {
        Token t = next();
        if (!t.isSymbol(c)) {
            throw error("expected '" + c + "' " + where + ", found " + t.shown(), t);
        }
    }

    private ApproxSqlException error(String problem, Token t) {
        return new ApproxSqlException(problem, sql, t.start(), Math.max(1, t.text().length()));
    }
}
