package io.netapprox.flink.sql;

/**
 * An approximate Flink SQL statement that cannot run: a syntax error in the {@code WITH ERROR}
 * clause, or a part of the query that has no approximate counterpart. The message names the
 * problem, the line and position (0-based within the line) and shows the statement with the place
 * marked, in the form of approx-spark's SQL errors:
 *
 * <pre>
 * WITH ERROR: CONFIDENCE must be in (0, 1) or (0%, 100%), got 1.5 (line 1, pos 142)
 *
 * == SQL ==
 * SELECT window_start, zone, AVG(fare) FROM TABLE(...) GROUP BY ... WITH ERROR 0.05 CONFIDENCE 1.5
 * ----------------------------------------------------------------------------------------------^^^
 * </pre>
 */
public final class ApproxSqlException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    private final int line;
    private final int position;

    ApproxSqlException(String problem, String sql, int offset, int length) {
        super(format(problem, sql, offset, length));
        int[] lp = lineAndPosition(sql, offset);
        this.line = lp[0];
        this.position = lp[1];
    }

    /** A problem with no place in the text (e.g. the table has no watermark). */
    ApproxSqlException(String problem) {
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
