package io.netapprox.spark;

import io.netapprox.core.sampling.ExactSum;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;

/**
 * The layout of one reduce partition's segment in an approximate shuffle's map output file (the
 * data file is written and committed with Spark's {@code IndexShuffleBlockResolver}, so sizes,
 * index and cleanup are Spark's):
 *
 * <pre>
 *   per group, contiguous:  its messages, each  int length, then the message (int records, records)
 *   group table:            int magic 'NAS5', int numValues, boolean withKey, int groups, then per group:
 *                           UTF key, int messages (written), long population (N_g), long records, double msr, double e_max,
 *                           long offset (of its first message, from the segment's start), long length (its bytes),
 *                           byte flags (bit 0: followed by, per value column, long NaN, long +Inf, long -Inf counts;
 *                           bit 1: followed by, per value column, byte 0 or 1 then an ExactSum: the exact partial)
 *   trailer:                int table length, int magic
 * </pre>
 *
 * A record is {@code numValues} doubles, then (withKey) a UTF string. A group's messages are its
 * records - or, with the map-side pre-sample, a uniform sample of them - in random order, so any
 * prefix of them is a simple random sample of the share's {@code records}. {@code messages} are the
 * messages written (ATP's group); {@code population} is N_g, what the share's {@code records} would
 * make at the written messages' average size ({@code messages} when every record was written): the
 * unit in which the MSR is planned and the estimators weigh. The table comes last: the writer
 * streams each group's messages out of its sorter and learns the group's counts (and, under {@code
 * planning=local}, its MSR) while doing so; a reader seeks to the trailer, reads the table, then
 * reads each group's messages in order ({@link SegmentFile}). The same table, with the MSRs the
 * server applies, is the DATA_RESPONSE of the ATP transfer, so the reducer knows N_g, the record
 * count and the non-finite value counts of every group's share exactly - and, per avg/sum column,
 * its exact partial: the {@link ExactSum} of the share's finite values, summed over every record by
 * the map task (not only the pre-sample), a few dozen bytes. The table travels as the DATA_RESPONSE
 * on the control session (TCP), so a partial arrives whenever the block's pull succeeds, whatever
 * ATP delivers of the messages ({@link io.netapprox.core.sampling.GroupEstimator}).
 */
final class MapOutputFormat {
    static final int MAGIC = 0x4E415335;
    static final int TRAILER_BYTES = 8;

    /** Largest group table a reader accepts. */
    static final int MAX_TABLE_BYTES = 256 << 20;

    /** Most records in one message a reader accepts. */
    static final int MAX_RECORDS_PER_MESSAGE = 1 << 20;

    private MapOutputFormat() {}

    /**
     * A group's entry of the table; {@code nonFinite} holds per value column the NaN, +Infinity and
     * -Infinity counts (3 per column). {@code msr} is a rate of {@code population}. {@code
     * partials} holds per value column the exact sum of the share's finite values, or null where no
     * partial was written (a quantile column, {@code exactPartials} off).
     */
    record Group(
            String key,
            int messages,
            long population,
            long records,
            double msr,
            double errorBound,
            long offset,
            long length,
            long[] nonFinite,
            ExactSum[] partials) {
        /**
         * @return NaN, +Infinity and -Infinity counts of value column v
         */
        long[] nonFinite(int v) {
            return new long[] {nonFinite[3 * v], nonFinite[3 * v + 1], nonFinite[3 * v + 2]};
        }

        /** This entry with another MSR (the one the server applies). */
        Group withMsr(double m) {
            return new Group(
                    key,
                    messages,
                    population,
                    records,
                    m,
                    errorBound,
                    offset,
                    length,
                    nonFinite,
                    partials);
        }

        /** Messages the MSR asks of the share, {@code ceil(msr * population)}. */
        long planned() {
            return io.netapprox.core.job.Target.of(msr, population);
        }

        /** Messages taken: the planned ones, at most those written. */
        int target() {
            return (int) Math.min(messages, planned());
        }

        /** True when the plan asks more messages than the pre-sample wrote. */
        boolean shortOfPlan() {
            return planned() > messages;
        }

        /** The MSR of the written messages whose target is {@link #target()} (ATP's group). */
        double writtenMsr() {
            int t = target();
            return t >= messages ? 1.0 : (double) t / messages;
        }

        /**
         * N_g of a share of {@code records} records of which {@code kept} were written in {@code
         * messages} messages.
         */
        static long population(long records, long kept, int messages) {
            if (kept >= records) {
                return messages;
            }
            return Math.max(messages, Math.round((double) records * messages / kept));
        }
    }

    /** A segment's table. */
    record Table(int numValues, boolean withKey, List<Group> groups) {}

    static void writeTable(DataOutputStream out, Table t) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(t.numValues());
        out.writeBoolean(t.withKey());
        out.writeInt(t.groups().size());
        for (Group g : t.groups()) {
            out.writeUTF(g.key());
            out.writeInt(g.messages());
            out.writeLong(g.population());
            out.writeLong(g.records());
            out.writeDouble(g.msr());
            out.writeDouble(g.errorBound());
            out.writeLong(g.offset());
            out.writeLong(g.length());
            boolean any = false;
            for (long c : g.nonFinite()) {
                any |= c != 0;
            }
            boolean withPartials = false;
            for (ExactSum p : g.partials()) {
                withPartials |= p != null;
            }
            out.writeByte((any ? 1 : 0) | (withPartials ? 2 : 0));
            if (any) {
                for (long c : g.nonFinite()) {
                    out.writeLong(c);
                }
            }
            if (withPartials) {
                for (ExactSum p : g.partials()) {
                    out.writeBoolean(p != null);
                    if (p != null) {
                        p.write(out);
                    }
                }
            }
        }
    }

    static byte[] tableBytes(Table t) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        writeTable(out, t);
        out.flush();
        return b.toByteArray();
    }

    /**
     * Parses a table (from a segment or a DATA_RESPONSE: untrusted bytes), checking every field.
     *
     * @param segmentBody bytes of the segment before the table (its groups' messages must lie
     *     within), or -1 when unknown (a DATA_RESPONSE)
     */
    static Table readTable(byte[] bytes, long segmentBody) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        try {
            Table t = readTable(in, segmentBody, bytes.length);
            if (in.available() != 0) {
                throw new IOException(
                        "corrupt NetApprox group table: " + in.available() + " trailing bytes");
            }
            return t;
        } catch (EOFException e) {
            throw new IOException("truncated NetApprox group table", e);
        }
    }

    private static Table readTable(DataInput in, long segmentBody, int tableBytes)
            throws IOException {
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
        // an entry takes at least 2 + 4 + 8 + 8 + 8 + 8 + 8 + 8 + 1 bytes
        if (nv < 0 || nv > 4096 || n < 0 || n > tableBytes / 55) {
            throw new IOException(
                    "corrupt NetApprox segment table: values=" + nv + ", groups=" + n);
        }
        List<Group> groups = new ArrayList<>(n);
        long end = 0;
        for (int i = 0; i < n; i++) {
            String key = in.readUTF();
            int messages = in.readInt();
            long population = in.readLong();
            long records = in.readLong();
            double msr = in.readDouble();
            double eMax = in.readDouble();
            long offset = in.readLong();
            long length = in.readLong();
            String what = "corrupt NetApprox segment table: group " + key + ": ";
            if (messages < 1
                    || records < messages
                    || (population >= messages
                            && (records - 1) / MAX_RECORDS_PER_MESSAGE >= population)) {
                throw new IOException(what + messages + " messages of " + records + " records");
            }
            if (population < messages || population > records) {
                throw new IOException(
                        what
                                + "population of "
                                + population
                                + " messages for "
                                + messages
                                + " written messages of "
                                + records
                                + " records");
            }
            if (!(msr >= 0 && msr <= 1) || !(eMax > 0 && eMax < 1)) {
                throw new IOException(what + "msr " + msr + ", e_max " + eMax);
            }
            if (offset < end
                    || length < 8L * messages
                    || (segmentBody >= 0 && offset + length > segmentBody)) {
                throw new IOException(
                        what + "messages at " + offset + " (" + length + " bytes) out of place");
            }
            end = offset + length;
            long[] nonFinite = new long[3 * nv];
            byte flag = in.readByte();
            if ((flag & ~3) != 0) {
                throw new IOException(what + "flags " + flag);
            }
            if ((flag & 1) != 0) {
                for (int j = 0; j < nonFinite.length; j++) {
                    nonFinite[j] = in.readLong();
                    if (nonFinite[j] < 0 || nonFinite[j] > records) {
                        throw new IOException(
                                what
                                        + nonFinite[j]
                                        + " non-finite values of "
                                        + records
                                        + " records");
                    }
                }
            }
            ExactSum[] partials = new ExactSum[nv];
            if ((flag & 2) != 0) {
                for (int v = 0; v < nv; v++) {
                    if (in.readBoolean()) {
                        partials[v] = ExactSum.read(in);
                        if (partials[v].count() > records) {
                            throw new IOException(
                                    what
                                            + "exact partial of "
                                            + partials[v].count()
                                            + " values of "
                                            + records
                                            + " records");
                        }
                    }
                }
            }
            groups.add(
                    new Group(
                            key,
                            messages,
                            population,
                            records,
                            msr,
                            eMax,
                            offset,
                            length,
                            nonFinite,
                            partials));
        }
        return new Table(nv, wk, groups);
    }

    /**
     * Reads the table of the segment at {@code [start, start + length)} of a data file.
     *
     * @return the table; its groups' offsets are relative to {@code start}
     */
    static Table readTable(FileChannel file, long start, long length) throws IOException {
        if (length < TRAILER_BYTES) {
            throw new IOException("NetApprox segment of " + length + " bytes has no trailer");
        }
        ByteBuffer trailer = ByteBuffer.allocate(TRAILER_BYTES);
        readFully(file, trailer, start + length - TRAILER_BYTES);
        trailer.flip();
        int tableLength = trailer.getInt();
        int magic = trailer.getInt();
        if (magic != MAGIC) {
            throw new IOException(
                    "not a NetApprox map output segment (trailer magic "
                            + Integer.toHexString(magic)
                            + ")");
        }
        if (tableLength < 13
                || tableLength > MAX_TABLE_BYTES
                || tableLength > length - TRAILER_BYTES) {
            throw new IOException(
                    "corrupt NetApprox segment: table of "
                            + tableLength
                            + " bytes in a segment of "
                            + length);
        }
        long body = length - TRAILER_BYTES - tableLength;
        ByteBuffer table = ByteBuffer.allocate(tableLength);
        readFully(file, table, start + body);
        return readTable(table.array(), body);
    }

    static void readFully(FileChannel file, ByteBuffer dst, long position) throws IOException {
        long pos = position;
        while (dst.hasRemaining()) {
            int n = file.read(dst, pos);
            if (n < 0) {
                throw new EOFException("NetApprox segment ends early at byte " + pos);
            }
            pos += n;
        }
    }

    /** Writes the trailer after a table of {@code tableLength} bytes. */
    static void writeTrailer(DataOutputStream out, int tableLength) throws IOException {
        out.writeInt(tableLength);
        out.writeInt(MAGIC);
    }

    /**
     * Reads one message's records (untrusted bytes), calling {@code sink} for each.
     *
     * @return the number of records
     */
    static int readMessage(DataInput in, int numValues, boolean withKey, RecordSink sink)
            throws IOException {
        int n = in.readInt();
        if (n <= 0 || n > MAX_RECORDS_PER_MESSAGE) {
            throw new IOException("corrupt NetApprox message: " + n + " records");
        }
        for (int i = 0; i < n; i++) {
            sink.accept(ApproxRow.read(in, numValues, withKey));
        }
        return n;
    }

    /** Receives the records of a message. */
    @FunctionalInterface
    interface RecordSink {
        void accept(ApproxRow row) throws IOException;
    }

    /** Decodes a whole message (tests and tools). */
    static ApproxRow[] decodeMessage(byte[] msg, int numValues, boolean withKey)
            throws IOException {
        List<ApproxRow> rows = new ArrayList<>();
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(msg));
        readMessage(in, numValues, withKey, rows::add);
        return rows.toArray(new ApproxRow[0]);
    }
}
