package io.netapprox.flink;

import static org.apache.flink.table.api.Expressions.$;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sql.ApproxSqlException;
import io.netapprox.flink.sql.ApproxSql;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The Flink SQL form ({@link ApproxSql}) on a MiniCluster of 2 TaskManagers: flag off it is Flink's
 * own window aggregation, answer for answer; flag on it runs the approximate exchange and answers
 * within e_max; every clause it cannot answer fails with a message naming it.
 */
class ApproxSqlTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    /** 200k rides over 5 minutes in 6 skewed zones: the large zones are sampled at e_max 0.1. */
    private static final Rides RIDES = new Rides(35, 200_000, 5, 6);

    private static final String TUMBLE_QUERY =
            "SELECT window_start, window_end, zone, AVG(fare) AS avg_fare, SUM(fare) AS total,"
                    + " COUNT(*) AS trips, PERCENTILE(fare, 0.5) AS median_fare\n"
                    + "FROM TABLE(TUMBLE(TABLE rides, DESCRIPTOR(pickup_time), INTERVAL '1'"
                    + " MINUTE))\n"
                    + "GROUP BY window_start, window_end, zone\n";

    @Test
    void flagOffIsFlinksExactWindowAggregation() throws Exception {
        StreamTableEnvironment tEnv = tableEnv(false, RIDES);
        Table t = ApproxSql.sqlQuery(tEnv, TUMBLE_QUERY + "WITH ERROR 0.1 CONFIDENCE 0.95");
        assertTrue(t.explain().contains("WindowAggregate"), "Flink's own window aggregation");
        List<Row> flagOff = rows(t.execute());
        List<Row> flink = rows(tEnv.sqlQuery(TUMBLE_QUERY).execute());
        assertEquals(5 * 6, flink.size(), "5 windows x 6 zones");
        assertEquals(
                List.of(
                        "window_start",
                        "window_end",
                        "zone",
                        "avg_fare",
                        "total",
                        "trips",
                        "median_fare",
                        "avg_fare_lower",
                        "avg_fare_upper",
                        "avg_fare_bound_met",
                        "total_lower",
                        "total_upper",
                        "total_bound_met",
                        "trips_lower",
                        "trips_upper",
                        "trips_bound_met",
                        "median_fare_lower",
                        "median_fare_upper",
                        "median_fare_bound_met"),
                t.getResolvedSchema().getColumnNames());
        Map<String, Row> exact = byCell(flink);
        assertEquals(flink.size(), flagOff.size());
        for (Row r : flagOff) {
            Row e = exact.get(cell(r));
            for (int i = 0; i < 7; i++) {
                if (i == 3 || i == 4) {
                    // AVG and SUM of doubles: two runs of one plan add in different orders
                    double x = (Double) e.getField(i);
                    assertEquals(x, (Double) r.getField(i), 1e-9 * Math.abs(x), "column " + i);
                } else {
                    assertEquals(e.getField(i), r.getField(i), "column " + i + " of " + r);
                }
            }
            for (int a = 0; a < 4; a++) {
                double v = ((Number) r.getField(3 + a)).doubleValue();
                assertEquals(v, r.getField(7 + 3 * a), "lower of " + r);
                assertEquals(v, r.getField(8 + 3 * a), "upper of " + r);
                assertEquals(true, r.getField(9 + 3 * a), "bound met of " + r);
            }
        }
    }

    @Test
    void flagOnAnswersWithinTheBoundOverTheExchange() throws Exception {
        List<Row> exact = rows(tableEnv(false, RIDES).sqlQuery(TUMBLE_QUERY).execute());
        // only each group's planned sample is sent, over a path that drops 30% of the datagrams
        StreamTableEnvironment tEnv =
                tableEnv(true, RIDES, "approx.submit=target", "approx.faultDropOutgoing=0.3");
        Table t = ApproxSql.sqlQuery(tEnv, TUMBLE_QUERY + "WITH ERROR 10% CONFIDENCE 95%;");
        assertFalse(t.explain().contains("WindowAggregate"), "the approximate exchange");
        TableResult result = t.execute();
        JobID job = result.getJobClient().orElseThrow().getJobID();
        List<Row> approx = rows(result);
        Map<String, Row> truth = byCell(exact);
        assertEquals(truth.keySet(), byCell(approx).keySet(), "every window and zone answered");
        int[] within = new int[3];
        int[] covered = new int[2];
        int sampled = 0;
        for (Row r : approx) {
            Row e = truth.get(cell(r));
            assertEquals(e.getField(5), r.getField(5), "COUNT(*) is exact: " + r);
            for (int a = 0; a < 4; a++) {
                double v = ((Number) r.getField(3 + a)).doubleValue();
                double low = (Double) r.getField(7 + 3 * a);
                double high = (Double) r.getField(8 + 3 * a);
                assertTrue(low <= v && v <= high, "the interval holds the answer: " + r);
            }
            int[] aggs = {3, 4, 6}; // avg, sum, percentile
            for (int k = 0; k < aggs.length; k++) {
                double v = ((Number) r.getField(aggs[k])).doubleValue();
                double x = ((Number) e.getField(aggs[k])).doubleValue();
                if (Math.abs(v - x) <= 0.1 * Math.abs(x)) {
                    within[k]++;
                }
                if (k < 2) {
                    double low = (Double) r.getField(7 + 3 * k);
                    double high = (Double) r.getField(8 + 3 * k);
                    double slack = 1e-9 * Math.abs(x);
                    if (low - slack <= x && x <= high + slack) {
                        covered[k]++;
                    }
                    if (k == 0 && high - low > 1e-9 * Math.abs(x)) {
                        sampled++;
                    }
                }
            }
            System.out.printf(
                    "[flink-sql] %s zone %s avg %.4f [%.4f, %.4f] truth %.4f bound met %s%n",
                    r.getField(0),
                    r.getField(2),
                    r.getField(3),
                    r.getField(7),
                    r.getField(8),
                    e.getField(3),
                    r.getField(9));
        }
        int cells = approx.size();
        System.out.printf(
                "[flink-sql] %d cells: within e_max avg %d sum %d median %d; covered avg %d sum %d;"
                        + " sampled %d%n",
                cells, within[0], within[1], within[2], covered[0], covered[1], sampled);
        // at confidence 0.95 per cell, fewer than 80% of 30 cells has probability < 0.001
        for (int k = 0; k < 3; k++) {
            assertTrue(within[k] >= 0.8 * cells, "within e_max: " + within[k] + "/" + cells);
        }
        for (int k = 0; k < 2; k++) {
            assertTrue(covered[k] >= 0.8 * cells, "covered: " + covered[k] + "/" + cells);
        }
        assertTrue(sampled > 0, "some zones were sampled (their intervals have width)");
        long epochs =
                FLINK.receiverCounter(job, "approxEpochsPulled")
                        + FLINK.receiverCounter(job, "approxEpochsPushed");
        assertTrue(epochs > 0, "epochs crossed between the TaskManagers");
    }

    /**
     * COUNT(*) is exact in approximate mode too, so hopping windows in a session time zone off UTC
     * (window_start/window_end are wall-clock TIMESTAMPs there) must give Flink's rows exactly.
     */
    @Test
    void hoppingWindowsInASessionTimeZoneMatchFlinksWindows() throws Exception {
        String query =
                "SELECT zone, window_start, COUNT(*) AS trips, window_end\n"
                        + "FROM TABLE(HOP(TABLE rides, DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE,"
                        + " INTERVAL '2' MINUTES)) AS w WHERE w.fare > 6\n"
                        + "GROUP BY window_end, zone, window_start\n";
        Rides rides = new Rides(36, 20_000, 5, 3);
        StreamTableEnvironment off = tableEnv(false, rides);
        off.getConfig().setLocalTimeZone(ZoneId.of("GMT+05:30"));
        List<Row> exact = rows(off.sqlQuery(query).execute());
        StreamTableEnvironment on = tableEnv(true, rides);
        on.getConfig().setLocalTimeZone(ZoneId.of("GMT+05:30"));
        List<Row> approx = rows(ApproxSql.sqlQuery(on, query + "WITH ERROR 0.05").execute());
        assertEquals(6 * 3, exact.size(), "6 hopping windows x 3 zones");
        Map<String, Long> want = new HashMap<>();
        for (Row r : exact) {
            want.put(
                    r.getField(0) + " " + r.getField(1) + " " + r.getField(3),
                    (Long) r.getField(2));
        }
        Map<String, Long> got = new HashMap<>();
        for (Row r : approx) {
            got.put(
                    r.getField(0) + " " + r.getField(1) + " " + r.getField(3),
                    (Long) r.getField(2));
        }
        assertEquals(want, got);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                // the clause
                "WITH ERROR 0 | ERROR must be a relative bound in (0, 1)",
                "WITH ERROR 1 | ERROR must be a relative bound in (0, 1)",
                "WITH ERROR 1.5 | ERROR must be a relative bound in (0, 1)",
                "WITH ERROR -0.1 | expected a number after ERROR",
                "WITH ERROR 0.05 CONFIDENCE 0 | CONFIDENCE must be in (0, 1)",
                "WITH ERROR 0.05 CONFIDENCE 1 | CONFIDENCE must be in (0, 1)",
                "WITH ERROR 0.05 CONFIDENCE 100% | CONFIDENCE must be in (0, 1)",
                "WITH ERROR 0.05 CONFIDENCE 0.9 CONFIDENCE 0.9 | CONFIDENCE given twice",
                "WITH ERROR abc | expected a number after ERROR",
                "WITH ERROR 0.05 ORDER BY zone | expected CONFIDENCE or the end of the statement",
                "WITH ERROR 0.05 REPEATABLE (7) | REPEATABLE is not supported",
                "WITH ERROR 0.05, ERROR 0.01 FOR zone = 1 | per-group bounds",
            })
    void badClausesFailNamingTheClause(String clause, String message) {
        assertFails(TUMBLE_QUERY + clause, message);
    }

    @ParameterizedTest(name = "{1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "SELECT zone, AVG(fare) FROM rides GROUP BY zone"
                        + " | not a window query: FROM must be a window table function",
                "SELECT window_start, zone, MAX(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, zone | unsupported aggregate MAX",
                "SELECT window_start, zone, COUNT(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, zone | only COUNT(*) is supported",
                "SELECT window_start, zone, AVG(fare * 2) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, zone | an expression is not supported",
                "SELECT window_start, zone, AVG(fare) FROM TABLE(CUMULATE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE, INTERVAL '5' MINUTE))"
                        + " GROUP BY window_start, window_end, zone | CUMULATE windows are not"
                        + " supported",
                "SELECT window_start, zone, AVG(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " zone | groups by both window_start and window_end",
                "SELECT window_start, zone, AVG(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, zone HAVING COUNT(*) > 1 | HAVING is not supported",
                "SELECT window_start, driver, AVG(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, zone | driver is neither a GROUP BY column",
                "SELECT window_start, fare, AVG(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, fare | a group column of an approximate query is a string",
                "SELECT window_start, zone, AVG(fare) FROM TABLE(TUMBLE(TABLE unwatermarked,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, zone | has no watermark",
                "SELECT window_start, zone, AVG(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) JOIN rides ON true"
                        + " GROUP BY window_start, window_end, zone | joins are not supported",
                "SELECT window_start, zone, AVG(fare) FROM TABLE(TUMBLE(TABLE rides,"
                        + " DESCRIPTOR(pickup_time), INTERVAL '1' MINUTE)) GROUP BY window_start,"
                        + " window_end, fare > 1 | GROUP BY takes column names only",
            })
    void queriesWithoutAnApproximateCounterpartFailNamingTheClause(String query, String message) {
        assertFails(query + " WITH ERROR 0.05", message);
    }

    @Test
    void theFlagDoesNotChangeWhichStatementsRun() {
        for (boolean enabled : new boolean[] {false, true}) {
            StreamTableEnvironment tEnv = tableEnv(enabled, RIDES);
            ApproxSqlException e =
                    assertThrows(
                            ApproxSqlException.class,
                            () ->
                                    ApproxSql.sqlQuery(
                                            tEnv, TUMBLE_QUERY + "WITH ERROR 0.05 CONFIDENCE 2"));
            assertTrue(e.getMessage().contains("CONFIDENCE must be in (0, 1)"), e.getMessage());
            assertEquals(4, e.line());
        }
    }

    @Test
    void aStatementWithoutTheClauseIsFlinksOwn() {
        StreamTableEnvironment tEnv = tableEnv(true, RIDES);
        Table t = ApproxSql.sqlQuery(tEnv, TUMBLE_QUERY);
        assertTrue(t.explain().contains("WindowAggregate"));
        assertEquals(7, t.getResolvedSchema().getColumnCount());
    }

    private static void assertFails(String sql, String message) {
        StreamTableEnvironment tEnv = tableEnv(true, RIDES);
        ApproxSqlException e =
                assertThrows(ApproxSqlException.class, () -> ApproxSql.sqlQuery(tEnv, sql));
        assertTrue(e.getMessage().contains(message), e.getMessage());
        assertTrue(e.getMessage().startsWith("WITH ERROR: "), e.getMessage());
    }

    /**
     * A table environment with the rides as table {@code rides} (pickup_time TIMESTAMP_LTZ(3) with
     * the source's watermarks, zone INT, fare DOUBLE, driver STRING) and {@code unwatermarked}.
     */
    private static StreamTableEnvironment tableEnv(
            boolean enabled, Rides rides, String... options) {
        Configuration conf = new Configuration();
        for (String o : options) {
            conf.setString(o.substring(0, o.indexOf('=')), o.substring(o.indexOf('=') + 1));
        }
        conf.setString("approx.enabled", String.valueOf(enabled));
        conf.setString("approx.dataPlane", "atp");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        StreamTableEnvironment tEnv = StreamTableEnvironment.create(env);
        tEnv.getConfig().setLocalTimeZone(ZoneId.of("UTC"));
        Table t =
                tEnv.fromDataStream(
                        rides.stream(env).rebalance(),
                        Schema.newBuilder()
                                .columnByMetadata("rowtime", "TIMESTAMP_LTZ(3)")
                                .watermark("rowtime", "SOURCE_WATERMARK()")
                                .build());
        tEnv.createTemporaryView(
                "rides",
                t.select(
                        $("rowtime").as("pickup_time"),
                        $("group").as("zone"),
                        $("value").as("fare"),
                        $("key").as("driver")));
        Table plain =
                tEnv.fromDataStream(
                        rides.stream(env),
                        Schema.newBuilder()
                                .columnByExpression("pickup_time", "TO_TIMESTAMP_LTZ(ts, 3)")
                                .build());
        tEnv.createTemporaryView(
                "unwatermarked",
                plain.select(
                        $("pickup_time"),
                        $("group").as("zone"),
                        $("value").as("fare"),
                        $("key").as("driver")));
        return tEnv;
    }

    private static List<Row> rows(TableResult result) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (CloseableIterator<Row> it = result.collect()) {
            it.forEachRemaining(rows::add);
        }
        return rows;
    }

    /** window_start and zone: one answer per cell. */
    private static String cell(Row r) {
        return r.getField(0) + " " + r.getField(2);
    }

    private static Map<String, Row> byCell(List<Row> rows) {
        Map<String, Row> m = new HashMap<>();
        for (Row r : rows) {
            assertEquals(null, m.put(cell(r), r), "one row per cell: " + r);
        }
        return m;
    }
}
