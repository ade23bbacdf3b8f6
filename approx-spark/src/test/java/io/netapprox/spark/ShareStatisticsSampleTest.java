package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.AggregateKind;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The map side's sketch input ({@link ShareStatistics.Builder#sample(byte[], int)}): the records'
 * bytes are read in place, with the same sketch as from the decoded rows, and without a stream or
 * row per record (the writer samples up to {@link ShareStatistics#SKETCH_SAMPLE} records per
 * share).
 */
class ShareStatisticsSampleTest {
    private static final int RECORDS = 200_000;

    private static ApproxSpec spec(AggregateKind second) {
        return new ApproxSpec(
                List.of("hour"),
                List.of(
                        new ApproxSpec.Aggregate(AggregateKind.AVG, "fare", 0, 0, 0),
                        new ApproxSpec.Aggregate(second, "distance", 1, 0.5, 0)),
                2,
                0.05,
                Map.of(),
                0.95,
                1,
                false);
    }

    /** Records as the sorter hands them to the writer: ApproxRow's form, with a top-k key. */
    private static byte[][] records(int n, boolean withKey) throws IOException {
        SplittableRandom rnd = new SplittableRandom(7);
        byte[][] out = new byte[n][];
        for (int i = 0; i < n; i++) {
            double d = i % 97 == 0 ? Double.NaN : rnd.nextDouble() * 50;
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            new ApproxRow(new double[] {rnd.nextDouble() * 10, d}, "k" + (i % 13))
                    .write(new DataOutputStream(b), withKey);
            out[i] = b.toByteArray();
        }
        return out;
    }

    @Test
    void sketchFromBytesEqualsSketchFromRows() throws IOException {
        for (boolean withKey : new boolean[] {false, true}) {
            byte[][] recs = records(5000, withKey);
            ShareStatistics.Builder fromBytes =
                    new ShareStatistics.Builder(spec(AggregateKind.QUANTILE));
            double[] kept = new double[recs.length];
            int nKept = 0;
            for (byte[] r : recs) {
                ApproxRow row =
                        ApproxRow.read(
                                new DataInputStream(new ByteArrayInputStream(r)), 2, withKey);
                fromBytes.add(row).sample(r, r.length);
                if (!Double.isNaN(row.values[1])) {
                    kept[nKept++] = row.values[1];
                }
            }
            ShareStatistics a = fromBytes.build(recs.length);
            assertNull(a.sketches[0], "no quantile of column 0: no sketch");
            // the reference: the same values as the decoded rows give, in the same order
            io.netapprox.core.sampling.ValueSketch ref =
                    io.netapprox.core.sampling.ValueSketch.ofSample(
                            kept,
                            nKept,
                            a.sketches[1].count(),
                            io.netapprox.core.sampling.ValueSketch.DEFAULT_POINTS);
            assertArrayEquals(ref.points(), a.sketches[1].points());
            assertEquals(nKept, a.sketches[1].count());
        }
    }

    @Test
    void shortRecordIsRejected() {
        ShareStatistics.Builder b = new ShareStatistics.Builder(spec(AggregateKind.QUANTILE));
        assertThrows(IndexOutOfBoundsException.class, () -> b.sample(new byte[12], 12));
    }

    private static long allocated() {
        return ((com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean())
                .getCurrentThreadAllocatedBytes();
    }

    /**
     * An allocation count, not a timing: sampling {@value #RECORDS} records allocates nothing per
     * record for an avg/sum query and only the sketch's own array growth for a median. The decoding
     * the writer did before (a DataInputStream and a row per record) is measured alongside and
     * printed.
     */
    @Test
    void samplingAllocatesNothingPerRecord() throws IOException {
        byte[][] recs = records(RECORDS, false);
        for (int warm = 0; warm < 3; warm++) {
            sampleAll(new ShareStatistics.Builder(spec(AggregateKind.SUM)), recs);
            sampleAll(new ShareStatistics.Builder(spec(AggregateKind.QUANTILE)), recs);
            decodeAll(recs);
        }
        ShareStatistics.Builder sum = new ShareStatistics.Builder(spec(AggregateKind.SUM));
        long t0 = allocated();
        sampleAll(sum, recs);
        long sumBytes = allocated() - t0;
        ShareStatistics.Builder med = new ShareStatistics.Builder(spec(AggregateKind.QUANTILE));
        t0 = allocated();
        sampleAll(med, recs);
        long medBytes = allocated() - t0;
        t0 = allocated();
        decodeAll(recs);
        long oldBytes = allocated() - t0;
        // the sketch's array doubles up to SKETCH_SAMPLE values: 16 + 32 + ... + 65536 doubles
        long sketchGrowth = 2L * ShareStatistics.SKETCH_SAMPLE * Double.BYTES;
        System.out.printf(
                "[spark] sketch input of %d records: avg/sum query %d bytes allocated, median %d"
                        + " bytes (sketch growth <= %d), per-record DataInputStream + row decoding"
                        + " %d bytes (%.0f per record)%n",
                RECORDS, sumBytes, medBytes, sketchGrowth, oldBytes, (double) oldBytes / RECORDS);
        assertTrue(sumBytes < 4096, "avg/sum query: " + sumBytes + " bytes allocated");
        assertTrue(
                medBytes < sketchGrowth + 4096,
                "median: " + medBytes + " bytes allocated, sketch growth " + sketchGrowth);
    }

    private static void sampleAll(ShareStatistics.Builder b, byte[][] recs) {
        for (byte[] r : recs) {
            b.sample(r, r.length);
        }
    }

    private static double sink;

    /** What the writer did per sketched record before: a stream and a row each. */
    private static void decodeAll(byte[][] recs) throws IOException {
        double s = 0;
        for (byte[] r : recs) {
            ApproxRow row =
                    ApproxRow.read(
                            new DataInputStream(new ByteArrayInputStream(r, 0, r.length)),
                            2,
                            false);
            s += row.values[1];
        }
        sink = s;
    }
}
