package io.netapprox.spark;

import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
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

    private static final VarHandle DOUBLE_BE =
            MethodHandles.byteArrayViewVarHandle(double[].class, ByteOrder.BIG_ENDIAN);

    /**
     * Value {@code i} of a record in the form {@link #write} writes (the values first, each as
     * {@link DataOutputStream#writeDouble}), read in place: no stream or row per record.
     *
     * @throws IndexOutOfBoundsException if the record's {@code len} bytes do not hold value {@code
     *     i}
     */
    static double value(byte[] record, int len, int i) {
        int off = Math.multiplyExact(i, Double.BYTES);
        java.util.Objects.checkFromIndexSize(off, Double.BYTES, len);
        return (double) DOUBLE_BE.get(record, off);
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
