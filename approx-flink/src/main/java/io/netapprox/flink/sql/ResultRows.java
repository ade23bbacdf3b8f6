package io.netapprox.flink.sql;

import io.netapprox.flink.WindowEstimate;
import io.netapprox.flink.sql.WindowQuery.ItemKind;
import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.types.Row;
import org.apache.flink.util.Collector;

/**
 * Turns the approximate query's answers (one {@link WindowEstimate} per window, group and
 * aggregate) into the rows of the SQL result: the SELECT items in order, then for each aggregate
 * item its {@code _lower}, {@code _upper} and {@code _bound_met} columns.
 *
 * <p>A (window, group)'s answers leave the receiver together, in one call, and reach this function
 * in order on a forward edge, so the rows being assembled are never in a checkpoint: the map is
 * transient.
 */
final class ResultRows implements FlatMapFunction<WindowEstimate, Row> {
    private static final long serialVersionUID = 1L;

    /**
     * One SELECT item: {@code group} indexes the group columns, {@code label} the distinct
     * aggregate labels, {@code type} is the type of the column in Flink's exact result.
     */
    record Column(ItemKind kind, int group, int label, LogicalType type) implements Serializable {}

    private final List<Column> columns;
    private final List<String> labels;
    private final List<LogicalType> groupTypes;
    private final long zoneShiftMillis;
    private final int aggregates;
    private transient Map<String, WindowEstimate[]> pending;

    /**
     * @param zoneShiftMillis what the window columns add to a window's bounds in epoch milliseconds
     *     when they are TIMESTAMP (wall-clock) values: the session time zone's offset for a
     *     TIMESTAMP_LTZ time column, else 0
     */
    ResultRows(
            List<Column> columns,
            List<String> labels,
            List<LogicalType> groupTypes,
            long zoneShiftMillis) {
        this.columns = List.copyOf(columns);
        this.labels = List.copyOf(labels);
        this.groupTypes = List.copyOf(groupTypes);
        this.zoneShiftMillis = zoneShiftMillis;
        this.aggregates = (int) columns.stream().filter(c -> c.label() >= 0).count();
    }

    @Override
    public void flatMap(WindowEstimate e, Collector<Row> out) {
        if (pending == null) {
            pending = new HashMap<>();
        }
        int label = labels.indexOf(e.aggregate);
        if (label < 0) {
            throw new IllegalStateException("NetApprox SQL: unexpected aggregate " + e.aggregate);
        }
        String cell = e.windowStart + "/" + e.windowEnd + "/" + e.group;
        WindowEstimate[] answers =
                pending.computeIfAbsent(cell, c -> new WindowEstimate[labels.size()]);
        answers[label] = e;
        for (WindowEstimate a : answers) {
            if (a == null) {
                return;
            }
        }
        pending.remove(cell);
        out.collect(row(answers));
    }

    private Row row(WindowEstimate[] answers) {
        WindowEstimate any = answers[0];
        List<Object> groups = GroupKey.decode(any.group, groupTypes);
        Row row = new Row(columns.size() + 3 * aggregates);
        int extra = columns.size();
        for (int i = 0; i < columns.size(); i++) {
            Column c = columns.get(i);
            switch (c.kind()) {
                case WINDOW_START -> row.setField(i, time(any.windowStart, c.type()));
                case WINDOW_END -> row.setField(i, time(any.windowEnd, c.type()));
                case GROUP_COLUMN -> row.setField(i, groups.get(c.group()));
                default -> {
                    WindowEstimate a = answers[c.label()];
                    row.setField(i, number(a.estimate, c.type()));
                    row.setField(extra++, a.low);
                    row.setField(extra++, a.high);
                    row.setField(extra++, boundMet(a));
                }
            }
        }
        return row;
    }

    /**
     * True when the interval lies within e_max of the estimate on both sides (relative), i.e. the
     * answer keeps its group's bound at the stated confidence.
     */
    static boolean boundMet(WindowEstimate a) {
        double allowed = a.eMax * Math.abs(a.estimate);
        return a.high - a.estimate <= allowed && a.estimate - a.low <= allowed;
    }

    private Object time(long epochMillis, LogicalType type) {
        if (type.getTypeRoot() == LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE) {
            return Instant.ofEpochMilli(epochMillis);
        }
        long wallClock = epochMillis + zoneShiftMillis;
        return LocalDateTime.ofEpochSecond(
                Math.floorDiv(wallClock, 1000),
                (int) Math.floorMod(wallClock, 1000) * 1_000_000,
                ZoneOffset.UTC);
    }

    /** The estimate as the exact result's type (an integer column's AVG and SUM are rounded). */
    private static Object number(double v, LogicalType type) {
        return switch (type.getTypeRoot()) {
            case DOUBLE -> v;
            case FLOAT -> (float) v;
            case TINYINT -> (byte) Math.round(v);
            case SMALLINT -> (short) Math.round(v);
            case INTEGER -> (int) Math.round(v);
            case BIGINT -> Math.round(v);
            default -> throw new IllegalStateException("NetApprox SQL: unsupported type " + type);
        };
    }
}
