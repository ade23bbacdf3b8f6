package io.netapprox.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;
import org.apache.spark.sql.api.java.UDF5;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The map side's pre-sample decided inside Spark's generated code: a non-deterministic function
 * column {@value #COLUMN} over the projected input's group column and values (and whether the top-k
 * column is null), and a filter on it, so that a row the pre-sample drops leaves Spark's loop as
 * soon as its fate is known - no {@code UnsafeRow} is written for it, it never reaches the row
 * iterator, the map task's record or the writer; its cost is the group's census statistics and the
 * level draw ({@link ApproxShuffleWriter}'s {@link Gate}, the same statistics and the same draw, in
 * the same row order, as the writer makes of a row it is given), plus the UDF call: Spark's {@code
 * ScalaUDF} passes a Java UDF's arguments boxed ({@code Double} per value; a Catalyst expression
 * with its own generated code would pass primitives, but Spark 4's {@code Column} does not wrap
 * one).
 *
 * <p>Per row the function returns {@link #TAKEN} (counted, and dropped or - a query without a top-k
 * column, whose kept row is its values - stored in the sorter by the gate itself: either way
 * filtered out, so no row of such a query leaves Spark's loop), the kept row's {@code gid << 8 |
 * level} (counted; the writer stores it with its top-k key read in place, {@link #gid}, {@link
 * #level}) or {@link #UNDECIDED}: no gate is open on the task's thread (the projected input read by
 * anything but the approximate writer), a NULL in the group, a value or the top-k column (the
 * writer applies the query's NULL rule: skip or fail), or a group value outside {@code [0,
 * KEY_CACHE)} - the writer then takes the row as it takes any (statistics, draw, store). Applies to
 * one integral group column and 1-3 value columns ({@link #applies}); other queries read every row
 * as before.
 *
 * <p>The gate of a map task is opened by its writer before it pulls the first row and closed when
 * it is done ({@link #open}, {@link #close}); the function finds it by the task's attempt id and
 * keeps it while it is open on the same thread (a thread runs one task at a time).
 */
final class PreSampleGate {
    private PreSampleGate() {}

    /** The decision column's name (after the projected columns). */
    static final String COLUMN = "__netapprox_presample";

    /**
     * The row is done with in Spark's code: its statistics counted, and left out by the pre-sample
     * or (a query without a top-k column) stored by the gate; filtered out.
     */
    static final int TAKEN = -1;

    /** Not decided here: the writer takes the row as it is. */
    static final int UNDECIDED = -2;

    /** Sorter ids below this are encoded in a decision (above: {@link #UNDECIDED}). */
    static final int MAX_GROUPS = 1 << 23;

    private static final ConcurrentHashMap<Long, Gate> OPEN = new ConcurrentHashMap<>();

    /** Rows dropped in Spark's code by the gates closed in this JVM (tests). */
    private static final java.util.concurrent.atomic.LongAdder DROPPED_ROWS =
            new java.util.concurrent.atomic.LongAdder();

    /** Kept rows stored in Spark's code by the gates closed in this JVM (tests). */
    private static final java.util.concurrent.atomic.LongAdder STORED_ROWS =
            new java.util.concurrent.atomic.LongAdder();

    /** Tests: false makes {@link #applies} false (every row read by the writer, as before). */
    static volatile boolean enabled = true;

    /** The sorter id of a kept row's decision. */
    static int gid(int decision) {
        return decision >>> 8;
    }

    /** The pre-sample level of a kept row's decision. */
    static int level(int decision) {
        return decision & 0xff;
    }

    static int kept(int gid, int level) {
        return gid << 8 | level;
    }

    /**
     * True when the query's rows can be decided in Spark's code: one integral group column ({@link
     * ApproxQuery.RowRecords#STRING} is not) and 1-3 value columns.
     */
    static boolean applies(byte[] groupKinds, int numValues) {
        return enabled
                && groupKinds.length == 1
                && groupKinds[0] != ApproxQuery.RowRecords.STRING
                && numValues >= 1
                && numValues <= 3;
    }

    /**
     * The projected input ({@code g0, v0.., k}) with the decision column after its columns and the
     * dropped rows filtered out.
     *
     * @param groupName the group column's name (keys are {@code name=value})
     */
    static Dataset<Row> gate(
            Dataset<Row> projected, String groupName, int numValues, boolean withKey) {
        List<Column> args = new ArrayList<>();
        args.add(functions.col("g0"));
        for (int i = 0; i < numValues; i++) {
            args.add(functions.col("v" + i));
        }
        if (withKey) {
            args.add(functions.col("k").isNull());
        }
        Decide d = new Decide(numValues, withKey, groupName + "=");
        UserDefinedFunction f =
                switch (args.size()) {
                    case 2 ->
                            functions.udf((UDF2<Object, Object, Integer>) d, DataTypes.IntegerType);
                    case 3 ->
                            functions.udf(
                                    (UDF3<Object, Object, Object, Integer>) d,
                                    DataTypes.IntegerType);
                    case 4 ->
                            functions.udf(
                                    (UDF4<Object, Object, Object, Object, Integer>) d,
                                    DataTypes.IntegerType);
                    case 5 ->
                            functions.udf(
                                    (UDF5<Object, Object, Object, Object, Object, Integer>) d,
                                    DataTypes.IntegerType);
                    default ->
                            throw new IllegalArgumentException(
                                    "pre-sample gate: " + args.size() + " arguments");
                };
        Column decision = f.asNondeterministic().asNonNullable().apply(args.toArray(new Column[0]));
        return projected
                .withColumn(COLUMN, decision)
                .filter(functions.col(COLUMN).notEqual(functions.lit(TAKEN)));
    }

    /** Opens the task's gate (its writer, before the first row). */
    static void open(long taskAttemptId, Gate gate) {
        gate.open = true;
        OPEN.put(taskAttemptId, gate);
    }

    /** Closes it (the writer, when done or failed). */
    static void close(long taskAttemptId, Gate gate) {
        gate.open = false;
        OPEN.remove(taskAttemptId, gate);
        DROPPED_ROWS.add(gate.dropped);
        STORED_ROWS.add(gate.stored);
    }

    /** Kept rows stored in Spark's code by the gates closed so far in this JVM (tests). */
    static long storedRows() {
        return STORED_ROWS.sum();
    }

    /** Rows dropped in Spark's code by the gates closed so far in this JVM (tests). */
    static long droppedRows() {
        return DROPPED_ROWS.sum();
    }

    /** Gates open now (tests: none is left behind). */
    static int openGates() {
        return OPEN.size();
    }

    /**
     * A map task's pre-sample as its writer keeps it: a row's group slot, census statistics and
     * level draw ({@link #decide}).
     */
    abstract static class Gate {
        /** The row's values, set before {@link #decide}. */
        final double[] values;

        final Thread owner = Thread.currentThread();
        boolean open;

        /** Rows {@link #decide} dropped. */
        long dropped;

        /** Kept rows {@link #decide} stored itself (returned {@link #TAKEN}). */
        long stored;

        Gate(int numValues) {
            this.values = new double[numValues];
        }

        /**
         * Counts the row (values in {@link #values}) of group {@code prefix + group} and draws its
         * level: {@link #TAKEN} (dropped, or kept and stored here), a kept row's decision (for the
         * writer to store), or {@link #UNDECIDED} (nothing counted).
         */
        abstract int decide(String prefix, long group);
    }

    /**
     * The decision column's function (per task a deserialized copy; the gate it found is kept while
     * open on this thread).
     */
    static final class Decide
            implements UDF2<Object, Object, Integer>,
                    UDF3<Object, Object, Object, Integer>,
                    UDF4<Object, Object, Object, Object, Integer>,
                    UDF5<Object, Object, Object, Object, Object, Integer> {
        private static final long serialVersionUID = 1L;
        private static final Integer UNDECIDED_BOXED = UNDECIDED;
        private final int numValues;
        private final boolean withKey;
        private final String prefix;
        private transient Gate gate;

        Decide(int numValues, boolean withKey, String prefix) {
            this.numValues = numValues;
            this.withKey = withKey;
            this.prefix = prefix;
        }

        @Override
        public Integer call(Object g, Object a) {
            return decide(g, a, null, null, null);
        }

        @Override
        public Integer call(Object g, Object a, Object b) {
            return decide(g, a, b, null, null);
        }

        @Override
        public Integer call(Object g, Object a, Object b, Object c) {
            return decide(g, a, b, c, null);
        }

        @Override
        public Integer call(Object g, Object a, Object b, Object c, Object d) {
            return decide(g, a, b, c, d);
        }

        /** args after the group: the values, then (with a top-k column) whether it is null. */
        private Integer decide(Object g, Object a, Object b, Object c, Object d) {
            Gate gt = gate;
            if (gt == null || !gt.open || gt.owner != Thread.currentThread()) {
                gt = find();
                if (gt == null) {
                    return UNDECIDED_BOXED;
                }
            }
            if (g == null) {
                return UNDECIDED_BOXED;
            }
            if (withKey) {
                Object keyNull = numValues == 1 ? b : numValues == 2 ? c : d;
                if (keyNull == null || (Boolean) keyNull) {
                    return UNDECIDED_BOXED;
                }
            }
            double[] v = gt.values;
            if (!(put(v, 0, a)
                    && (numValues < 2 || put(v, 1, b))
                    && (numValues < 3 || put(v, 2, c)))) {
                return UNDECIDED_BOXED;
            }
            return gt.decide(prefix, ((Number) g).longValue());
        }

        private static boolean put(double[] v, int i, Object x) {
            if (x == null) {
                return false;
            }
            v[i] = (Double) x;
            return true;
        }

        private Gate find() {
            TaskContext tc = TaskContext.get();
            Gate g = tc == null ? null : OPEN.get(tc.taskAttemptId());
            if (g == null || !g.open || g.owner != Thread.currentThread()) {
                return null;
            }
            if (g.values.length != numValues) {
                throw new IllegalStateException(
                        "pre-sample gate of " + g.values.length + " values asked for " + numValues);
            }
            gate = g;
            return g;
        }
    }
}
