package io.netapprox.spark;

import io.netty.buffer.ByteBuf;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.apache.spark.network.buffer.FileSegmentManagedBuffer;
import org.apache.spark.network.buffer.ManagedBuffer;

/**
 * One reduce partition's segment of an approximate map output, read from the data file by
 * positional reads, never loaded whole: the group table first (from the segment's end, {@link
 * MapOutputFormat}), then each group's messages in order - message by message for the ATP sender
 * (which interleaves the groups), or as a buffered stream for a reducer reading its own executor's
 * output. Its memory is the table plus two numbers per group. Every length read from the file is
 * checked against the table. Not thread-safe.
 */
final class SegmentFile implements Closeable {
    private final FileChannel file;
    private final long start;
    private final MapOutputFormat.Table table;
    private final long[] next;
    private final int[] nextLength;
    private final int[] read;

    private SegmentFile(FileChannel file, long start, long length) throws IOException {
        this.file = file;
        this.start = start;
        this.table = MapOutputFormat.readTable(file, start, length);
        int n = table.groups().size();
        this.next = new long[n];
        this.nextLength = new int[n];
        this.read = new int[n];
        for (int g = 0; g < n; g++) {
            next[g] = table.groups().get(g).offset();
        }
        Arrays.fill(nextLength, -1);
    }

    /** Opens the segment a block resolver returned (a file segment). */
    static SegmentFile open(ManagedBuffer block) throws IOException {
        if (!(block instanceof FileSegmentManagedBuffer f)) {
            throw new IOException(
                    "NetApprox map output is not a file segment: " + block.getClass().getName());
        }
        return open(f.getFile(), f.getOffset(), f.getLength());
    }

    static SegmentFile open(File data, long offset, long length) throws IOException {
        FileChannel ch = FileChannel.open(data.toPath(), StandardOpenOption.READ);
        try {
            if (offset < 0 || length < 0 || offset + length > ch.size()) {
                throw new IOException(
                        "NetApprox segment ["
                                + offset
                                + ", +"
                                + length
                                + ") outside "
                                + data
                                + " ("
                                + ch.size()
                                + " bytes)");
            }
            return new SegmentFile(ch, offset, length);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    MapOutputFormat.Table table() {
        return table;
    }

    /**
     * Appends the next message of group {@code g} (its messages are read in order) to {@code out}.
     *
     * @return the message's length
     */
    int readNext(int g, ByteBuf out) throws IOException {
        MapOutputFormat.Group gr = table.groups().get(g);
        if (read[g] >= gr.messages()) {
            throw new IllegalStateException("group " + gr.key() + ": every message was read");
        }
        long end = start + gr.offset() + gr.length();
        long pos = start + next[g];
        int len = nextLength[g];
        if (len < 0) {
            ByteBuffer b = ByteBuffer.allocate(4);
            MapOutputFormat.readFully(file, b, pos);
            len = b.getInt(0);
            pos += 4;
        }
        boolean more = read[g] + 1 < gr.messages();
        if (len <= 0 || pos + len + (more ? 4 : 0) > end) {
            throw new IOException(
                    "corrupt NetApprox segment: group "
                            + gr.key()
                            + ", message "
                            + read[g]
                            + " of "
                            + len
                            + " bytes");
        }
        // one read: this message and the next one's length
        int want = len + (more ? 4 : 0);
        int at = out.writerIndex();
        out.ensureWritable(want);
        int got = 0;
        while (got < want) {
            int r = out.writeBytes(file, pos + got, want - got);
            if (r < 0) {
                throw new IOException("NetApprox segment ends early");
            }
            got += r;
        }
        if (more) {
            nextLength[g] = out.getInt(at + len);
            out.writerIndex(at + len);
        }
        next[g] = pos + want - start;
        read[g]++;
        return len;
    }

    /** The messages of group {@code g} as a stream: {@code int length, bytes} per message. */
    DataInputStream stream(int g) {
        MapOutputFormat.Group gr = table.groups().get(g);
        return new DataInputStream(
                new BufferedInputStream(
                        new Region(start + gr.offset(), start + gr.offset() + gr.length()),
                        1 << 16));
    }

    /** A region of the file as an input stream (positional reads: the channel has no cursor). */
    private final class Region extends InputStream {
        private long pos;
        private final long end;

        Region(long from, long to) {
            this.pos = from;
            this.end = to;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (pos >= end) {
                return -1;
            }
            int n = file.read(ByteBuffer.wrap(b, off, (int) Math.min(len, end - pos)), pos);
            if (n > 0) {
                pos += n;
            }
            return n;
        }
    }

    @Override
    public void close() throws IOException {
        file.close();
    }
}
