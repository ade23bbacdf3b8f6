package io.netapprox.spark;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The layout of one reduce partition's segment in an approximate shuffle's map output file (the
 * data file is written and committed with Spark's {@code IndexShuffleBlockResolver}, so sizes,
 * index and cleanup are Spark's):
 *
 * <pre>
 *   int magic 'NAS2', int numValues, boolean withKey, int groups
 *   per group:   UTF key, int messages (N_g), long records, double msr, double e_max,
 *                byte nonFinite (0: every value finite; 1: followed by, per value column, long NaN, long +Inf,
 *                long -Inf counts)
 *   per group, per message: int length, bytes   (message = int records, then records)
 * </pre>
 *
 * A record is {@code numValues} doubles, then (withKey) a UTF string. The same group table (without
 * messages) is the DATA_RESPONSE of the ATP transfer, so the reducer knows N_g, the record count
 * and the non-finite value counts of every group's share exactly (a sum over a column with NaN is
 * NaN whatever the sample).
 */
final class MapOutputFormat {
    static final int MAGIC = 0x4E415332;

    private MapOutputFormat() {}

    /**
     * A group's entry of the table; {@code nonFinite} holds per value column the NaN, +Infinity and
     * -Infinity counts (3 per column).
     */
    record Group(
            String key,
            int messages,
            long records,
            double msr,
            double errorBound,
            long[] nonFinite) {
        /**
         * @return NaN, +Infinity and -Infinity counts of value column v
         */
        long[] nonFinite(int v) {
            return new long[] {nonFinite[3 * v], nonFinite[3 * v + 1], nonFinite[3 * v + 2]};
        }
    }

    /**
     * A parsed segment: table, numValues/withKey, and per group the byte ranges of its messages.
     */
    record Segment(
            int numValues,
            boolean withKey,
            List<Group> groups,
            List<int[]> offsets,
            List<int[]> lengths,
            byte[] data) {}

    static void writeHeader(
            DataOutputStream out, int numValues, boolean withKey, List<Group> groups)
            throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(numValues);
        out.writeBoolean(withKey);
        out.writeInt(groups.size());
        for (Group g : groups) {
            out.writeUTF(g.key());
            out.writeInt(g.messages());
            out.writeLong(g.records());
            out.writeDouble(g.msr());
            out.writeDouble(g.errorBound());
            boolean any = false;
            for (long c : g.nonFinite()) {
                any |= c != 0;
            }
            out.writeByte(any ? 1 : 0);
            if (any) {
                for (long c : g.nonFinite()) {
                    out.writeLong(c);
                }
            }
        }
    }

    record Header(int numValues, boolean withKey, List<Group> groups) {}

    static Header readHeader(DataInputStream in) throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException(
                    "not a NetApprox map output segment (magic "
                            + Integer.toHexString(magic)
                            + ")");
        }
        int nv = in.readInt();
        boolean wk = in.readBoolean();
        int n = in.readInt();
        if (nv < 0 || nv > 4096 || n < 0) {
            throw new IOException(
                    "corrupt NetApprox segment header: values=" + nv + ", groups=" + n);
        }
        List<Group> groups = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            String key = in.readUTF();
            int messages = in.readInt();
            long records = in.readLong();
            double msr = in.readDouble();
            double eMax = in.readDouble();
            long[] nonFinite = new long[3 * nv];
            byte flag = in.readByte();
            if (flag == 1) {
                for (int j = 0; j < nonFinite.length; j++) {
                    nonFinite[j] = in.readLong();
                    if (nonFinite[j] < 0 || nonFinite[j] > records) {
                        throw new IOException(
                                "corrupt NetApprox segment: group "
                                        + key
                                        + " has "
                                        + nonFinite[j]
                                        + " non-finite values of "
                                        + records
                                        + " records");
                    }
                }
            } else if (flag != 0) {
                throw new IOException("corrupt NetApprox segment: non-finite flag " + flag);
            }
            groups.add(new Group(key, messages, records, msr, eMax, nonFinite));
        }
        return new Header(nv, wk, groups);
    }

    static Segment parse(byte[] data) throws IOException {
        ByteArrayInputStream bin = new ByteArrayInputStream(data);
        DataInputStream in = new DataInputStream(bin);
        Header h = readHeader(in);
        List<int[]> offsets = new ArrayList<>();
        List<int[]> lengths = new ArrayList<>();
        int pos = data.length - bin.available();
        for (Group g : h.groups()) {
            int[] off = new int[g.messages()];
            int[] len = new int[g.messages()];
            for (int i = 0; i < g.messages(); i++) {
                if (pos + 4 > data.length) {
                    throw new IOException("truncated NetApprox segment");
                }
                int l =
                        ((data[pos] & 0xff) << 24)
                                | ((data[pos + 1] & 0xff) << 16)
                                | ((data[pos + 2] & 0xff) << 8)
                                | (data[pos + 3] & 0xff);
                pos += 4;
                if (l <= 0 || pos + l > data.length) {
                    throw new IOException("corrupt NetApprox segment: message length " + l);
                }
                off[i] = pos;
                len[i] = l;
                pos += l;
            }
            offsets.add(off);
            lengths.add(len);
        }
        return new Segment(h.numValues(), h.withKey(), h.groups(), offsets, lengths, data);
    }

    static ApproxRow[] decodeMessage(byte[] msg, int numValues, boolean withKey)
            throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(msg));
        int n = in.readInt();
        if (n <= 0 || n > (1 << 20)) {
            throw new IOException("corrupt NetApprox message: " + n + " records");
        }
        ApproxRow[] rows = new ApproxRow[n];
        for (int i = 0; i < n; i++) {
            rows[i] = ApproxRow.read(in, numValues, withKey);
        }
        return rows;
    }
}
