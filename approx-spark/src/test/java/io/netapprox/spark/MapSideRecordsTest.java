package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netapprox.core.sampling.ShareMoments;
import io.netapprox.core.sampling.StratumAccumulator;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/**
 * The map side's per-record path: {@link ApproxQuery.RowRecords} (Spark's internal rows to shuffle
 * records, read in place) and {@link ShareStatistics.CensusMoments} (the census moments planning
 * reads, without the accumulator's fourth-order and exact-total work).
 */
class MapSideRecordsTest {

    private static List<Tuple2<String, ApproxRow>> convert(
            ApproxQuery.RowRecords f, List<InternalRow> rows) {
        List<Tuple2<String, ApproxRow>> out = new ArrayList<>();
        Iterator<Tuple2<String, ApproxRow>> it = f.call(rows.iterator());
        while (it.hasNext()) {
            out.add(it.next());
        }
        return out;
    }

    private static GenericInternalRow row(Object... values) {
        return new GenericInternalRow(values);
    }

    @Test
    void oneGroupColumnMakesEachKeyOnceAndSkipsNulls() {
        ApproxQuery.RowRecords f = new ApproxQuery.RowRecords(new String[] {"hour"}, 2, false);
        List<InternalRow> rows =
                List.of(
                        row(UTF8String.fromString("17"), 1.5, 2.5),
                        row(null, 1.0, 1.0), // null group: skipped
                        row(UTF8String.fromString("3"), null, 1.0), // null value: skipped
                        row(UTF8String.fromString("17"), -0.0, Double.NaN),
                        row(UTF8String.fromString("3"), 4.0, 5.0));
        List<Tuple2<String, ApproxRow>> out = convert(f, rows);
        assertEquals(3, out.size());
        assertEquals("hour=17", out.get(0)._1());
        assertArrayEquals(new double[] {1.5, 2.5}, out.get(0)._2().values);
        assertNull(out.get(0)._2().key);
        assertSame(out.get(0)._1(), out.get(1)._1(), "one key string per distinct group value");
        assertEquals(
                Double.doubleToRawLongBits(-0.0),
                Double.doubleToRawLongBits(out.get(1)._2().values[0]));
        assertEquals("hour=3", out.get(2)._1());
    }

    @Test
    void aReusedRowBufferDoesNotChangeRememberedKeys() {
        // Spark's unsafe rows point into buffers it reuses: the keys must stay right (the key cache
        // keeps its own copy of each value)
        byte[] buf = "10".getBytes(StandardCharsets.UTF_8);
        ApproxQuery.RowRecords f = new ApproxQuery.RowRecords(new String[] {"hour"}, 1, false);
        Iterator<Tuple2<String, ApproxRow>> it =
                f.call(
                        new Iterator<InternalRow>() {
                            int i;

                            @Override
                            public boolean hasNext() {
                                return i < 3;
                            }

                            @Override
                            public InternalRow next() {
                                // rows: "10", "11" (same buffer, rewritten), "10" again
                                buf[1] = (byte) (i == 1 ? '1' : '0');
                                i++;
                                return row(UTF8String.fromBytes(buf), (double) i);
                            }
                        });
        assertEquals("hour=10", it.next()._1());
        assertEquals("hour=11", it.next()._1());
        assertEquals("hour=10", it.next()._1());
        assertFalse(it.hasNext());
    }

    @Test
    void severalGroupColumnsAndTopKKey() {
        ApproxQuery.RowRecords f = new ApproxQuery.RowRecords(new String[] {"a", "b"}, 1, true);
        List<Tuple2<String, ApproxRow>> out =
                convert(
                        f,
                        List.of(
                                row(
                                        UTF8String.fromString("1"),
                                        UTF8String.fromString("x"),
                                        2.0,
                                        UTF8String.fromString("z9")),
                                row(
                                        UTF8String.fromString("1"),
                                        null,
                                        2.0,
                                        UTF8String.fromString("z")),
                                row(
                                        UTF8String.fromString("1"),
                                        UTF8String.fromString("y"),
                                        2.0,
                                        null)));
        assertEquals(1, out.size(), "null group column or null top-k column: skipped");
        assertEquals("a=1,b=x", out.get(0)._1());
        assertEquals("z9", out.get(0)._2().key);
    }

    @Test
    void integralGroupColumnsAreKeyedByTheirDecimalForm() {
        // what Spark's cast to string writes: the decimal form, '-' for negatives
        ApproxQuery.RowRecords one =
                new ApproxQuery.RowRecords(
                        new String[] {"hour"}, new byte[] {ApproxQuery.RowRecords.INT}, 1, false);
        List<Tuple2<String, ApproxRow>> out =
                convert(
                        one,
                        List.of(
                                row(17, 1.0),
                                row(17, 2.0),
                                row(-3, 3.0),
                                row(ApproxQuery.RowRecords.KEY_CACHE + 5, 4.0),
                                row(null, 5.0)));
        assertEquals(4, out.size());
        assertEquals("hour=17", out.get(0)._1());
        assertSame(out.get(0)._1(), out.get(1)._1());
        assertEquals("hour=-3", out.get(2)._1());
        assertEquals("hour=" + (ApproxQuery.RowRecords.KEY_CACHE + 5), out.get(3)._1());
        ApproxQuery.RowRecords mixed =
                new ApproxQuery.RowRecords(
                        new String[] {"a", "b", "c", "d"},
                        new byte[] {
                            ApproxQuery.RowRecords.LONG,
                            ApproxQuery.RowRecords.STRING,
                            ApproxQuery.RowRecords.SHORT,
                            ApproxQuery.RowRecords.BYTE
                        },
                        1,
                        false);
        out =
                convert(
                        mixed,
                        List.of(
                                row(
                                        Long.MIN_VALUE,
                                        UTF8String.fromString("x"),
                                        (short) -7,
                                        (byte) 12,
                                        1.0)));
        assertEquals("a=" + Long.MIN_VALUE + ",b=x,c=-7,d=12", out.get(0)._1());
    }

    /** A row that counts the reads of one string column (the top-k column). */
    private static final class CountingRow extends GenericInternalRow {
        private final int counted;
        private final int[] reads;

        CountingRow(int counted, int[] reads, Object... values) {
            super(values);
            this.counted = counted;
            this.reads = reads;
        }

        @Override
        public UTF8String getUTF8String(int ordinal) {
            if (ordinal == counted) {
                reads[0]++;
            }
            return super.getUTF8String(ordinal);
        }
    }

    @Test
    void mapRecordsReuseOneRecordAndReadTheTopKColumnOnlyWhenAsked() {
        // the approximate path's records: one object per task, refilled per row, with the group's
        // index in first-seen order; the top-k string is made only when the writer keeps the row
        int[] reads = {0};
        List<InternalRow> rows =
                List.of(
                        new CountingRow(2, reads, UTF8String.fromString("17"), 1.5, s("a")),
                        new CountingRow(2, reads, null, 1.0, s("b")), // null group: skipped
                        new CountingRow(2, reads, UTF8String.fromString("3"), 2.5, s("c")),
                        new CountingRow(2, reads, UTF8String.fromString("17"), -0.0, s("d")),
                        new CountingRow(2, reads, UTF8String.fromString("3"), 4.0, null));
        ApproxQuery.RowRecords f = new ApproxQuery.RowRecords(new String[] {"hour"}, 1, true);
        Iterator<scala.Product2<String, ApproxRow>> it =
                new ApproxQuery.MapRecords(f).call(rows.iterator());
        List<String> keys = new ArrayList<>();
        List<Integer> groups = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        Object first = null;
        while (it.hasNext()) {
            scala.Product2<String, ApproxRow> r = it.next();
            MapRecord m = (MapRecord) r;
            first = first == null ? m : first;
            assertSame(first, m, "one record per task");
            keys.add(m._1());
            groups.add(m.group);
            values.add(m.values[0]);
        }
        assertEquals(0, reads[0], "no top-k string made for rows never kept");
        assertEquals(List.of("hour=17", "hour=3", "hour=17"), keys);
        assertEquals(List.of(0, 1, 0), groups);
        assertEquals(List.of(1.5, 2.5, -0.0), values);
        // a kept row's top-k value (and the standalone copy) come from the current row
        it = new ApproxQuery.MapRecords(f).call(rows.iterator());
        MapRecord m = (MapRecord) it.next();
        assertEquals("a", m.topKey());
        assertEquals(1, reads[0]);
        ApproxRow copy = m._2();
        it.next();
        assertEquals("a", copy.key);
        assertArrayEquals(new double[] {1.5}, copy.values);
        assertEquals("c", m.topKey());
        // the same rows as RowRecords makes them
        List<Tuple2<String, ApproxRow>> made = convert(f, rows);
        assertEquals(3, made.size());
        for (int i = 0; i < made.size(); i++) {
            assertEquals(keys.get(i), made.get(i)._1());
            assertEquals(values.get(i), made.get(i)._2().values[0]);
        }
    }

    private static UTF8String s(String v) {
        return UTF8String.fromString(v);
    }

    @Test
    void censusMomentsAreTheAccumulatorsBitForBit() {
        SplittableRandom rnd = new SplittableRandom(11);
        for (int n : new int[] {0, 1, 2, 3, 4, 17, 1000, 50_000}) {
            for (double offset : new double[] {0, 1e6, -3e9}) {
                StratumAccumulator reference = new StratumAccumulator();
                ShareStatistics.CensusMoments census = new ShareStatistics.CensusMoments();
                for (int i = 0; i < n; i++) {
                    // skewed (lognormal) values around an offset
                    double x = offset + Math.exp(rnd.nextGaussian() * 1.3) * 7;
                    reference.add(x);
                    census.add(x);
                }
                long units = Math.max(1, (n + 31) / 32);
                if (n == 0) {
                    units = 0;
                }
                ShareMoments want = ShareMoments.of(reference, units);
                ShareMoments got = census.moments(units);
                assertEquals(want.units(), got.units());
                assertEquals(want.records(), got.records());
                assertEquals(bits(want.mean()), bits(got.mean()), "mean, n=" + n);
                assertEquals(bits(want.variance()), bits(got.variance()), "variance, n=" + n);
                assertEquals(
                        bits(want.thirdMoment()), bits(got.thirdMoment()), "third moment, n=" + n);
            }
        }
    }

    private static long bits(double d) {
        return Double.doubleToLongBits(d);
    }
}
