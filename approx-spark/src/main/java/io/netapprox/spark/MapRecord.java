package io.netapprox.spark;

import org.apache.spark.sql.catalyst.InternalRow;

/**
 * One input row of an approximate shuffle's map side, read in place and not yet a record: its group
 * key (and the group's index within the map task), its values in a buffer reused for every row, and
 * the top-k column still in the input row. {@link ApproxQuery.MapRecords} yields one such object
 * per map task, refilled for every row; {@link ApproxShuffleWriter} decides the row's fate (share
 * statistics, pre-sample level) from it and materialises the top-k string only for a row the
 * pre-sample keeps - a dropped row costs no object. Valid until the iterator's next call: only a
 * consumer that uses each record before asking for the next (the approximate writer) may see it;
 * {@link #_2()} makes a standalone {@link ApproxRow} for any other.
 */
final class MapRecord implements scala.Product2<String, ApproxRow> {
    String key;

    /** The group's index within the map task (0, 1, ... in first-seen order); -1: not indexed. */
    int group;

    /**
     * The pre-sample's decision made in Spark's code ({@link PreSampleGate}): a kept row's {@code
     * gid << 8 | level} (its statistics counted and level drawn), else {@link
     * PreSampleGate#UNDECIDED}.
     */
    int decision = PreSampleGate.UNDECIDED;

    final double[] values;
    private final boolean withKey;
    private final int keyColumn;
    InternalRow row;

    MapRecord(int numValues, boolean withKey, int keyColumn) {
        this.values = new double[numValues];
        this.withKey = withKey;
        this.keyColumn = keyColumn;
    }

    /** The top-k column's value (made now: call only for a row that is kept), else null. */
    String topKey() {
        return withKey ? row.getUTF8String(keyColumn).toString() : null;
    }

    /** The top-k column's value in place (Spark's string over the input row), else null. */
    org.apache.spark.unsafe.types.UTF8String topKeyInPlace() {
        return withKey ? row.getUTF8String(keyColumn) : null;
    }

    @Override
    public String _1() {
        return key;
    }

    /** A standalone copy of the row's values and top-k value. */
    @Override
    public ApproxRow _2() {
        return new ApproxRow(values.clone(), topKey());
    }

    @Override
    public boolean canEqual(Object that) {
        return false;
    }
}
