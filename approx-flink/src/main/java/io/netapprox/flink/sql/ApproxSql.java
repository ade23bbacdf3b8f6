package io.netapprox.flink.sql;

import io.netapprox.core.sql.ApproxSqlException;
import io.netapprox.flink.Aggregate;
import io.netapprox.flink.Approx;
import io.netapprox.flink.ApproxConfig;
import io.netapprox.flink.ApproxWindowedStream;
import io.netapprox.flink.WindowEstimate;
import io.netapprox.flink.sql.WindowQuery.Item;
import io.netapprox.flink.sql.WindowQuery.ItemKind;
import io.netapprox.flink.sql.WindowQuery.Window;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;
import org.apache.flink.table.types.logical.utils.LogicalTypeChecks;
import org.apache.flink.types.Row;

/**
 * Approximate window aggregations in Flink SQL: a window-TVF aggregation with a trailing {@code
 * WITH ERROR e [CONFIDENCE c]} runs NetApprox's exchange, the one {@link Approx#of} builds:
 *
 * <pre>{@code
 * Table t = ApproxSql.sqlQuery(tEnv,
 *     "SELECT window_start, window_end, zone, AVG(fare) AS avg_fare, COUNT(*) AS trips"
 *         + " FROM TABLE(TUMBLE(TABLE trips, DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE))"
 *         + " GROUP BY window_start, window_end, zone WITH ERROR 0.05 CONFIDENCE 0.95");
 * }</pre>
 *
 * <p>The result has the query's own columns, named and typed as Flink's exact query names and types
 * them, then for each aggregate {@code <name>_lower} and {@code <name>_upper} (DOUBLE, its
 * confidence interval) and {@code <name>_bound_met} (BOOLEAN: the interval is within e_max of the
 * answer). With {@code approx.enabled=true} (the job's or the table configuration, e.g. {@code SET
 * 'approx.enabled' = 'true'}) the table's rows go {@code toDataStream} -> {@code Approx.of(..)} ->
 * {@code fromDataStream}; otherwise Flink's own planner runs the query without the clause (its
 * exact window aggregation), each interval being the exact answer and each bound met. Both modes
 * accept and refuse the same statements, so the flag never changes which programs run.
 *
 * <p>Accepted: TUMBLE or HOP over a table whose time column has a watermark, GROUP BY window_start,
 * window_end and columns (strings, booleans, integers), SELECT items that are those columns or AVG,
 * SUM, PERCENTILE of a numeric column or COUNT(*), and an optional WHERE on the table's columns.
 * Anything else fails with an {@link ApproxSqlException} naming the clause; names and types are
 * checked by Flink's planner, which validates the query first.
 */
public final class ApproxSql {
    private ApproxSql() {}

    /**
     * The table of {@code sql}: an approximate window aggregation when it ends with {@code WITH
     * ERROR}, else Flink's {@code tEnv.sqlQuery(sql)}.
     *
     * @throws ApproxSqlException the clause or the query cannot be answered approximately
     * @throws org.apache.flink.table.api.ValidationException Flink refuses the query
     */
    public static Table sqlQuery(StreamTableEnvironment tEnv, String sql) {
        Optional<WindowQuery> parsed = WindowQueryParser.parse(sql);
        if (parsed.isEmpty()) {
            return tEnv.sqlQuery(sql);
        }
        WindowQuery q = parsed.get();
        ResolvedSchema input = tEnv.from(q.window().table()).getResolvedSchema();
        checkTimeColumn(q, input);
        Table exact = tEnv.sqlQuery(q.query()); // Flink's planner validates the query
        ResolvedSchema output = exact.getResolvedSchema();
        checkTypes(q, input, output);
        if (!ApproxConfig.parse(tEnv.getConfig(), ApproxConfig.randomSecret()).enabled()) {
            return tEnv.sqlQuery(exactWithIntervals(q, output));
        }
        return approximate(tEnv, q, input, output);
    }

    /** {@link #sqlQuery}, executed. */
    public static TableResult executeSql(StreamTableEnvironment tEnv, String sql) {
        return sqlQuery(tEnv, sql).execute();
    }

    private static void checkTimeColumn(WindowQuery q, ResolvedSchema input) {
        String ts = q.window().timeColumn();
        Optional<Column> column = input.getColumn(ts);
        if (column.isEmpty()) {
            return; // Flink's planner names the missing column
        }
        LogicalType type = column.get().getDataType().getLogicalType();
        if (LogicalTypeChecks.isProctimeAttribute(type)) {
            throw new ApproxSqlException(
                    ts
                            + " is a processing-time attribute: approximate windows are event-time"
                            + " windows (a time column with a watermark)");
        }
        boolean watermarked =
                LogicalTypeChecks.isRowtimeAttribute(type)
                        || input.getWatermarkSpecs().stream()
                                .anyMatch(w -> w.getRowtimeAttribute().equals(ts));
        if (!watermarked) {
            throw new ApproxSqlException(
                    "the time column "
                            + ts
                            + " of "
                            + q.window().table()
                            + " has no watermark: an approximate window closes at the watermark;"
                            + " declare one (WATERMARK FOR "
                            + ts
                            + " AS "
                            + ts
                            + " - INTERVAL '5' SECOND in the table's DDL, or watermark(..) in its"
                            + " Schema)");
        }
    }

    private static void checkTypes(WindowQuery q, ResolvedSchema input, ResolvedSchema output) {
        for (String g : q.groupColumns()) {
            LogicalType type = type(input, g);
            if (!GroupKey.supports(type)) {
                throw new ApproxSqlException(
                        "GROUP BY "
                                + g
                                + ": a group column of an approximate query is a string, a boolean"
                                + " or an integer, not "
                                + type);
            }
        }
        List<String> names = output.getColumnNames();
        Set<String> taken = new HashSet<>(names);
        for (int i = 0; i < q.items().size(); i++) {
            Item item = q.items().get(i);
            if (!item.isAggregate()) {
                continue;
            }
            if (item.column() != null && !isNumber(type(input, item.column()))) {
                throw new ApproxSqlException(
                        item.kind()
                                + "("
                                + item.column()
                                + "): the column must be numeric (an integer, FLOAT or DOUBLE),"
                                + " not "
                                + type(input, item.column()));
            }
            LogicalType result = output.getColumnDataTypes().get(i).getLogicalType();
            if (!isNumber(result)) {
                throw new ApproxSqlException(names.get(i) + ": unsupported result type " + result);
            }
            for (String suffix : List.of("_lower", "_upper", "_bound_met")) {
                if (!taken.add(names.get(i) + suffix)) {
                    throw new ApproxSqlException(
                            "the result already has a column "
                                    + names.get(i)
                                    + suffix
                                    + ", the name of "
                                    + names.get(i)
                                    + "'s interval column; rename one (AS ...)");
                }
            }
        }
    }

    private static LogicalType type(ResolvedSchema schema, String column) {
        return schema.getColumn(column)
                .orElseThrow(() -> new ApproxSqlException("no column " + column))
                .getDataType()
                .getLogicalType();
    }

    private static boolean isNumber(LogicalType type) {
        return switch (type.getTypeRoot()) {
            case TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE -> true;
            default -> false;
        };
    }

    /** Flag off: Flink's exact plan of the query, each interval the answer itself. */
    private static String exactWithIntervals(WindowQuery q, ResolvedSchema output) {
        StringBuilder s = new StringBuilder("SELECT *");
        for (int i = 0; i < q.items().size(); i++) {
            if (q.items().get(i).isAggregate()) {
                String n = quote(output.getColumnNames().get(i));
                s.append(", CAST(").append(n).append(" AS DOUBLE) AS ").append(quote(n, "_lower"));
                s.append(", CAST(").append(n).append(" AS DOUBLE) AS ").append(quote(n, "_upper"));
                s.append(", TRUE AS ").append(quote(n, "_bound_met"));
            }
        }
        return s.append(" FROM (\n").append(q.query()).append("\n)").toString();
    }

    /** Flag on: the table's rows through {@code Approx.of(..)}, back as a table. */
    private static Table approximate(
            StreamTableEnvironment tEnv,
            WindowQuery q,
            ResolvedSchema input,
            ResolvedSchema output) {
        // the rows the query reads: the time column (the records' timestamps), groups, values
        Map<String, Integer> fields = new LinkedHashMap<>();
        fields.put(q.window().timeColumn(), 0);
        for (String g : q.groupColumns()) {
            fields.putIfAbsent(g, fields.size());
        }
        for (Item item : q.items()) {
            if (item.column() != null && item.isAggregate()) {
                fields.putIfAbsent(item.column(), fields.size());
            }
        }
        StringBuilder select = new StringBuilder("SELECT ");
        select.append(String.join(", ", fields.keySet().stream().map(ApproxSql::quote).toList()));
        select.append(" FROM ").append(q.window().table());
        if (q.alias() != null) {
            select.append(" AS ").append(quote(q.alias()));
        }
        if (q.where() != null) {
            select.append(" WHERE ").append(q.where());
        }
        DataStream<Row> rows = tEnv.toDataStream(tEnv.sqlQuery(select.toString()));

        Map<String, Aggregate<Row>> aggregates = new LinkedHashMap<>();
        List<ResultRows.Column> columns = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < q.items().size(); i++) {
            Item item = q.items().get(i);
            LogicalType type = output.getColumnDataTypes().get(i).getLogicalType();
            int label = -1;
            if (item.isAggregate()) {
                Aggregate<Row> a = aggregate(item, fields);
                aggregates.putIfAbsent(a.label(), a);
                labels = new ArrayList<>(aggregates.keySet());
                label = labels.indexOf(a.label());
            }
            int group =
                    item.kind() == ItemKind.GROUP_COLUMN
                            ? q.groupColumns().indexOf(item.column())
                            : -1;
            columns.add(new ResultRows.Column(item.kind(), group, label, type));
        }
        List<LogicalType> groupTypes = new ArrayList<>();
        int[] groupFields = new int[q.groupColumns().size()];
        for (int g = 0; g < groupFields.length; g++) {
            groupFields[g] = fields.get(q.groupColumns().get(g));
            groupTypes.add(type(input, q.groupColumns().get(g)));
        }

        long shift = zoneShiftMillis(tEnv, q, input);
        ApproxWindowedStream<Row, String> query =
                Approx.of(rows, tEnv.getConfig())
                        .stratifyBy(new GroupKey(groupFields))
                        .window(assigner(q.window(), shift))
                        .groupType(Types.STRING)
                        .errorBound(q.errorBound());
        if (q.confidence() != null) {
            query.confidence(q.confidence());
        }
        @SuppressWarnings("unchecked")
        Aggregate<Row>[] aggs = aggregates.values().toArray(new Aggregate[0]);
        DataStream<WindowEstimate> answers = query.aggregate(aggs);

        List<String> names = new ArrayList<>(output.getColumnNames());
        List<TypeInformation<?>> infos = new ArrayList<>();
        Schema.Builder schema = Schema.newBuilder();
        for (int i = 0; i < names.size(); i++) {
            infos.add(typeInfo(output.getColumnDataTypes().get(i).getLogicalType()));
            schema.column(names.get(i), output.getColumnDataTypes().get(i).nullable());
        }
        for (int i = 0; i < q.items().size(); i++) {
            if (q.items().get(i).isAggregate()) {
                String n = output.getColumnNames().get(i);
                for (String suffix : List.of("_lower", "_upper")) {
                    names.add(n + suffix);
                    infos.add(Types.DOUBLE);
                    schema.column(n + suffix, DataTypes.DOUBLE());
                }
                names.add(n + "_bound_met");
                infos.add(Types.BOOLEAN);
                schema.column(n + "_bound_met", DataTypes.BOOLEAN());
            }
        }
        DataStream<Row> result =
                answers.flatMap(new ResultRows(columns, labels, groupTypes, shift))
                        .returns(
                                Types.ROW_NAMED(
                                        names.toArray(new String[0]),
                                        infos.toArray(new TypeInformation<?>[0])))
                        .setParallelism(answers.getParallelism())
                        .name("NetApprox SQL result rows");
        return tEnv.fromDataStream(result, schema.build());
    }

    private static Aggregate<Row> aggregate(Item item, Map<String, Integer> fields) {
        String c = item.column();
        return switch (item.kind()) {
            case AVG -> Aggregate.avg(c, new RowValue(fields.get(c), c));
            case SUM -> Aggregate.sum(c, new RowValue(fields.get(c), c));
            case COUNT -> Aggregate.count();
            case PERCENTILE ->
                    Aggregate.quantile(c, item.percentage(), new RowValue(fields.get(c), c));
            default -> throw new IllegalStateException("not an aggregate: " + item);
        };
    }

    /**
     * Windows over a TIMESTAMP_LTZ time column are aligned in the session time zone (as Flink's
     * window functions align them): the shift of their bounds from epoch alignment.
     */
    private static long zoneShiftMillis(
            StreamTableEnvironment tEnv, WindowQuery q, ResolvedSchema input) {
        LogicalType ts = type(input, q.window().timeColumn());
        if (ts.getTypeRoot() != LogicalTypeRoot.TIMESTAMP_WITH_LOCAL_TIME_ZONE) {
            return 0;
        }
        ZoneId zone = tEnv.getConfig().getLocalTimeZone();
        if (!zone.getRules().isFixedOffset()) {
            throw new ApproxSqlException(
                    "windows over the TIMESTAMP_LTZ column "
                            + q.window().timeColumn()
                            + " follow the session time zone "
                            + zone
                            + ", whose offset changes (daylight saving time); set"
                            + " table.local-time-zone to a fixed offset (e.g. UTC or GMT+01:00)");
        }
        return zone.getRules().getOffset(java.time.Instant.EPOCH).getTotalSeconds() * 1000L;
    }

    private static WindowAssigner<Object, TimeWindow> assigner(Window w, long shift) {
        long offset = Math.floorMod(w.offsetMillis() - shift, w.slideMillis());
        return switch (w.kind()) {
            case TUMBLE ->
                    TumblingEventTimeWindows.of(
                            Duration.ofMillis(w.sizeMillis()), Duration.ofMillis(offset));
            case HOP ->
                    SlidingEventTimeWindows.of(
                            Duration.ofMillis(w.sizeMillis()),
                            Duration.ofMillis(w.slideMillis()),
                            Duration.ofMillis(offset));
        };
    }

    private static TypeInformation<?> typeInfo(LogicalType type) {
        return switch (type.getTypeRoot()) {
            case TIMESTAMP_WITHOUT_TIME_ZONE -> Types.LOCAL_DATE_TIME;
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE -> Types.INSTANT;
            case CHAR, VARCHAR -> Types.STRING;
            case BOOLEAN -> Types.BOOLEAN;
            case TINYINT -> Types.BYTE;
            case SMALLINT -> Types.SHORT;
            case INTEGER -> Types.INT;
            case BIGINT -> Types.LONG;
            case FLOAT -> Types.FLOAT;
            case DOUBLE -> Types.DOUBLE;
            default -> throw new ApproxSqlException("unsupported result type " + type);
        };
    }

    private static String quote(String name) {
        return "`" + name.replace("`", "``") + "`";
    }

    /** The quoted name {@code quotedName + suffix} (quotedName as {@link #quote} made it). */
    private static String quote(String quotedName, String suffix) {
        return quotedName.substring(0, quotedName.length() - 1) + suffix + "`";
    }
}
