package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The pre-sample decided in Spark's generated code ({@link PreSampleGate}), local[2]: the rows the
 * pre-sample drops never reach the writer (counted by the gates), nor, without a top-k column, the
 * rows it keeps (stored by the gates), every row is still counted in its group's population, no
 * gate is left open, and the answer - estimates, sample sizes, populations, for a query with and
 * without a top-k column, with NULL rows skipped - is the one the writer gives when it takes every
 * row itself (same rows in the same order: the same statistics and the same level draws).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PreSampleGateTest {
    static final long ROWS = 240_000;
    static final int MAPS = 4;
    static final int GROUPS = 6;

    static SparkSession spark;

    /** A fresh session (shuffle ids from 0: the map tasks' seeds are the same in each). */
    static void start() {
        spark =
                SparkTestSupport.local(
                        "approx-presample-gate",
                        SparkTestSupport.conf("spark.approx.mapSampleRecords", "512"));
    }

    static void stop() {
        if (spark != null) {
            spark.stop();
            spark = null;
        }
    }

    @AfterEach
    void restore() {
        PreSampleGate.enabled = true;
        stop();
    }

    /**
     * Group {@code hour}, x on [h, h + 10], a zone string (every 1000th row's x and every 997th
     * row's zone NULL).
     */
    static Dataset<Row> input() {
        return spark.range(0, ROWS, 1, MAPS)
                .selectExpr(
                        "cast(id % " + GROUPS + " as int) as hour",
                        "case when id % 1000 = 7 then null else cast(id % 997 as double) / 99.7"
                                + " + cast(id % "
                                + GROUPS
                                + " as double) end as x",
                        "case when id % 997 = 3 then null else concat('zone-', cast(id % 13 as"
                                + " string)) end as zone");
    }

    /** The query's answer in a fresh session, the gate on or off. */
    static List<Row> answer(boolean topK, boolean gate) {
        PreSampleGate.enabled = gate;
        start();
        try {
            return query(topK);
        } finally {
            stop();
        }
    }

    static List<Row> query(boolean topK) {
        ApproxQuery q = ApproxQuery.on(input()).groupBy("hour").avg("x").sum("x").count();
        if (topK) {
            q.topK("zone", 3);
        }
        return q.errorBound(0.05).seed(3).partitions(2).run().collectAsList();
    }

    static List<String> strings(List<Row> rows) {
        List<String> out = new ArrayList<>();
        for (Row r : rows) {
            out.add(r.toString());
        }
        out.sort(null);
        return out;
    }

    @Test
    void droppedRowsNeverReachTheWriterAndTheAnswerIsTheWritersOwn() {
        for (boolean topK : new boolean[] {false, true}) {
            long before = PreSampleGate.droppedRows();
            long storedBefore = PreSampleGate.storedRows();
            List<Row> ungated = answer(topK, false);
            assertEquals(before, PreSampleGate.droppedRows(), "no gate without it");
            assertEquals(storedBefore, PreSampleGate.storedRows(), "no gate without it");
            PreSampleGate.enabled = true;
            start();
            List<Row> gated = query(topK);
            long dropped = PreSampleGate.droppedRows() - before;
            long stored = PreSampleGate.storedRows() - storedBefore;
            // 10K rows per (map task, group), a pre-sample of 512-1024 kept: most are dropped in
            // Spark's code
            assertTrue(
                    dropped > ROWS / 2, "top-k " + topK + ": dropped in Spark's code: " + dropped);
            // without a top-k column the kept rows are stored in Spark's code too (at least the
            // 512 per share the pre-sample keeps); with one the writer stores them
            if (topK) {
                assertEquals(0, stored, "top-k: kept rows reach the writer");
            } else {
                assertTrue(
                        stored >= (long) MAPS * GROUPS * 512, "stored in Spark's code: " + stored);
            }
            assertEquals(0, PreSampleGate.openGates(), "no gate left open");
            assertEquals(strings(ungated), strings(gated), "top-k " + topK + ": the same answer");
            // every row with an x (and, with the top-k, a zone) is in its group's population
            Map<Object, Long> expected = new java.util.HashMap<>();
            for (Row r :
                    input().filter("x is not null" + (topK ? " and zone is not null" : ""))
                            .groupBy("hour")
                            .count()
                            .collectAsList()) {
                expected.put("hour=" + r.get(0), r.getLong(1));
            }
            int checked = 0;
            for (Row r : gated) {
                if (r.getString(1).equals("count")) {
                    assertEquals(expected.get(r.getString(0)), r.getLong(10), r.toString());
                    checked++;
                }
            }
            assertEquals(GROUPS, checked);
            stop();
        }
    }
}
