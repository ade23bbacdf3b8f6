package io.netapprox.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The DATA_REQUEST a reducer sends for one (map output, reduce partition) block of an approximate
 * shuffle: the block, and the MSR the driver planned for each group's share in it ({@code
 * planning=shares}; groups without one - {@code planning=local}, or a share the plan did not see -
 * get the MSR in the map output's group table, planned from the share alone). The serving executor
 * decodes it from untrusted bytes: every field is checked. {@code deadlineNanos} is what is left of
 * the query's time bound ({@code WITHIN}) when the reducer asks, 0 for none: the server gives it to
 * ATP as the job's deadline, so the groups furthest behind their targets are sent first.
 *
 * <pre>
 *   int magic 'NAR2', int shuffleId, long mapId, int reduceId, int n, n x (UTF group key, double msr),
 *   long deadlineNanos
 * </pre>
 */
record BlockRequest(
        int shuffleId, long mapId, int reduceId, Map<String, Double> msrs, long deadlineNanos) {
    static final int MAGIC = 0x4E415232;

    BlockRequest {
        msrs = Map.copyOf(msrs);
    }

    BlockRequest(int shuffleId, long mapId, int reduceId, Map<String, Double> msrs) {
        this(shuffleId, mapId, reduceId, msrs, 0);
    }

    byte[] encode() {
        try {
            ByteArrayOutputStream b = new ByteArrayOutputStream(32 + 16 * msrs.size());
            DataOutputStream out = new DataOutputStream(b);
            out.writeInt(MAGIC);
            out.writeInt(shuffleId);
            out.writeLong(mapId);
            out.writeInt(reduceId);
            out.writeInt(msrs.size());
            for (Map.Entry<String, Double> e : msrs.entrySet()) {
                out.writeUTF(e.getKey());
                out.writeDouble(e.getValue());
            }
            out.writeLong(deadlineNanos);
            out.flush();
            return b.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static BlockRequest decode(byte[] payload) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(payload));
        try {
            int magic = in.readInt();
            if (magic != MAGIC) {
                throw new IOException(
                        "not a NetApprox block request (magic " + Integer.toHexString(magic) + ")");
            }
            int shuffleId = in.readInt();
            long mapId = in.readLong();
            int reduceId = in.readInt();
            int n = in.readInt();
            // an entry takes at least 2 + 8 bytes
            if (shuffleId < 0 || reduceId < 0 || n < 0 || n > payload.length / 10) {
                throw new IOException(
                        "corrupt NetApprox block request: shuffle "
                                + shuffleId
                                + ", reduce "
                                + reduceId
                                + ", "
                                + n
                                + " groups");
            }
            Map<String, Double> msrs = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                String key = in.readUTF();
                double msr = in.readDouble();
                if (!(msr >= 0 && msr <= 1)) {
                    throw new IOException(
                            "corrupt NetApprox block request: group " + key + " MSR " + msr);
                }
                msrs.put(key, msr);
            }
            long deadline = in.readLong();
            if (deadline < 0) {
                throw new IOException("corrupt NetApprox block request: deadline " + deadline);
            }
            if (in.available() != 0) {
                throw new IOException(
                        "corrupt NetApprox block request: " + in.available() + " trailing bytes");
            }
            return new BlockRequest(shuffleId, mapId, reduceId, msrs, deadline);
        } catch (java.io.EOFException e) {
            throw new IOException("truncated NetApprox block request", e);
        }
    }

    /** The MSR the server applies to {@code group}: the requested one, or the table's. */
    double msrOf(MapOutputFormat.Group group) {
        Double m = msrs.get(group.key());
        return m != null ? m : group.msr();
    }
}
