package io.netapprox.flink.sql;

import io.netapprox.flink.sql.SqlTokens.Kind;
import io.netapprox.flink.sql.SqlTokens.Token;
import io.netapprox.flink.sql.WindowQuery.Item;
import io.netapprox.flink.sql.WindowQuery.ItemKind;
import io.netapprox.flink.sql.WindowQuery.Window;
import io.netapprox.flink.sql.WindowQuery.WindowKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Reads an approximate window aggregation ({@link WindowQuery}): finds the {@code WITH ERROR}
 * clause that ends the statement (the grammar of approx-spark's clause: {@code WITH ERROR e
 * [CONFIDENCE c]}, numbers in (0, 1) or percentages) and reads the shape of the query before it.
 * Flink's own planner validates that query (names, types, the window function's arguments); this
 * parser only takes it apart and refuses, naming the clause, whatever has no approximate
 * counterpart. A statement without the clause is not touched.
 */
final class WindowQueryParser {
    private static final Set<String> WINDOW_COLUMNS = Set.of("window_start", "window_end");

    private final String sql;
    private final List<Token> tokens;
    private int at;

    private WindowQueryParser(String sql, List<Token> tokens) {
        this.sql = sql;
        this.tokens = tokens;
    }

    /** The query of {@code sql}, or empty when it has no {@code WITH ERROR} clause. */
    static Optional<WindowQuery> parse(String sql) {
        List<Token> tokens = SqlTokens.tokenize(sql);
        WindowQueryParser p = new WindowQueryParser(sql, tokens);
        for (int i = 0; i + 2 < tokens.size(); i++) {
            Token t = tokens.get(i);
            if (t.isWord("WITH")
                    && tokens.get(i + 1).isWord("ERROR")
                    && !tokens.get(i + 2).isWord("AS")
                    && !tokens.get(i + 2).isSymbol('(')) {
                if (t.depth() > 0) {
                    throw p.error(
                            "WITH ERROR ends the whole statement; it cannot be inside a subquery"
                                    + " or parentheses",
                            t);
                }
                return Optional.of(p.query(i));
            }
        }
        return Optional.empty();
    }

    private WindowQuery query(int withAt) {
        // the clause first: its errors are about the clause, whatever the query is
        at = withAt + 2;
        double errorBound = bound("ERROR", false);
        Double confidence = null;
        if (peek().isWord("CONFIDENCE")) {
            next();
            confidence = bound("CONFIDENCE", true);
        }
        while (peek().isSymbol(';')) {
            next();
        }
        Token end = peek();
        if (end.kind() != Kind.END) {
            throw error(clauseEndProblem(end), end);
        }
        Token with = tokens.get(withAt);
        String query = sql.substring(0, with.start());
        if (query.isBlank()) {
            throw error("WITH ERROR must follow a query (SELECT ... GROUP BY ...)", with);
        }
        // then the query, which ends where WITH starts
        tokens.set(withAt, new Token(Kind.END, "", "", with.start(), 0));
        at = 0;
        return select(query, errorBound, confidence);
    }

    private static String clauseEndProblem(Token t) {
        if (t.isWord("CONFIDENCE")) {
            return "CONFIDENCE given twice";
        }
        if (t.isSymbol(',')) {
            return "per-group bounds (', ERROR e FOR column = value') are not supported in Flink SQL"
                    + " yet; use the DataStream API's errorBound(group, e)";
        }
        if (t.isWord("REPEATABLE") || t.isWord("WITHIN") || t.isWord("BEHAVIOR")) {
            return t.text().toUpperCase(Locale.ROOT) + " is not supported in Flink SQL";
        }
        return "expected CONFIDENCE or the end of the statement, found "
                + t.shown()
                + " (the clause ends the statement: ORDER BY, LIMIT and other clauses go before"
                + " it or are not supported)";
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
        double v = Double.parseDouble(t.text());
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

    private WindowQuery select(String query, double errorBound, Double confidence) {
        expectWord("SELECT", "an approximate query is a SELECT");
        if (peek().isWord("DISTINCT") || peek().isWord("ALL")) {
            throw error("SELECT " + peek().text() + " is not supported", peek());
        }
        List<Token> itemStarts = new ArrayList<>();
        List<List<Token>> itemTokens = new ArrayList<>();
        while (true) {
            itemStarts.add(peek());
            List<Token> item = new ArrayList<>();
            while (!(peek().depth() == 0
                    && (peek().isSymbol(',') || peek().isWord("FROM") || isEnd(peek())))) {
                item.add(next());
            }
            if (item.isEmpty()) {
                throw error("expected a SELECT item, found " + peek().shown(), peek());
            }
            itemTokens.add(item);
            if (!peek().isSymbol(',')) {
                break;
            }
            next();
        }
        expectWord(
                "FROM",
                "an approximate query reads a window table function, e.g. FROM TABLE(TUMBLE(TABLE"
                        + " rides, DESCRIPTOR(ts), INTERVAL '1' MINUTE))");
        Window window = window();
        String alias = null;
        if (peek().isWord("AS")) {
            next();
            alias = identifier("after AS").value();
        } else if (peek().isIdentifier() && !isKeyword(peek())) {
            alias = next().value();
        }
        if (peek().isSymbol(',') || isJoin(peek())) {
            throw error(
                    "joins are not supported: the approximate query reads one window table",
                    peek());
        }
        String where = null;
        if (peek().isWord("WHERE")) {
            Token w = next();
            int start = peek().start();
            while (!(peek().depth() == 0 && peek().isWord("GROUP")) && !isEnd(peek())) {
                Token t = next();
                if (t.isIdentifier()
                        && (WINDOW_COLUMNS.contains(t.value())
                                || t.value().equals("window_time"))) {
                    throw error(
                            "WHERE cannot use the window columns: the approximate query filters"
                                    + " the rows before they are windowed",
                            t);
                }
            }
            where = sql.substring(start, peek().start()).strip();
            if (where.isEmpty()) {
                throw error("expected a condition after WHERE", w);
            }
        }
        Token group = peek();
        if (!group.isWord("GROUP")) {
            throw error(
                    "a window aggregation needs GROUP BY window_start, window_end [, columns], found "
                            + group.shown(),
                    group);
        }
        next();
        expectWord("BY", "after GROUP");
        List<String> groupColumns = new ArrayList<>();
        boolean start = false;
        boolean end = false;
        while (true) {
            Token t = peek();
            if (t.isWord("GROUPING") || t.isWord("ROLLUP") || t.isWord("CUBE")) {
                throw error(t.text() + " is not supported: group by columns", t);
            }
            String column = columnRef(alias, "a GROUP BY column");
            if (peek().isSymbol('(')
                    || (!peek().isSymbol(',') && !isEnd(peek()) && !isKeyword(peek()))) {
                throw error("GROUP BY takes column names only, found " + peek().shown(), peek());
            }
            if (column.equals("window_start")) {
                start = true;
            } else if (column.equals("window_end")) {
                end = true;
            } else if (column.equals("window_time")) {
                throw error(
                        "GROUP BY window_time is not supported: group by window_start, window_end",
                        t);
            } else if (!groupColumns.contains(column)) {
                groupColumns.add(column);
            }
            if (!peek().isSymbol(',')) {
                break;
            }
            next();
        }
        if (!start || !end) {
            throw error(
                    "a window aggregation groups by both window_start and window_end (GROUP BY"
                            + " window_start, window_end [, columns])",
                    group);
        }
        Token rest = peek();
        if (!isEnd(rest)) {
            throw error(
                    rest.text().toUpperCase(Locale.ROOT)
                            + " is not supported in an approximate query (it ends with GROUP BY ..."
                            + " WITH ERROR ...)",
                    rest);
        }
        List<Item> items = new ArrayList<>();
        for (int i = 0; i < itemTokens.size(); i++) {
            items.add(item(itemTokens.get(i), alias, groupColumns));
        }
        if (items.stream().noneMatch(Item::isAggregate)) {
            throw error(
                    "an approximate query needs an aggregate (AVG, SUM, COUNT(*) or PERCENTILE)",
                    itemStarts.get(0));
        }
        return new WindowQuery(
                query,
                errorBound,
                confidence,
                window,
                alias,
                where,
                List.copyOf(items),
                List.copyOf(groupColumns));
    }

    /**
     * {@code TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))} or HOP(.., slide, size ..).
     */
    private Window window() {
        Token table = peek();
        if (!table.isWord("TABLE")) {
            throw error(
                    "not a window query: FROM must be a window table function, e.g. FROM"
                            + " TABLE(TUMBLE(TABLE rides, DESCRIPTOR(ts), INTERVAL '1' MINUTE)),"
                            + " found "
                            + table.shown(),
                    table);
        }
        next();
        expectSymbol('(', "after TABLE");
        Token fn = next();
        WindowKind kind;
        if (fn.isWord("TUMBLE")) {
            kind = WindowKind.TUMBLE;
        } else if (fn.isWord("HOP")) {
            kind = WindowKind.HOP;
        } else if (fn.isWord("CUMULATE") || fn.isWord("SESSION")) {
            throw error(
                    fn.text().toUpperCase(Locale.ROOT)
                            + " windows are not supported: a sender cannot know such a window's"
                            + " extent when it samples; use TUMBLE or HOP",
                    fn);
        } else {
            throw error("expected TUMBLE or HOP, found " + fn.shown(), fn);
        }
        expectSymbol('(', "after " + fn.text());
        if (tokens.get(at + 1).isSymbol('=')) {
            throw error(
                    "named arguments are not supported: write "
                            + kind
                            + "(TABLE t, DESCRIPTOR(time column), "
                            + (kind == WindowKind.HOP ? "slide, size" : "size")
                            + ")",
                    peek());
        }
        expectWord("TABLE", "as the first argument of " + kind + " (TABLE t)");
        Token pathStart = peek();
        identifier("after TABLE (the table's name)");
        while (peek().isSymbol('.')) {
            next();
            identifier("in the table's path");
        }
        String path = sql.substring(pathStart.start(), tokens.get(at - 1).end());
        expectSymbol(',', "after the table");
        expectWord("DESCRIPTOR", "(the time column: DESCRIPTOR(ts))");
        expectSymbol('(', "after DESCRIPTOR");
        String timeColumn = identifier("in DESCRIPTOR (the time column)").value();
        expectSymbol(')', "after the time column");
        List<Long> intervals = new ArrayList<>();
        while (peek().isSymbol(',')) {
            next();
            intervals.add(interval());
        }
        expectSymbol(')', "after the arguments of " + kind);
        expectSymbol(')', "after " + kind + "(...)");
        int sizes = kind == WindowKind.HOP ? 2 : 1;
        if (intervals.size() < sizes || intervals.size() > sizes + 1) {
            throw error(
                    kind
                            + " takes "
                            + (kind == WindowKind.HOP ? "a slide and a size" : "a size")
                            + " and an optional offset",
                    fn);
        }
        long size = intervals.get(sizes - 1);
        long slide = intervals.get(0);
        long offset = intervals.size() > sizes ? intervals.get(sizes) : 0;
        return new Window(kind, path, timeColumn, size, slide, offset);
    }

    /** {@code INTERVAL 'n' unit} in milliseconds (unit DAY, HOUR, MINUTE or SECOND). */
    private long interval() {
        Token start = expectWord("INTERVAL", "(a window size, e.g. INTERVAL '1' MINUTE)");
        boolean negative = false;
        if (peek().isSymbol('-')) {
            next();
            negative = true;
        }
        Token n = next();
        if (n.kind() != Kind.STRING) {
            throw error("expected a quoted number after INTERVAL, e.g. INTERVAL '10' SECOND", n);
        }
        Token unit = next();
        long unitMillis =
                switch (unit.text().toUpperCase(Locale.ROOT)) {
                    case "DAY", "DAYS" -> 86_400_000L;
                    case "HOUR", "HOURS" -> 3_600_000L;
                    case "MINUTE", "MINUTES" -> 60_000L;
                    case "SECOND", "SECONDS" -> 1_000L;
                    default -> -1;
                };
        if (unitMillis < 0 || peek().isWord("TO") || peek().isSymbol('(')) {
            throw error(
                    "expected an interval of one unit (DAY, HOUR, MINUTE or SECOND), found "
                            + sql.substring(start.start(), peek().end()).strip(),
                    unit);
        }
        double v;
        try {
            v = Double.parseDouble(n.value().strip());
        } catch (NumberFormatException e) {
            throw error("expected a number in the interval, found " + n.shown(), n);
        }
        long millis = Math.round(v * unitMillis);
        return negative ? -millis : millis;
    }

    /** A SELECT item: a column (window_start, window_end, a group column) or an aggregate. */
    private Item item(List<Token> item, String alias, List<String> groupColumns) {
        // the item's tokens, read as a statement of their own
        List<Token> own = new ArrayList<>(item);
        own.add(new Token(Kind.END, "", "", item.get(item.size() - 1).end(), 0));
        return new WindowQueryParser(sql, own).itemOf(item.get(0), alias, groupColumns);
    }

    private Item itemOf(Token first, String alias, List<String> groupColumns) {
        Item item;
        if (first.kind() == Kind.WORD && tokens.get(1).isSymbol('(')) {
            item = aggregate(first, alias);
        } else {
            String column = columnRef(alias, "a SELECT item");
            if (column.equals("window_start")) {
                item = new Item(ItemKind.WINDOW_START, null, 0, first.start());
            } else if (column.equals("window_end")) {
                item = new Item(ItemKind.WINDOW_END, null, 0, first.start());
            } else if (column.equals("window_time")) {
                throw error(
                        "window_time is not supported: select window_start or window_end", first);
            } else if (groupColumns.contains(column)) {
                item = new Item(ItemKind.GROUP_COLUMN, column, 0, first.start());
            } else {
                throw error(
                        column
                                + " is neither a GROUP BY column nor window_start or window_end nor"
                                + " an aggregate",
                        first);
            }
        }
        if (peek().isWord("AS")) {
            next();
            identifier("after AS");
        } else if (peek().isIdentifier()) {
            next();
        }
        if (!isEnd(peek())) {
            throw error(
                    "a SELECT item of an approximate query is a column or one aggregate of a"
                            + " column (AVG(fare), SUM(fare), COUNT(*), PERCENTILE(fare, 0.9)),"
                            + " found "
                            + peek().shown(),
                    peek());
        }
        return item;
    }

    private Item aggregate(Token fn, String alias) {
        next();
        next(); // (
        String name = fn.text().toUpperCase(Locale.ROOT);
        if (peek().isWord("DISTINCT") || peek().isWord("ALL")) {
            throw error(name + "(" + peek().text() + " ...) is not supported", peek());
        }
        Item item;
        switch (name) {
            case "COUNT" -> {
                if (!peek().isSymbol('*')) {
                    throw error(
                            "only COUNT(*) is supported (COUNT(column) skips NULL values, which"
                                    + " the approximate query does not)",
                            peek());
                }
                next();
                item = new Item(ItemKind.COUNT, null, 0, fn.start());
            }
            case "AVG", "SUM" -> {
                String column = aggregatedColumn(name, alias);
                item =
                        new Item(
                                name.equals("AVG") ? ItemKind.AVG : ItemKind.SUM,
                                column,
                                0,
                                fn.start());
            }
            case "PERCENTILE" -> {
                String column = aggregatedColumn(name, alias);
                expectSymbol(',', "after PERCENTILE's column (PERCENTILE(fare, 0.9))");
                Token p = next();
                double q = p.kind() == Kind.NUMBER ? Double.parseDouble(p.text()) : Double.NaN;
                if (!(q > 0 && q < 1)) {
                    throw error(
                            "PERCENTILE's percentage must be a number in (0, 1), found "
                                    + p.shown(),
                            p);
                }
                item = new Item(ItemKind.PERCENTILE, column, q, fn.start());
            }
            default ->
                    throw error(
                            "unsupported aggregate "
                                    + name
                                    + ": an approximate query answers AVG, SUM, COUNT(*) and"
                                    + " PERCENTILE(column, p)",
                            fn);
        }
        expectSymbol(')', "after the arguments of " + name);
        return item;
    }

    private String aggregatedColumn(String fn, String alias) {
        Token t = peek();
        String column = columnRef(alias, "a column in " + fn + "(...)");
        if (!peek().isSymbol(')') && !peek().isSymbol(',')) {
            throw error(
                    fn
                            + " takes a column of the table (an expression is not supported), found "
                            + t.shown(),
                    t);
        }
        return column;
    }

    /** {@code column} or {@code alias.column}. */
    private String columnRef(String alias, String what) {
        Token t = identifier("(" + what + ")");
        if (peek().isSymbol('.')) {
            if (alias == null || !alias.equals(t.value())) {
                throw error("expected " + what + ", found " + t.shown(), t);
            }
            next();
            t = identifier("after " + alias + ".");
        }
        return t.value();
    }

    private Token identifier(String where) {
        Token t = next();
        if (!t.isIdentifier()) {
            throw error("expected a name " + where + ", found " + t.shown(), t);
        }
        return t;
    }

    private static boolean isEnd(Token t) {
        return t.kind() == Kind.END;
    }

    private static boolean isJoin(Token t) {
        return t.isWord("JOIN")
                || t.isWord("LEFT")
                || t.isWord("RIGHT")
                || t.isWord("INNER")
                || t.isWord("FULL")
                || t.isWord("CROSS")
                || t.isWord("NATURAL")
                || t.isWord("LATERAL");
    }

    private static boolean isKeyword(Token t) {
        return t.kind() == Kind.WORD
                && (t.isWord("WHERE")
                        || t.isWord("GROUP")
                        || t.isWord("HAVING")
                        || t.isWord("ORDER")
                        || t.isWord("LIMIT")
                        || t.isWord("WINDOW")
                        || t.isWord("UNION")
                        || t.isWord("QUALIFY")
                        || isJoin(t));
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

    private Token expectWord(String w, String why) {
        Token t = next();
        if (!t.isWord(w)) {
            throw error("expected " + w + " " + why + ", found " + t.shown(), t);
        }
        return t;
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
