package io.netapprox.core.control;

import io.netapprox.core.control.Messages.AckMsg;
import io.netapprox.core.control.Messages.AuthOkMsg;
import io.netapprox.core.control.Messages.AuthResponseMsg;
import io.netapprox.core.control.Messages.DataAttachAckMsg;
import io.netapprox.core.control.Messages.DataAttachMsg;
import io.netapprox.core.control.Messages.DataAttachProofMsg;
import io.netapprox.core.control.Messages.DataPlaneSelectMsg;
import io.netapprox.core.control.Messages.DataRequestMsg;
import io.netapprox.core.control.Messages.DataResponseMsg;
import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.HelloAckMsg;
import io.netapprox.core.control.Messages.HelloMsg;
import io.netapprox.core.control.Messages.JobAcceptMsg;
import io.netapprox.core.control.Messages.JobAnnounceMsg;
import io.netapprox.core.control.Messages.JobRejectMsg;
import io.netapprox.core.control.Messages.JobReportMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.MsrUpdateMsg;
import io.netapprox.core.control.Messages.PingMsg;
import io.netapprox.core.control.Messages.PongMsg;
import io.netapprox.core.control.Messages.SessionSetupAckMsg;
import io.netapprox.core.control.Messages.SessionSetupMsg;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import io.netty.buffer.ByteBuf;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The control protocol's binary format (version 4): frame header constants and strict body codecs.
 * All integers are big-endian. See docs/control-plane.md for the tables.
 */
final class WireFormat {
    static final int MAGIC = 0x4E43; // "NC": NetApprox Control

    /**
     * Version 2 (issue 12): the data-plane key is derived on both ends ({@link KeySchedule})
     * instead of travelling in SESSION_SETUP_ACK. Version 1 is refused: it sends the key in clear.
     */
    static final int VERSION = 4;

    /**
     * Version 4 (issue 30): two data planes. HELLO / HELLO_ACK carry the data planes each end can
     * run (the byte that was the first reserved one), and DATA_ATTACH / DATA_ATTACH_ACK /
     * DATA_ATTACH_PROOF / DATA_PLANE_SELECT set up the TCP data plane. A version-3 peer would read
     * the plane byte as a non-zero reserved field, so it is refused by version.
     */
    static final int MIN_SUPPORTED_VERSION = 4;

    static final int MAX_SUPPORTED_VERSION = 4;
    static final int HEADER_LENGTH = 16;

    /** Body limit before the handshake has completed (HELLO, AUTH, SESSION_SETUP are all small). */
    static final int HANDSHAKE_MAX_BODY = 4096;

    static final int NONCE_LENGTH = 32;
    static final int MAC_LENGTH = 32;
    static final int SHARE_LENGTH = KeySchedule.SHARE_LENGTH;
    static final int MAX_ENDPOINT_ID_BYTES = 255;
    static final int MAX_MESSAGE_BYTES = 1024;
    static final int MAX_REASON_BYTES = 1024;

    static final int HELLO_ACK_FLAG_AUTH = 1;
    static final int JOB_FLAG_MRDF = 1;
    static final int JOB_FLAG_GLOBAL = 2;

    /** Version 3: the sender pushes the job (no DATA_REQUEST); its id has bit 31 set. */
    static final int JOB_FLAG_PUSHED = 4;

    private WireFormat() {}

    /**
     * A strict-decoding violation; carries the error code to send back. Never escapes the decoder.
     */
    static final class MalformedException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final ErrorCode code;

        MalformedException(String message) {
            this(ErrorCode.MALFORMED_FRAME, message);
        }

        MalformedException(ErrorCode code, String message) {
            super(
                    message, null, false,
                    false); // no stack trace: this is an expected, peer-caused condition
            this.code = code;
        }
    }

    // ---- primitive readers with bounds checks ---------------------------------------------------

    private static void need(ByteBuf in, int n, String field) {
        if (in.readableBytes() < n) {
            throw new MalformedException(
                    "truncated field '"
                            + field
                            + "': needs "
                            + n
                            + " bytes, "
                            + in.readableBytes()
                            + " remain");
        }
    }

    static int readU8(ByteBuf in, String field) {
        need(in, 1, field);
        return in.readUnsignedByte();
    }

    static int readU16(ByteBuf in, String field) {
        need(in, 2, field);
        return in.readUnsignedShort();
    }

    static long readU32(ByteBuf in, String field) {
        need(in, 4, field);
        return in.readUnsignedInt();
    }

    static int readI32(ByteBuf in, String field) {
        need(in, 4, field);
        return in.readInt();
    }

    /** A u32 that must fit a non-negative Java int. */
    static int readCount(ByteBuf in, String field) {
        long v = readU32(in, field);
        if (v > Integer.MAX_VALUE) {
            throw new MalformedException("field '" + field + "' = " + v + " is out of range");
        }
        return (int) v;
    }

    static long readU64(ByteBuf in, String field) {
        need(in, 8, field);
        return in.readLong();
    }

    static long readNonNegativeI64(ByteBuf in, String field) {
        long v = readU64(in, field);
        if (v < 0) {
            throw new MalformedException("field '" + field + "' is negative");
        }
        return v;
    }

    static double readF64(ByteBuf in, String field) {
        need(in, 8, field);
        return in.readDouble();
    }

    static byte[] readFixed(ByteBuf in, int n, String field) {
        need(in, n, field);
        byte[] b = new byte[n];
        in.readBytes(b);
        return b;
    }

    /** u32 length + bytes; the length is checked against what remains before any allocation. */
    static byte[] readBytes32(ByteBuf in, String field) {
        long len = readU32(in, field + ".length");
        if (len > in.readableBytes()) {
            throw new MalformedException(
                    "field '"
                            + field
                            + "' declares "
                            + len
                            + " bytes but only "
                            + in.readableBytes()
                            + " remain");
        }
        byte[] b = new byte[(int) len];
        in.readBytes(b);
        return b;
    }

    /** u16 length + strict UTF-8. */
    static String readString(ByteBuf in, int maxBytes, String field) {
        int len = readU16(in, field + ".length");
        if (len > maxBytes) {
            throw new MalformedException(
                    "field '" + field + "' is " + len + " bytes, limit " + maxBytes);
        }
        if (len > in.readableBytes()) {
            throw new MalformedException(
                    "field '"
                            + field
                            + "' declares "
                            + len
                            + " bytes but only "
                            + in.readableBytes()
                            + " remain");
        }
        byte[] b = new byte[len];
        in.readBytes(b);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new MalformedException("field '" + field + "' is not valid UTF-8");
        }
    }

    /** Writes exactly {@code n} bytes; a wrong length is a bug on this side, not the peer's. */
    static void writeFixed(ByteBuf out, byte[] b, int n) {
        if (b == null || b.length != n) {
            throw new IllegalArgumentException(
                    "field must be " + n + " bytes, got " + (b == null ? "null" : b.length));
        }
        out.writeBytes(b);
    }

    static void writeString(ByteBuf out, String s, int maxBytes) {
        byte[] b = utf8Truncated(s, maxBytes);
        out.writeShort(b.length);
        out.writeBytes(b);
    }

    /** UTF-8 bytes of {@code s}, cut at a character boundary to at most {@code maxBytes}. */
    static byte[] utf8Truncated(String s, int maxBytes) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= maxBytes) {
            return b;
        }
        int end = maxBytes;
        while (end > 0 && (b[end] & 0xC0) == 0x80) {
            end--; // do not split a multi-byte character
        }
        byte[] t = new byte[end];
        System.arraycopy(b, 0, t, 0, end);
        return t;
    }

    static void writeAddress(ByteBuf out, InetAddress addr, int port) {
        if (addr == null) {
            out.writeByte(0);
        } else if (addr instanceof Inet4Address) {
            out.writeByte(4);
            out.writeBytes(addr.getAddress());
        } else {
            out.writeByte(6);
            out.writeBytes(addr.getAddress());
        }
        out.writeShort(port);
    }

    static InetAddress readAddress(ByteBuf in, String field) {
        int family = readU8(in, field + ".family");
        int n;
        if (family == 0) {
            return null;
        } else if (family == 4) {
            n = 4;
        } else if (family == 6) {
            n = 16;
        } else {
            throw new MalformedException(
                    "field '" + field + "' has unknown address family " + family);
        }
        byte[] raw = readFixed(in, n, field);
        try {
            InetAddress addr = InetAddress.getByAddress(raw);
            if (family == 6 && addr instanceof Inet4Address) {
                // Java folds ::ffff:a.b.c.d into an IPv4 address, which re-encodes as family 4.
                throw new MalformedException(
                        "field '"
                                + field
                                + "' is an IPv4-mapped IPv6 address; send it as family 4");
            }
            return addr;
        } catch (UnknownHostException e) {
            throw new MalformedException("field '" + field + "' is not an address");
        }
    }

    private static int readPort(ByteBuf in, InetAddress addr, String field) {
        int port = readU16(in, field);
        if (addr != null && port == 0) {
            throw new MalformedException(
                    "field '" + field + "' is 0 for a non-empty data-plane address");
        }
        return port;
    }

    /**
     * A plane set offers at least one plane and only known ones; ATP exactly when there is a UDP
     * address (without one the port is 0 too).
     */
    private static void checkPlanes(String what, int planes, InetAddress addr, int port) {
        if (planes == 0 || (planes & ~DataPlaneKind.ALL_BITS) != 0) {
            throw new MalformedException(
                    what
                            + " data planes 0x"
                            + Integer.toHexString(planes)
                            + " are not a valid set");
        }
        boolean atp = (planes & DataPlaneKind.ATP.bit()) != 0;
        if (atp && addr == null) {
            throw new MalformedException(what + " offers ATP without a UDP address");
        }
        if (!atp && (addr != null || port != 0)) {
            throw new MalformedException(what + " carries a UDP address but does not offer ATP");
        }
    }

    private static void checkVersion(int v, String field) {
        if (v < 1) {
            throw new MalformedException(
                    "field '" + field + "' = " + v + " is not a protocol version");
        }
    }

    // ---- bodies ---------------------------------------------------------------------------------

    static void encodeBody(Msg msg, ByteBuf out) {
        if (msg instanceof HelloMsg h) {
            out.writeByte(h.minVersion());
            out.writeByte(h.maxVersion());
            out.writeByte(h.dataPlanes());
            out.writeByte(0);
            out.writeInt(h.maxFrameLength());
            writeString(out, h.endpointId(), MAX_ENDPOINT_ID_BYTES);
            writeAddress(out, h.udpAddress(), h.udpPort());
            writeFixed(out, h.clientNonce(), NONCE_LENGTH);
            writeFixed(out, h.clientShare(), SHARE_LENGTH);
        } else if (msg instanceof HelloAckMsg a) {
            out.writeByte(a.version());
            out.writeByte(a.authRequired() ? HELLO_ACK_FLAG_AUTH : 0);
            out.writeByte(a.dataPlanes());
            out.writeByte(0);
            out.writeInt(a.maxFrameLength());
            writeString(out, a.endpointId(), MAX_ENDPOINT_ID_BYTES);
            writeAddress(out, a.udpAddress(), a.udpPort());
            writeFixed(out, a.serverNonce(), NONCE_LENGTH);
            writeFixed(out, a.serverShare(), SHARE_LENGTH);
        } else if (msg instanceof AuthResponseMsg r) {
            writeFixed(out, r.mac(), MAC_LENGTH);
        } else if (msg instanceof AuthOkMsg ok) {
            writeFixed(out, ok.mac(), MAC_LENGTH);
        } else if (msg instanceof SessionSetupMsg) {
            // empty body
        } else if (msg instanceof SessionSetupAckMsg s) {
            out.writeLong(s.sessionId());
            writeFixed(out, s.confirm(), MAC_LENGTH);
        } else if (msg instanceof JobAnnounceMsg ja) {
            JobAnnouncement j = ja.job();
            out.writeInt(j.jobId());
            out.writeByte(
                    (j.mrdf() ? JOB_FLAG_MRDF : 0)
                            | (j.isGlobalMsr() ? JOB_FLAG_GLOBAL : 0)
                            | (j.pushed() ? JOB_FLAG_PUSHED : 0));
            out.writeByte(0);
            out.writeInt(j.groups().size());
            for (GroupSpec g : j.groups()) {
                out.writeLong(g.groupId());
                out.writeInt(g.size());
                out.writeDouble(g.msr());
            }
            out.writeInt(j.descriptorLength());
            out.writeBytes(j.descriptorUnsafe());
        } else if (msg instanceof JobAcceptMsg a) {
            out.writeInt(a.jobId());
        } else if (msg instanceof JobRejectMsg r) {
            out.writeInt(r.jobId());
            writeString(out, r.reason(), JobDecision.MAX_REASON_BYTES);
        } else if (msg instanceof DataRequestMsg d) {
            out.writeInt(d.jobId());
            out.writeInt(d.payload().length);
            out.writeBytes(d.payload());
        } else if (msg instanceof DataResponseMsg d) {
            out.writeInt(d.payload().length);
            out.writeBytes(d.payload());
        } else if (msg instanceof MsrUpdateMsg m) {
            out.writeInt(m.update().jobId());
            out.writeInt(m.update().changes().size());
            for (MsrUpdate.Change c : m.update().changes()) {
                out.writeInt(c.groupIndex());
                out.writeDouble(c.msr());
            }
        } else if (msg instanceof JobReportMsg m) {
            // What JobReport.forPeer() keeps: the receiver's outcome, per group N_g and the ids.
            JobReport r = m.report();
            out.writeInt(r.jobId());
            out.writeInt(r.status().code()); // 0 = completed
            out.writeLong(r.jctNanos());
            out.writeLong(r.packetsRetransmitted());
            out.writeDouble(r.measuredLoss());
            long[] prio = r.timeInClassNanos();
            int nprio = prio.length;
            while (nprio > 0 && prio[nprio - 1] == 0) {
                nprio--; // trailing zero classes are implied (a receiver's report has none)
            }
            out.writeByte(nprio);
            for (int i = 0; i < nprio; i++) {
                out.writeLong(prio[i]);
            }
            out.writeInt(r.groups().size());
            for (GroupReport g : r.groups()) {
                out.writeLong(g.groupId());
                out.writeInt(g.size());
                IdSetCodec.encode(g.deliveredIds(), out);
                IdSetCodec.encode(g.lostIds(), out);
            }
        } else if (msg instanceof AckMsg) {
            // empty body
        } else if (msg instanceof ErrorMsg e) {
            out.writeShort(e.code());
            writeString(out, e.message(), MAX_MESSAGE_BYTES);
        } else if (msg instanceof PingMsg) {
            // empty body
        } else if (msg instanceof PongMsg) {
            // empty body
        } else if (msg instanceof DataAttachMsg d) {
            out.writeLong(d.sessionId());
            writeFixed(out, d.clientNonce(), NONCE_LENGTH);
        } else if (msg instanceof DataAttachAckMsg d) {
            writeFixed(out, d.serverNonce(), NONCE_LENGTH);
            writeFixed(out, d.serverProof(), MAC_LENGTH);
        } else if (msg instanceof DataAttachProofMsg d) {
            writeFixed(out, d.clientProof(), MAC_LENGTH);
        } else if (msg instanceof DataPlaneSelectMsg d) {
            out.writeByte(d.plane().bit());
            writeString(out, d.reason(), MAX_REASON_BYTES);
        } else {
            throw new IllegalArgumentException("unencodable message " + msg);
        }
    }

    /**
     * Decodes a body strictly: every field bounds-checked, every value validated, and the body must
     * be consumed exactly. Throws {@link MalformedException} on any violation.
     */
    static Msg decodeBody(MessageType type, ByteBuf in) {
        Msg msg;
        try {
            msg = decodeFields(type, in);
        } catch (IllegalArgumentException e) { // a public value type refused a decoded value
            throw new MalformedException(type + ": " + e.getMessage());
        }
        if (in.isReadable()) {
            throw new MalformedException(
                    type + " body has " + in.readableBytes() + " unexpected trailing bytes");
        }
        return msg;
    }

    private static Msg decodeFields(MessageType type, ByteBuf in) {
        switch (type) {
            case HELLO:
                {
                    int min = readU8(in, "minVersion");
                    int max = readU8(in, "maxVersion");
                    checkVersion(min, "minVersion");
                    if (max < min) {
                        throw new MalformedException(
                                "HELLO version range [" + min + ", " + max + "] is empty");
                    }
                    int planes = readU8(in, "dataPlanes");
                    if (readU8(in, "reserved") != 0) {
                        throw new MalformedException("HELLO reserved field is not 0");
                    }
                    int maxFrame = readCount(in, "maxFrameLength");
                    String id = readString(in, MAX_ENDPOINT_ID_BYTES, "endpointId");
                    InetAddress addr = readAddress(in, "udpAddress");
                    int port = readPort(in, addr, "udpPort");
                    checkPlanes("HELLO", planes, addr, port);
                    return new HelloMsg(
                            min,
                            max,
                            maxFrame,
                            id,
                            addr,
                            port,
                            readFixed(in, NONCE_LENGTH, "clientNonce"),
                            readFixed(in, SHARE_LENGTH, "clientShare"),
                            planes);
                }
            case HELLO_ACK:
                {
                    int v = readU8(in, "version");
                    checkVersion(v, "version");
                    int flags = readU8(in, "flags");
                    if ((flags & ~HELLO_ACK_FLAG_AUTH) != 0) {
                        throw new MalformedException(
                                "HELLO_ACK has unknown flags 0x" + Integer.toHexString(flags));
                    }
                    int planes = readU8(in, "dataPlanes");
                    if (readU8(in, "reserved") != 0) {
                        throw new MalformedException("HELLO_ACK reserved field is not 0");
                    }
                    int maxFrame = readCount(in, "maxFrameLength");
                    String id = readString(in, MAX_ENDPOINT_ID_BYTES, "endpointId");
                    InetAddress addr = readAddress(in, "udpAddress");
                    int port = readPort(in, addr, "udpPort");
                    checkPlanes("HELLO_ACK", planes, addr, port);
                    boolean auth = (flags & HELLO_ACK_FLAG_AUTH) != 0;
                    return new HelloAckMsg(
                            v,
                            auth,
                            maxFrame,
                            id,
                            addr,
                            port,
                            readFixed(in, NONCE_LENGTH, "serverNonce"),
                            readFixed(in, SHARE_LENGTH, "serverShare"),
                            planes);
                }
            case AUTH_RESPONSE:
                return new AuthResponseMsg(readFixed(in, MAC_LENGTH, "mac"));
            case AUTH_OK:
                return new AuthOkMsg(readFixed(in, MAC_LENGTH, "mac"));
            case SESSION_SETUP:
                return new SessionSetupMsg();
            case SESSION_SETUP_ACK:
                {
                    long id = readU64(in, "sessionId");
                    if (id == 0) {
                        throw new MalformedException("SESSION_SETUP_ACK session id 0 is reserved");
                    }
                    return new SessionSetupAckMsg(id, readFixed(in, MAC_LENGTH, "confirm"));
                }
            case JOB_ANNOUNCE:
                {
                    int job = readI32(in, "jobId");
                    int flags = readU8(in, "flags");
                    if ((flags & ~(JOB_FLAG_MRDF | JOB_FLAG_GLOBAL | JOB_FLAG_PUSHED)) != 0) {
                        throw new MalformedException(
                                "JOB_ANNOUNCE has unknown flags 0x" + Integer.toHexString(flags));
                    }
                    boolean pushed = (flags & JOB_FLAG_PUSHED) != 0;
                    if (pushed && (job & JobAnnouncement.PUSHED_JOB_ID_BIT) == 0) {
                        throw new MalformedException(
                                "a pushed JOB_ANNOUNCE's job id has bit 31 set, got "
                                        + Integer.toUnsignedString(job));
                    }
                    if (readU8(in, "reserved") != 0) {
                        throw new MalformedException("JOB_ANNOUNCE reserved field is not 0");
                    }
                    int count = readCount(in, "groupCount");
                    if (count == 0) {
                        throw new MalformedException("JOB_ANNOUNCE has no groups");
                    }
                    if ((long) count * 20 > in.readableBytes()) {
                        throw new MalformedException(
                                "JOB_ANNOUNCE declares "
                                        + count
                                        + " groups but only "
                                        + in.readableBytes()
                                        + " bytes remain");
                    }
                    List<GroupSpec> groups = new ArrayList<>(count);
                    for (int i = 0; i < count; i++) {
                        long gid = in.readLong();
                        int n = readCount(in, "groups[" + i + "].messages");
                        double msr = in.readDouble();
                        groups.add(new GroupSpec(gid, n, msr));
                    }
                    byte[] desc = readBytes32(in, "descriptor");
                    boolean mrdf = (flags & JOB_FLAG_MRDF) != 0;
                    if ((flags & JOB_FLAG_GLOBAL) != 0) {
                        if (count != 1 || groups.get(0).groupId() != 0) {
                            throw new MalformedException(
                                    "a global-MSR JOB_ANNOUNCE has exactly one group with id 0");
                        }
                        GroupSpec g = groups.get(0);
                        JobAnnouncement ga =
                                JobAnnouncement.global(job, g.size(), g.msr(), mrdf, desc);
                        return new JobAnnounceMsg(pushed ? ga.asPushed() : ga);
                    }
                    JobAnnouncement a = JobAnnouncement.ofGroups(job, groups, mrdf, desc);
                    return new JobAnnounceMsg(pushed ? a.asPushed() : a);
                }
            case JOB_ACCEPT:
                return new JobAcceptMsg(readI32(in, "jobId"));
            case JOB_REJECT:
                return new JobRejectMsg(
                        readI32(in, "jobId"),
                        readString(in, JobDecision.MAX_REASON_BYTES, "reason"));
            case DATA_REQUEST:
                return new DataRequestMsg(readI32(in, "jobId"), readBytes32(in, "payload"));
            case DATA_RESPONSE:
                return new DataResponseMsg(readBytes32(in, "payload"));
            case MSR_UPDATE:
                {
                    int job = readI32(in, "jobId");
                    int count = readCount(in, "changeCount");
                    if (count == 0) {
                        throw new MalformedException("MSR_UPDATE changes no group");
                    }
                    if ((long) count * 12 > in.readableBytes()) {
                        throw new MalformedException(
                                "MSR_UPDATE declares "
                                        + count
                                        + " changes but only "
                                        + in.readableBytes()
                                        + " bytes remain");
                    }
                    List<MsrUpdate.Change> changes = new ArrayList<>(count);
                    for (int i = 0; i < count; i++) {
                        int idx = readCount(in, "changes[" + i + "].groupIndex");
                        changes.add(new MsrUpdate.Change(idx, in.readDouble()));
                    }
                    return new MsrUpdateMsg(new MsrUpdate(job, changes));
                }
            case JOB_REPORT:
                {
                    int job = readI32(in, "jobId");
                    int status = readI32(in, "status");
                    if (AtpStatus.of(status).code() != status) {
                        // Canonical: a code the engine does not have would re-encode as UNKNOWN.
                        throw new MalformedException(
                                "JOB_REPORT status " + status + " is not an engine status code");
                    }
                    long jct = readNonNegativeI64(in, "jctNanos");
                    long retx = readNonNegativeI64(in, "retransmissions");
                    double loss = readF64(in, "measuredLoss");
                    int nprio = readU8(in, "priorityClassCount");
                    if (nprio > JobReport.PRIORITY_CLASSES) {
                        throw new MalformedException(
                                "JOB_REPORT has "
                                        + nprio
                                        + " priority classes, limit "
                                        + JobReport.PRIORITY_CLASSES);
                    }
                    long[] prio = new long[nprio];
                    for (int i = 0; i < nprio; i++) {
                        prio[i] = readNonNegativeI64(in, "priorityTimeNanos[" + i + "]");
                    }
                    if (nprio > 0 && prio[nprio - 1] == 0) {
                        // Canonical: the encoder leaves trailing zero classes out.
                        throw new MalformedException(
                                "JOB_REPORT ends its priority classes with a zero time");
                    }
                    int ngroups = readCount(in, "groupCount");
                    if ((long) ngroups * 22
                            > in.readableBytes()) { // 8 + 4 + two id sets of at least 5 bytes
                        throw new MalformedException(
                                "JOB_REPORT declares "
                                        + ngroups
                                        + " groups but only "
                                        + in.readableBytes()
                                        + " bytes remain");
                    }
                    List<GroupReport> groups = new ArrayList<>(ngroups);
                    for (int i = 0; i < ngroups; i++) {
                        long gid = readU64(in, "groups[" + i + "].groupId");
                        int n = readCount(in, "groups[" + i + "].messages");
                        IdSet delivered = IdSetCodec.decode(in, "groups[" + i + "].delivered");
                        IdSet lost = IdSetCodec.decode(in, "groups[" + i + "].lost");
                        groups.add(GroupReport.ofIds(gid, n, delivered, lost));
                    }
                    return new JobReportMsg(
                            JobReport.outcome(
                                    job, AtpStatus.of(status), jct, retx, loss, prio, groups));
                }
            case ACK:
                return new AckMsg();
            case ERROR:
                return new ErrorMsg(
                        readU16(in, "code"), readString(in, MAX_MESSAGE_BYTES, "message"));
            case PING:
                return new PingMsg();
            case PONG:
                return new PongMsg();
            case DATA_ATTACH:
                {
                    long id = readU64(in, "sessionId");
                    if (id == 0) {
                        throw new MalformedException("DATA_ATTACH session id 0 is reserved");
                    }
                    return new DataAttachMsg(id, readFixed(in, NONCE_LENGTH, "clientNonce"));
                }
            case DATA_ATTACH_ACK:
                return new DataAttachAckMsg(
                        readFixed(in, NONCE_LENGTH, "serverNonce"),
                        readFixed(in, MAC_LENGTH, "serverProof"));
            case DATA_ATTACH_PROOF:
                return new DataAttachProofMsg(readFixed(in, MAC_LENGTH, "clientProof"));
            case DATA_PLANE_SELECT:
                {
                    int bit = readU8(in, "plane");
                    DataPlaneKind plane = DataPlaneKind.ofBit(bit);
                    if (plane == null) {
                        throw new MalformedException(
                                "DATA_PLANE_SELECT plane 0x"
                                        + Integer.toHexString(bit)
                                        + " is not exactly one data plane");
                    }
                    return new DataPlaneSelectMsg(
                            plane, readString(in, MAX_REASON_BYTES, "reason"));
                }
            default:
                throw new MalformedException(
                        ErrorCode.UNKNOWN_MESSAGE_TYPE, "unknown message type " + type);
        }
    }
}
