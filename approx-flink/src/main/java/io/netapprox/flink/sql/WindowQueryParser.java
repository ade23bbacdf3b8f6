package io.netapprox.flink.sql;

import io.netapprox.core.sql.ApproxClause;
import io.netapprox.core.sql.ApproxClauseParser;
import io.netapprox.core.sql.SqlDialect;
import io.netapprox.core.sql.SqlLexer;
import io.netapprox.core.sql.SqlLexer.Kind;
import io.netapprox.core.sql.SqlLexer.Token;
import io.netapprox.core.sql.TokenCursor;
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
 * clause that ends the statement (approx-core's {@link ApproxClauseParser} in the Flink dialect:
 * {@code WITH ERROR e [CONFIDENCE c]}, numbers in (0, 1) or percentages) and reads the shape of the
 * query before it. Flink's own planner validates that query (names, types, the window function's
 * arguments); this parser only takes it apart and refuses, naming the clause, whatever has no
 * approximate counterpart. A statement without the clause is not touched.
 */
final class WindowQueryParser {
    private static final Set<String> WINDOW_COLUMNS = Set.of("window_start", "window_end");

    private final String sql;
    private final TokenCursor in;

    private WindowQueryParser(String sql, List<Token> tokens) {
        this.sql = sql;
        this.in = new TokenCursor(sql, tokens, 0);
    }

    /** The query of {@code sql}, or empty when it has no {@code WITH ERROR} clause. */
    static Optional<WindowQuery> parse(String sql) {
        // the clause first: its errors are about the clause, whatever the query is
        Optional<ApproxClause> clause = ApproxClauseParser.parse(sql, SqlDialect.FLINK);
        if (clause.isEmpty()) {
            return Optional.empty();
        }
        // then the query, which ends where WITH starts
        String query = sql.substring(0, clause.get().queryEnd());
        WindowQueryParser p =
                new WindowQueryParser(sql, SqlLexer.tokenize(query, SqlDialect.FLINK));
        return Optional.of(p.select(query, clause.get().errorBound(), clause.get().confidence()));
    }

    private WindowQuery select(String query, double errorBound, Double confidence) {
        in.expectWord("SELECT", "an approximate query is a SELECT");
        if (in.peek().isWord("DISTINCT") || in.peek().isWord("ALL")) {
            throw in.error("SELECT " + in.peek().text() + " is not supported", in.peek());
        }
        List<Token> itemStarts = new ArrayList<>();
        List<List<Token>> itemTokens = new ArrayList<>();
        while (true) {
            itemStarts.add(in.peek());
            List<Token> item = new ArrayList<>();
            while (!(in.peek().depth() == 0
                    && (in.peek().isSymbol(',')
                            || in.peek().isWord("FROM")
                            || in.peek().isEnd()))) {
                item.add(in.next());
            }
            if (item.isEmpty()) {
                throw in.error("expected a SELECT item, found " + in.peek().shown(), in.peek());
            }
            itemTokens.add(item);
            if (!in.peek().isSymbol(',')) {
                break;
            }
            in.next();
        }
        in.expectWord(
                "FROM",
                "an approximate query reads a window table function, e.g. FROM TABLE(TUMBLE(TABLE"
                        + " rides, DESCRIPTOR(ts), INTERVAL '1' MINUTE))");
        Window window = window();
        String alias = null;
        if (in.peek().isWord("AS")) {
            in.next();
            alias = identifier("after AS").value();
        } else if (in.peek().isIdentifier() && !isKeyword(in.peek())) {
            alias = in.next().value();
        }
        if (in.peek().isSymbol(',') || isJoin(in.peek())) {
            throw in.error(
                    "joins are not supported: the approximate query reads one window table",
                    in.peek());
        }
        String where = null;
        if (in.peek().isWord("WHERE")) {
            Token w = in.next();
            int start = in.peek().start();
            while (!(in.peek().depth() == 0 && in.peek().isWord("GROUP")) && !in.peek().isEnd()) {
                Token t = in.next();
                if (t.isIdentifier()
                        && (WINDOW_COLUMNS.contains(t.value())
                                || t.value().equals("window_time"))) {
                    throw in.error(
                            "WHERE cannot use the window columns: the approximate query filters"
                                    + " the rows before they are windowed",
                            t);
                }
            }
            where = sql.substring(start, in.peek().start()).strip();
            if (where.isEmpty()) {
                throw in.error("expected a condition after WHERE", w);
            }
        }
        Token group = in.peek();
        if (!group.isWord("GROUP")) {
            throw in.error(
                    "a window aggregation needs GROUP BY window_start, window_end [, columns], found "
                            + group.shown(),
                    group);
        }
        in.next();
        in.expectWord("BY", "after GROUP");
        List<String> groupColumns = new ArrayList<>();
        boolean start = false;
        boolean end = false;
        while (true) {
            Token t = in.peek();
            if (t.isWord("GROUPING") || t.isWord("ROLLUP") || t.isWord("CUBE")) {
                throw in.error(t.text() + " is not supported: group by columns", t);
            }
            String column = columnRef(alias, "a GROUP BY column");
            if (in.peek().isSymbol('(')
                    || (!in.peek().isSymbol(',') && !in.peek().isEnd() && !isKeyword(in.peek()))) {
                throw in.error(
                        "GROUP BY takes column names only, found " + in.peek().shown(), in.peek());
            }
            if (column.equals("window_start")) {
                start = true;
            } else if (column.equals("window_end")) {
                end = true;
            } else if (column.equals("window_time")) {
                throw in.error(
                        "GROUP BY window_time is not supported: group by window_start, window_end",
                        t);
            } else if (!groupColumns.contains(column)) {
                groupColumns.add(column);
            }
            if (!in.peek().isSymbol(',')) {
                break;
            }
            in.next();
        }
        if (!start || !end) {
            throw in.error(
                    "a window aggregation groups by both window_start and window_end (GROUP BY"
                            + " window_start, window_end [, columns])",
                    group);
        }
        Token rest = in.peek();
        if (!rest.isEnd()) {
            throw in.error(
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
            throw in.error(
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
        Token table = in.peek();
        if (!table.isWord("TABLE")) {
            throw in.error(
                    "not a window query: FROM must be a window table function, e.g. FROM"
                            + " TABLE(TUMBLE(TABLE rides, DESCRIPTOR(ts), INTERVAL '1' MINUTE)),"
                            + " found "
                            + table.shown(),
                    table);
        }
        in.next();
        in.expectSymbol('(', "after TABLE");
        Token fn = in.next();
        WindowKind kind;
        if (fn.isWord("TUMBLE")) {
            kind = WindowKind.TUMBLE;
        } else if (fn.isWord("HOP")) {
            kind = WindowKind.HOP;
        } else if (fn.isWord("CUMULATE") || fn.isWord("SESSION")) {
            throw in.error(
                    fn.text().toUpperCase(Locale.ROOT)
                            + " windows are not supported: a sender cannot know such a window's"
                            + " extent when it samples; use TUMBLE or HOP",
                    fn);
        } else {
            throw in.error("expected TUMBLE or HOP, found " + fn.shown(), fn);
        }
        in.expectSymbol('(', "after " + fn.text());
        if (in.peek(1).isSymbol('=')) {
            throw in.error(
                    "named arguments are not supported: write "
                            + kind
                            + "(TABLE t, DESCRIPTOR(time column), "
                            + (kind == WindowKind.HOP ? "slide, size" : "size")
                            + ")",
                    in.peek());
        }
        in.expectWord("TABLE", "as the first argument of " + kind + " (TABLE t)");
        Token pathStart = in.peek();
        identifier("after TABLE (the table's name)");
        while (in.peek().isSymbol('.')) {
            in.next();
            identifier("in the table's path");
        }
        String path = sql.substring(pathStart.start(), in.previous().end());
        in.expectSymbol(',', "after the table");
        in.expectWord("DESCRIPTOR", "(the time column: DESCRIPTOR(ts))");
        in.expectSymbol('(', "after DESCRIPTOR");
        String timeColumn = identifier("in DESCRIPTOR (the time column)").value();
        in.expectSymbol(')', "after the time column");
        List<Long> intervals = new ArrayList<>();
        while (in.peek().isSymbol(',')) {
            in.next();
            intervals.add(interval());
        }
        in.expectSymbol(')', "after the arguments of " + kind);
        in.expectSymbol(')', "after " + kind + "(...)");
        int sizes = kind == WindowKind.HOP ? 2 : 1;
        if (intervals.size() < sizes || intervals.size() > sizes + 1) {
            throw in.error(
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
        Token start = in.expectWord("INTERVAL", "(a window size, e.g. INTERVAL '1' MINUTE)");
        boolean negative = false;
        if (in.peek().isSymbol('-')) {
            in.next();
            negative = true;
        }
        Token n = in.next();
        if (n.kind() != Kind.STRING) {
            throw in.error("expected a quoted number after INTERVAL, e.g. INTERVAL '10' SECOND", n);
        }
        Token unit = in.next();
        long unitMillis =
                switch (unit.text().toUpperCase(Locale.ROOT)) {
                    case "DAY", "DAYS" -> 86_400_000L;
                    case "HOUR", "HOURS" -> 3_600_000L;
                    case "MINUTE", "MINUTES" -> 60_000L;
                    case "SECOND", "SECONDS" -> 1_000L;
                    default -> -1;
                };
        if (unitMillis < 0 || in.peek().isWord("TO") || in.peek().isSymbol('(')) {
            throw in.error(
                    "expected an interval of one unit (DAY, HOUR, MINUTE or SECOND), found "
                            + sql.substring(start.start(), in.peek().end()).strip(),
                    unit);
        }
        double v;
        try {
            v = Double.parseDouble(n.value().strip());
        } catch (NumberFormatException e) {
            throw in.error("expected a number in the interval, found " + n.shown(), n);
        }
        long millis = Math.round(v * unitMillis);
        return negative ? -millis : millis;
    }

    /** A SELECT item: a column (window_start, window_end, a group column) or an aggregate. */
    private Item item(List<Token> item, String alias, List<String> groupColumns) {
        // the item's tokens, read as a statement of their own
        List<Token> own = new ArrayList<>(item);
        own.add(Token.end(item.get(item.size() - 1).end()));
        return new WindowQueryParser(sql, own).itemOf(item.get(0), alias, groupColumns);
    }

    private Item itemOf(Token first, String alias, List<String> groupColumns) {
        Item item;
        if (first.kind() == Kind.WORD && in.peek(1).isSymbol('(')) {
            item = aggregate(first, alias);
        } else {
            String column = columnRef(alias, "a SELECT item");
            if (column.equals("window_start")) {
                item = new Item(ItemKind.WINDOW_START, null, 0, first.start());
            } else if (column.equals("window_end")) {
                item = new Item(ItemKind.WINDOW_END, null, 0, first.start());
            } else if (column.equals("window_time")) {
                throw in.error(
                        "window_time is not supported: select window_start or window_end", first);
            } else if (groupColumns.contains(column)) {
                item = new Item(ItemKind.GROUP_COLUMN, column, 0, first.start());
            } else {
                throw in.error(
                        column
                                + " is neither a GROUP BY column nor window_start or window_end nor"
                                + " an aggregate",
                        first);
            }
        }
        if (in.peek().isWord("AS")) {
            in.next();
            identifier("after AS");
        } else if (in.peek().isIdentifier()) {
            in.next();
        }
        if (!in.peek().isEnd()) {
            throw in.error(
                    "a SELECT item of an approximate query is a column or one aggregate of a"
                            + " column (AVG(fare), SUM(fare), COUNT(*), PERCENTILE(fare, 0.9)),"
                            + " found "
                            + in.peek().shown(),
                    in.peek());
        }
        return item;
    }

    private Item aggregate(Token fn, String alias) {
        in.next();
        in.next(); // (
        String name = fn.text().toUpperCase(Locale.ROOT);
        if (in.peek().isWord("DISTINCT") || in.peek().isWord("ALL")) {
            throw in.error(name + "(" + in.peek().text() + " ...) is not supported", in.peek());
        }
        Item item;
        switch (name) {
            case "COUNT" -> {
                if (!in.peek().isSymbol('*')) {
                    throw in.error(
                            "only COUNT(*) is supported (COUNT(column) skips NULL values, which"
                                    + " the approximate query does not)",
                            in.peek());
                }
                in.next();
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
                in.expectSymbol(',', "after PERCENTILE's column (PERCENTILE(fare, 0.9))");
                Token p = in.next();
                double q = p.kind() == Kind.NUMBER ? Double.parseDouble(p.text()) : Double.NaN;
                if (!(q > 0 && q < 1)) {
                    throw in.error(
                            "PERCENTILE's percentage must be a number in (0, 1), found "
                                    + p.shown(),
                            p);
                }
                item = new Item(ItemKind.PERCENTILE, column, q, fn.start());
            }
            default ->
                    throw in.error(
                            "unsupported aggregate "
                                    + name
                                    + ": an approximate query answers AVG, SUM, COUNT(*) and"
                                    + " PERCENTILE(column, p)",
                            fn);
        }
        in.expectSymbol(')', "after the arguments of " + name);
        return item;
    }

    private String aggregatedColumn(String fn, String alias) {
        Token t = in.peek();
        String column = columnRef(alias, "a column in " + fn + "(...)");
        if (!in.peek().isSymbol(')') && !in.peek().isSymbol(',')) {
            throw in.error(
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
        if (in.peek().isSymbol('.')) {
            if (alias == null || !alias.equals(t.value())) {
                throw in.error("expected " + what + ", found " + t.shown(), t);
            }
            in.next();
            t = identifier("after " + alias + ".");
        }
        return t.value();
    }

    private Token identifier(String where) {
        Token t = in.next();
        if (!t.isIdentifier()) {
            throw in.error("expected a name " + where + ", found " + t.shown(), t);
        }
        return t;
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
}
