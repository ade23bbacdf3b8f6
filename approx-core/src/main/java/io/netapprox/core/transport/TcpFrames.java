package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.ArrayList;
import java.util.List;

/**
 * The TCP data plane's frames (docs/control-plane.md section 3.3): what a session's data connection
 * carries after its attach, both directions. All integers big-endian; a 9-byte header {@code type
 * u8, job u32, body_length u32}, then the body:
 *
 * <pre>
 * 1 START   flags u8 (bit 0 MRDF; others 0), group_count u32 (>= 1),
 *           group_count x {group_id u64, n_g u32 (>= 1), msr f64 in [0, 1]}    sender to receiver
 * 2 MSG     group_index u32, index u32, payload (>= 1 byte)                      sender to receiver
 * 3 UPDATE  count u32 (>= 1), count x {group_index u32, msr f64 in [0, 1]}      sender to receiver
 * 4 DONE    group_count u32, group_count x delivered u32                         receiver to sender
 * 5 CANCEL  status i32 (an engine status code, not 0)                            sender to receiver
 * </pre>
 *
 * The job model's rules hold (the same limits as the engine's: {@link AtpConfig#maxGroupsPerJob()},
 * {@link AtpConfig#maxMessagesPerJob()}, {@link AtpConfig#maxMessageBytes()}); the session checks
 * what depends on its state (a job's groups, duplicates). The version is the control protocol's,
 * negotiated before the connection exists.
 */
final class TcpFrames {
    static final int HEADER = 9;
    static final int START = 1;
    static final int MSG = 2;
    static final int UPDATE = 3;
    static final int DONE = 4;
    static final int CANCEL = 5;

    /** The MSG header before the payload: frame header, group index, index. */
    static final int MSG_OVERHEAD = HEADER + 8;

    private TcpFrames() {}

    // ---- decoded frames -------------------------------------------------------------------------

    sealed interface Frame permits Start, Msg, Update, Done, Cancel, Failure {}

    record Start(int job, JobSpec spec) implements Frame {}

    /** {@code payload} is a retained slice of the input: the receiver releases it. */
    record Msg(int job, int groupIndex, int index, ByteBuf payload) implements Frame {}

    record Update(int job, int[] groupIndex, double[] msr) implements Frame {}

    record Done(int job, int[] delivered) implements Frame {}

    record Cancel(int job, AtpStatus status) implements Frame {}

    /** The first violation on the connection; nothing is decoded after it. */
    record Failure(String message) implements Frame {}

    // ---- encoding -------------------------------------------------------------------------------

    static int startLength(JobSpec spec) {
        return HEADER + 5 + 20 * spec.groups().size();
    }

    static void writeStart(ByteBuf out, int job, JobSpec spec) {
        header(out, START, job, 5 + 20 * spec.groups().size());
        out.writeByte(spec.mrdf() ? 1 : 0);
        out.writeInt(spec.groups().size());
        for (GroupSpec g : spec.groups()) {
            out.writeLong(g.groupId());
            out.writeInt(g.size());
            out.writeDouble(g.msr());
        }
    }

    static void writeMsgHeader(ByteBuf out, int job, int groupIndex, int index, int length) {
        header(out, MSG, job, 8 + length);
        out.writeInt(groupIndex);
        out.writeInt(index);
    }

    static int updateLength(int count) {
        return HEADER + 4 + 12 * count;
    }

    static void writeUpdate(ByteBuf out, int job, int[] groupIndex, double[] msr) {
        header(out, UPDATE, job, 4 + 12 * groupIndex.length);
        out.writeInt(groupIndex.length);
        for (int i = 0; i < groupIndex.length; i++) {
            out.writeInt(groupIndex[i]);
            out.writeDouble(msr[i]);
        }
    }

    static int doneLength(int groups) {
        return HEADER + 4 + 4 * groups;
    }

    static void writeDone(ByteBuf out, int job, int[] delivered) {
        header(out, DONE, job, 4 + 4 * delivered.length);
        out.writeInt(delivered.length);
        for (int d : delivered) {
            out.writeInt(d);
        }
    }

    static final int CANCEL_LENGTH = HEADER + 4;

    static void writeCancel(ByteBuf out, int job, AtpStatus status) {
        header(out, CANCEL, job, 4);
        out.writeInt(status.code());
    }

    private static void header(ByteBuf out, int type, int job, int bodyLength) {
        out.writeByte(type);
        out.writeInt(job);
        out.writeInt(bodyLength);
    }

    // ---- decoding -------------------------------------------------------------------------------

    /**
     * Strict, exception-free decoder: every length is checked against its type's limit as soon as
     * the header is in (before the body is buffered), every field is validated and a body must be
     * consumed exactly. The first violation becomes one {@link Failure} and the rest of the input
     * is discarded.
     */
    static final class Decoder extends ByteToMessageDecoder {
        private final int maxGroups;
        private final int maxMessages;
        private final int maxMessageBytes;
        private boolean failed;

        Decoder(AtpConfig limits) {
            this.maxGroups = limits.maxGroupsPerJob();
            this.maxMessages = limits.maxMessagesPerJob();
            this.maxMessageBytes = limits.maxMessageBytes();
        }

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (failed) {
                in.skipBytes(in.readableBytes());
                return;
            }
            int r = in.readerIndex();
            if (in.readableBytes() < HEADER) {
                return;
            }
            int type = in.getUnsignedByte(r);
            int job = in.getInt(r + 1);
            long len = in.getUnsignedInt(r + 5);
            long max =
                    switch (type) {
                        case START -> 5L + 20L * maxGroups;
                        case MSG -> 8L + maxMessageBytes;
                        case UPDATE -> 4L + 12L * maxGroups;
                        case DONE -> 4L + 4L * maxGroups;
                        case CANCEL -> 4L;
                        default -> -1;
                    };
            if (max < 0) {
                fail(in, out, "unknown frame type " + type);
                return;
            }
            if (len > max) {
                fail(in, out, "frame type " + type + " of " + len + " bytes exceeds " + max);
                return;
            }
            if (in.readableBytes() < HEADER + len) {
                return;
            }
            in.skipBytes(HEADER);
            // The body alone: no field can read into the next frame.
            ByteBuf body = in.readSlice((int) len);
            int before = out.size();
            String bad;
            try {
                bad = body(type, job, body, (int) len, out);
            } catch (IllegalArgumentException e) { // a job-model type refused a decoded value
                bad = e.getMessage();
            } catch (IndexOutOfBoundsException e) {
                bad = "frame type " + type + " of " + len + " bytes is truncated";
            }
            if (bad == null && body.isReadable()) {
                bad = "frame type " + type + " has " + body.readableBytes() + " extra bytes";
            }
            if (bad != null) {
                while (out.size() > before) { // nothing of a bad frame goes out
                    if (out.remove(out.size() - 1) instanceof Msg m) {
                        m.payload().release();
                    }
                }
                fail(in, out, bad);
            }
        }

        /** Decodes one body into {@code out}; returns what is wrong with it, or null. */
        private String body(int type, int job, ByteBuf in, int len, List<Object> out) {
            switch (type) {
                case START -> {
                    if (len < 5) {
                        return "START of " + len + " bytes";
                    }
                    int flags = in.readUnsignedByte();
                    if ((flags & ~1) != 0) {
                        return "START has unknown flags 0x" + Integer.toHexString(flags);
                    }
                    long n = in.readUnsignedInt();
                    if (n < 1 || n > maxGroups || len != 5 + 20 * n) {
                        return "START declares " + n + " groups in " + len + " bytes";
                    }
                    List<GroupSpec> groups = new ArrayList<>((int) n);
                    long total = 0;
                    for (int i = 0; i < n; i++) {
                        long id = in.readLong();
                        long size = in.readUnsignedInt();
                        double msr = in.readDouble();
                        if (size < 1 || size > maxMessages) {
                            return "START group " + i + " has " + size + " messages";
                        }
                        total += size;
                        groups.add(new GroupSpec(id, (int) size, msr));
                    }
                    if (total > maxMessages || total > JobSpec.MAX_MESSAGES) {
                        return "START announces " + total + " messages (limit " + maxMessages + ")";
                    }
                    out.add(
                            new Start(
                                    job,
                                    JobSpec.builder()
                                            .addGroups(groups)
                                            .mrdf((flags & 1) != 0)
                                            .jobId(job)
                                            .build()));
                }
                case MSG -> {
                    if (len < 9) {
                        return "MSG of " + len + " bytes (an empty message)";
                    }
                    int gi = in.readInt();
                    int index = in.readInt();
                    if (gi < 0 || index < 0) {
                        return "MSG with a negative group index or index";
                    }
                    out.add(new Msg(job, gi, index, in.readRetainedSlice(len - 8)));
                }
                case UPDATE -> {
                    long n = len >= 4 ? in.readUnsignedInt() : 0;
                    if (n < 1 || len != 4 + 12 * n) {
                        return "UPDATE declares " + n + " changes in " + len + " bytes";
                    }
                    int[] gi = new int[(int) n];
                    double[] msr = new double[(int) n];
                    for (int i = 0; i < n; i++) {
                        gi[i] = in.readInt();
                        msr[i] = in.readDouble();
                        if (gi[i] < 0 || !(msr[i] >= 0 && msr[i] <= 1)) {
                            return "UPDATE change " + i + " is invalid";
                        }
                    }
                    out.add(new Update(job, gi, msr));
                }
                case DONE -> {
                    long n = len >= 4 ? in.readUnsignedInt() : -1;
                    if (n < 1 || len != 4 + 4 * n) {
                        return "DONE declares " + n + " groups in " + len + " bytes";
                    }
                    int[] d = new int[(int) n];
                    for (int i = 0; i < n; i++) {
                        d[i] = in.readInt();
                        if (d[i] < 0) {
                            return "DONE group " + i + " delivered a negative count";
                        }
                    }
                    out.add(new Done(job, d));
                }
                case CANCEL -> {
                    if (len != 4) {
                        return "CANCEL of " + len + " bytes";
                    }
                    int code = in.readInt();
                    AtpStatus st = AtpStatus.of(code);
                    if (code == 0 || st.code() != code) {
                        return "CANCEL status " + code + " is not an engine error status";
                    }
                    out.add(new Cancel(job, st));
                }
                default -> {
                    return "unknown frame type " + type;
                }
            }
            return null;
        }

        @Override
        protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            decode(ctx, in, out);
            if (!failed && in.isReadable()) {
                fail(
                        in,
                        out,
                        "truncated frame: the peer stopped after "
                                + in.readableBytes()
                                + " bytes of it");
            }
        }

        private void fail(ByteBuf in, List<Object> out, String message) {
            failed = true;
            in.skipBytes(in.readableBytes());
            out.add(new Failure(message));
        }
    }
}
