package io.netapprox.core.sql;

import java.time.Duration;
import java.util.List;

/**
 * The parsed {@code WITH ERROR} clause of a query:
 *
 * <pre>
 * WITH ERROR 0.05 [CONFIDENCE 0.95] [REPEATABLE (42)] [WITHIN 2 SECONDS] [BEHAVIOR ANSWER|FAIL]
 *     [, ERROR 0.01 FOR hour = 17 [AND zone = 4]]...
 * WITHIN 2 SECONDS [CONFIDENCE 0.95] [REPEATABLE (42)] [BEHAVIOR ANSWER|FAIL]
 *     [, ERROR 0.01 FOR hour = 17 [AND zone = 4]]...
 * </pre>
 *
 * (the second form, a time bound alone, plans every group at {@link #DEFAULT_ERROR_BOUND}; its
 * answers at the deadline carry intervals from what arrived and say whether that bound was met)
 *
 * <p>(REPEATABLE, WITHIN, BEHAVIOR and per-group bounds only where {@link SqlDialect#fullClause()};
 * CONFIDENCE, REPEATABLE, WITHIN and BEHAVIOR in any order, each at most once).
 *
 * @param errorBound the default relative bound e_max of every group
 * @param confidence the confidence, or null for the framework's configured one
 * @param seed the seed of the sample ({@code REPEATABLE}), or null for a fresh one
 * @param groupBounds per-group bounds, in the order written
 * @param within the time bound ({@code WITHIN n SECONDS|MILLISECONDS}), or null for none
 * @param behavior what to do with groups that miss their bound, or null for the framework's
 *     configured default
 * @param queryEnd where the query text before {@code WITH} ends (the clause starts there)
 */
public record ApproxClause(
        double errorBound,
        Double confidence,
        Long seed,
        List<GroupBound> groupBounds,
        Duration within,
        Behavior behavior,
        int queryEnd) {

    /** The error bound of a query with a time bound alone ({@code ... WITHIN 2 SECONDS}). */
    public static final double DEFAULT_ERROR_BOUND = 0.05;

    /** {@code BEHAVIOR}: what a query does with the groups that miss their error bound. */
    public enum Behavior {
        /** Answer every group, each row flagged with whether its bound was met. */
        ANSWER,
        /** Fail the query, naming the groups that missed. */
        FAIL
    }

    /** {@code ERROR e FOR col = value AND ...}; {@code offset} is where it starts in the text. */
    public record GroupBound(double errorBound, List<ColumnValue> values, int offset, int length) {}

    /** {@code col = value}: the value as the framework shows it cast to a string. */
    public record ColumnValue(String column, String value, int offset) {}
}
