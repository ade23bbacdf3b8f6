package io.netapprox.flink.sql;

import java.util.List;

/**
 * An approximate window aggregation as {@link WindowQueryParser} read it:
 *
 * <pre>
 * SELECT item, ... FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset]))
 *                  | TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset])) [[AS] alias]
 * [WHERE condition] GROUP BY window_start, window_end [, column]...
 * WITH ERROR e [CONFIDENCE c]
 * </pre>
 *
 * @param query the statement without the clause: Flink's own SQL, planned as it is with the flag
 *     off
 * @param errorBound the relative bound e_max of every group, in (0, 1)
 * @param confidence the confidence in (0, 1), or null for {@code approx.confidence}
 * @param window the window table function
 * @param alias the window table's alias, or null
 * @param where the text of the WHERE condition, or null
 * @param items the SELECT list, in order
 * @param groupColumns the GROUP BY columns besides window_start and window_end, in order
 */
record WindowQuery(
        String query,
        double errorBound,
        Double confidence,
        Window window,
        String alias,
        String where,
        List<Item> items,
        List<String> groupColumns) {

    /** {@code TUMBLE} or {@code HOP}. */
    enum WindowKind {
        TUMBLE,
        HOP
    }

    /**
     * The window table function: {@code table} is the table's path as written, {@code slideMillis}
     * equals {@code sizeMillis} for TUMBLE.
     */
    record Window(
            WindowKind kind,
            String table,
            String timeColumn,
            long sizeMillis,
            long slideMillis,
            long offsetMillis) {}

    /** What a SELECT item is. */
    enum ItemKind {
        WINDOW_START,
        WINDOW_END,
        GROUP_COLUMN,
        AVG,
        SUM,
        COUNT,
        PERCENTILE
    }

    /**
     * One SELECT item: {@code column} is the group column or the aggregated column (null for
     * window_start, window_end and COUNT(*)), {@code percentage} PERCENTILE's p; {@code offset} is
     * where it starts in the text.
     */
    record Item(ItemKind kind, String column, double percentage, int offset) {
        boolean isAggregate() {
            return kind.compareTo(ItemKind.AVG) >= 0;
        }
    }
}
