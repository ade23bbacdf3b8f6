package io.netapprox.flink;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * One stratum's records at a sender during an epoch: the values the query's aggregates read (and
 * the top-k key), nothing else. Grows by doubling; the sender bounds the total per epoch ({@code
 * approx.epochMaxRecords}).
 */
final class StratumBuffer {
    private final int width;
    private double[] values;
    private String[] keys;
    private int records;
    private NonFinite nonFinite = NonFinite.NONE;

    StratumBuffer(int width, boolean withKeys) {
        this.width = width;
        this.values = new double[Math.max(1, width) * 8];
        this.keys = withKeys ? new String[8] : null;
    }

    /** Adds one record: its values (NaN and infinities included, and counted) and top-k key. */
    void add(double[] v, String key) {
        for (int i = 0; i < width; i++) {
            if (!Double.isFinite(v[i])) {
                if (nonFinite == NonFinite.NONE) {
                    nonFinite = new NonFinite(width);
                }
                nonFinite.add(i, v[i]);
            }
        }
        if ((records + 1) * width > values.length) {
            values = Arrays.copyOf(values, Math.max(values.length * 2, (records + 1) * width));
        }
        System.arraycopy(v, 0, values, records * width, width);
        if (keys != null) {
            if (records == keys.length) {
                keys = Arrays.copyOf(keys, keys.length * 2);
            }
            keys[records] = key;
        }
        records++;
    }

    int records() {
        return records;
    }

    /** The NaN and infinite values among the records, per value column. */
    NonFinite nonFinite() {
        return nonFinite;
    }

    int width() {
        return width;
    }

    double value(int record, int index) {
        return values[record * width + index];
    }

    String key(int record) {
        return keys == null ? null : keys[record];
    }

    boolean hasKeys() {
        return keys != null;
    }

    /**
     * Puts the records in random order (Fisher-Yates), so that any subset of the messages framed
     * from them is a simple random sample of the stratum's records.
     */
    void permute(SplittableRandom rnd) {
        for (int i = records - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            if (i != j) {
                for (int v = 0, a = i * width, b = j * width; v < width; v++, a++, b++) {
                    double t = values[a];
                    values[a] = values[b];
                    values[b] = t;
                }
                if (keys != null) {
                    String k = keys[i];
                    keys[i] = keys[j];
                    keys[j] = k;
                }
            }
        }
    }

    /** First record of message {@code m} when the records are spread evenly over {@code k}. */
    static int start(int m, int n, int k) {
        return (int) ((long) m * n / k);
    }
}
