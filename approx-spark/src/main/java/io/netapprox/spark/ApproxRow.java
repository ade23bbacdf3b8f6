package io.netapprox.spark;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.util.Arrays;

/**
 * One record of an approximate query's shuffle: the numeric values the aggregates read and, for
 * top-k, the key column's value. Serializable for the exact (sort shuffle) path; the approximate
 * path frames it itself.
 */
public final class ApproxRow implements Serializable {
    private static final long serialVersionUID = 1L;

    public final double[] values;
    public final String key;

    public ApproxRow(double[] values, String key) {
        this.values = values;
        this.key = key;
    }

    void write(DataOutputStream out, boolean withKey) throws IOException {
        for (double v : values) {
            out.writeDouble(v);
        }
        if (withKey) {
            out.writeUTF(key == null ? "" : key);
        }
    }

    static ApproxRow read(java.io.DataInput in, int numValues, boolean withKey) throws IOException {
        double[] v = new double[numValues];
        for (int i = 0; i < numValues; i++) {
            v[i] = in.readDouble();
        }
        return new ApproxRow(v, withKey ? in.readUTF() : null);
    }

    @Override
    public String toString() {
        return Arrays.toString(values) + (key == null ? "" : " " + key);
    }
}
