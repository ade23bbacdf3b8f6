package io.netapprox.core.sql;

/**
 * A query with a {@code WITH ERROR} clause that cannot run: a syntax error in the clause, or a part
 * of the query that has no approximate counterpart (Spark SQL and Flink SQL alike). The message
 * names the problem, the line and position (0-based within the line, as in Spark's ParseException)
 * and shows the statement with the place marked:
 *
 * <pre>
 * WITH ERROR: expected a number after ERROR, found 'abc' (line 1, pos 63)
 *
 * == SQL ==
 * SELECT hour, avg(distance) FROM trips GROUP BY hour WITH ERROR abc
 * ---------------------------------------------------------------^^^
 * </pre>
 */
public final class ApproxSqlException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final int line;
    private final int position;

    /** A problem at {@code offset} (marked for {@code length} characters) of {@code sql}. */
    public ApproxSqlException(String problem, String sql, int offset, int length) {
        super(format(problem, sql, offset, length));
        int[] lp = lineAndPosition(sql, offset);
        this.line = lp[0];
        this.position = lp[1];
    }

    /** A problem with no place in the text (e.g. a Flink table without a watermark). */
    public ApproxSqlException(String problem) {
        super("WITH ERROR: " + problem);
        this.line = -1;
        this.position = -1;
    }

    /** 1-based line of the problem, or -1. */
    public int line() {
        return line;
    }

    /** 0-based position within that line, or -1. */
    public int position() {
        return position;
    }

    private static int[] lineAndPosition(String sql, int offset) {
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < Math.min(offset, sql.length()); i++) {
            if (sql.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new int[] {line, offset - lineStart};
    }

    private static String format(String problem, String sql, int offset, int length) {
        int[] lp = lineAndPosition(sql, offset);
        StringBuilder b = new StringBuilder("WITH ERROR: ").append(problem);
        b.append(" (line ").append(lp[0]).append(", pos ").append(lp[1]).append(")\n\n== SQL ==\n");
        String[] lines = sql.split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            b.append(lines[i]).append('\n');
            if (i == lp[0] - 1) {
                b.append("-".repeat(lp[1])).append("^".repeat(Math.max(1, length))).append('\n');
            }
        }
        return b.toString();
    }
}
