package io.netapprox.flink.sql;

import io.netapprox.flink.ValueSelector;
import org.apache.flink.types.Row;

/**
 * The number an aggregate reads from a row: the numeric column at {@code field}. Flink's AVG, SUM
 * and PERCENTILE skip NULL values while the approximate query counts every row, so a NULL fails the
 * job, naming the column, instead of answering something else than the exact query.
 */
final class RowValue implements ValueSelector<Row> {
    private static final long serialVersionUID = 1L;

    private final int field;
    private final String column;

    RowValue(int field, String column) {
        this.field = field;
        this.column = column;
    }

    @Override
    public double value(Row row) {
        Object v = row.getField(field);
        if (v == null) {
            throw new IllegalArgumentException(
                    "NetApprox SQL: a NULL "
                            + column
                            + " in an aggregated column (Flink SQL skips it, the approximate query"
                            + " cannot); filter it: WHERE "
                            + column
                            + " IS NOT NULL");
        }
        return ((Number) v).doubleValue();
    }
}
