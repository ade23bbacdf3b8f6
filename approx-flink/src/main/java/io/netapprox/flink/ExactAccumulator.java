package io.netapprox.flink;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Window state of the exact topology (flag off): everything a group's records contribute, kept
 * exactly. A Flink POJO; sums, counts and key counts are O(1) and O(keys), quantiles keep every
 * value (as an exact median must).
 */
public class ExactAccumulator {
    /** Records. */
    public long count;

    /** Per value index: the sum of the values. */
    public double[] sums;

    /**
     * Per value index: every value (quantile aggregates only; else empty), first {@code n} used.
     */
    public double[][] values;

    /** Per value index: how many entries of {@link #values} are used. */
    public int[] valueCounts;

    /** TopK only: records per key (a null key too). */
    public Map<String, Long> keyCounts;

    public ExactAccumulator() {}

    static ExactAccumulator create(int valueCount, boolean[] keepValues, boolean withKeys) {
        ExactAccumulator a = new ExactAccumulator();
        a.sums = new double[valueCount];
        a.values = new double[valueCount][];
        a.valueCounts = new int[valueCount];
        for (int i = 0; i < valueCount; i++) {
            a.values[i] = keepValues[i] ? new double[16] : new double[0];
        }
        a.keyCounts = withKeys ? new HashMap<>() : null;
        return a;
    }

    void add(double[] v, boolean[] keepValues, String key) {
        count++;
        for (int i = 0; i < v.length; i++) {
            sums[i] += v[i];
            if (keepValues[i]) {
                if (valueCounts[i] == values[i].length) {
                    values[i] = Arrays.copyOf(values[i], values[i].length * 2);
                }
                values[i][valueCounts[i]++] = v[i];
            }
        }
        if (keyCounts != null) {
            keyCounts.merge(key, 1L, Long::sum);
        }
    }

    void merge(ExactAccumulator o) {
        count += o.count;
        for (int i = 0; i < sums.length; i++) {
            sums[i] += o.sums[i];
            if (o.valueCounts[i] > 0) {
                double[] m = Arrays.copyOf(values[i], valueCounts[i] + o.valueCounts[i]);
                System.arraycopy(o.values[i], 0, m, valueCounts[i], o.valueCounts[i]);
                values[i] = m;
                valueCounts[i] += o.valueCounts[i];
            }
        }
        if (keyCounts != null && o.keyCounts != null) {
            o.keyCounts.forEach((k, c) -> keyCounts.merge(k, c, Long::sum));
        }
    }
}
