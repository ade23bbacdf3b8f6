package io.netapprox.core.sql;

/**
 * The SQL dialect a {@code WITH ERROR} statement is written in: how {@link SqlLexer} splits it and
 * which parts of the clause grammar ({@link ApproxClause}) the framework runs.
 */
public enum SqlDialect {
    /**
     * Spark SQL: {@code '..'} and {@code ".."} strings with backslash escapes, raw {@code r'..'}
     * strings, nested {@code /* *}{@code /} comments, typed numbers ({@code 5L}, {@code 1.5BD});
     * the whole clause grammar (CONFIDENCE, REPEATABLE, per-group bounds).
     */
    SPARK(
            true,
            " (run the approximate query as a statement of its own and query its result, e.g."
                    + " through spark.sql(...).createOrReplaceTempView(...))"),
    /**
     * Flink SQL (Calcite with back-tick quoting): {@code '..'} and {@code ".."} strings where a
     * doubled quote escapes, flat comments, {@code $} inside names; the clause is {@code ERROR e
     * [CONFIDENCE c]}.
     */
    FLINK(false, "");

    private final boolean fullClause;
    private final String nestedHint;

    SqlDialect(boolean fullClause, String nestedHint) {
        this.fullClause = fullClause;
        this.nestedHint = nestedHint;
    }

    /** Whether the framework runs REPEATABLE (seed) and per-group bounds. */
    public boolean fullClause() {
        return fullClause;
    }

    /** What the error for a clause inside parentheses adds (how to write it instead). */
    String nestedHint() {
        return nestedHint;
    }

    /** How error messages name the dialect. */
    String shown() {
        return this == SPARK ? "Spark SQL" : "Flink SQL";
    }
}
