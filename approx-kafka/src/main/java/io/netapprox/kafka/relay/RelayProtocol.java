package io.netapprox.kafka.relay;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;

/**
 * What a consumer and a relay say to each other over NetApprox's transport. Requests are
 * DATA_REQUEST payloads, answers DATA_RESPONSE payloads (both over the authenticated control
 * plane); the records of a segment are the messages of one ATP job, one message per record, one
 * group per cell. All integers big-endian; strings are {@code u16 length + UTF-8}; byte strings
 * {@code i32 length (-1 = null) + bytes}.
 *
 * <pre>
 * request  = u8 version(3), u8 kind, body
 *   OPEN    (1): f64 emax, u32 n, n x {string stratum, f64 emax}, f64 confidence, f64 cv,
 *                f64 headroom, i64 windowMs, i64 graceMs, u8 strata (0 partition, 1 key, 2 header),
 *                string header, u8 readCommitted, i64 seed, u8 value (0 none, 1 value,
 *                2 header), string valueHeader, string tokenId, string tokenHmac
 *            token: the consumer's Kafka delegation token (both empty: none), Base64 characters
 *            only ({@link DelegatedToken}); a relay with authorization=kafka reads as its owner
 *   PULL    (2): string topic, i32 partition, i64 from, i32 maxWaitMs, i64 seq
 *            maxWaitMs: the relay holds the pull at most min(maxWaitMs, its maxPullWaitMs)
 *   RELEASE (3): u32 n, n x {string topic, i32 partition}, i64 seq
 *            seq: the stream's request order (the consumer numbers its PULLs and RELEASEs 1, 2, ...
 *            as it sends them); the relay serves requests on several threads, so a request may
 *            reach the stream after a later one: it then is stale and has no effect (section 3.2
 *            of docs/kafka.md)
 * answer   = u8 version(3), u8 status (0 OK, else RelayException.Reason ordinal + 1), body
 *   failure: i32 leaderId, string message
 *   OK to PULL (the segment header): i64 from, i64 to, i64 logEnd, u32 cells,
 *                cells x {i64 windowStart, string stratum, i64 count, i32 target, i32 sampled}
 *            the job that follows (iff some cell has sampled > 0) has one group per such cell,
 *            group id = cell index, N_g = sampled, target = target
 *   OK to OPEN or RELEASE: empty
 * record   = i64 offset, i64 timestamp, u8 timestampType (id + 1), bytes key, bytes value,
 *            u16 headers, headers x {bytes key (UTF-8), bytes value}
 * </pre>
 *
 * Every decoder treats its input as untrusted: lengths are checked against what remains, counts
 * against limits, strings decoded strictly, and trailing bytes rejected; a violation is an {@link
 * IllegalArgumentException} naming it.
 */
public final class RelayProtocol {
    static final byte VERSION = 3; // 3: OPEN names the measured value and carries the token
    static final byte OPEN = 1;
    static final byte PULL = 2;
    static final byte RELEASE = 3;

    /** A segment closes before its header would exceed this (the control frame limit is 1 MiB). */
    public static final int MAX_HEADER_BYTES = 256 * 1024;

    private static final int MAX_LIST = 1 << 16;

    private RelayProtocol() {}

    /** A request to the relay. */
    public sealed interface Request permits Open, Pull, Release {}

    /**
     * Open the consumer's stream: how its partitions are to be sampled, and the Kafka identity it
     * delegates to the relay (null: none).
     */
    public record Open(StreamSpec spec, DelegatedToken token) implements Request {
        public Open(StreamSpec spec) {
            this(spec, null);
        }
    }

    /**
     * The next segment of {@code partition} from offset {@code from}; {@code seq} orders it among
     * the stream's requests.
     */
    public record Pull(TopicPartition partition, long from, int maxWaitMs, long seq)
            implements Request {}

    /** The consumer stopped reading these partitions; {@code seq} as for {@link Pull}. */
    public record Release(List<TopicPartition> partitions, long seq) implements Request {}

    /** A segment's header: its range, the readable end and its cells. */
    public record SegmentHeader(long from, long to, long logEnd, List<Cell> cells) {
        public SegmentHeader {
            cells = List.copyOf(cells);
        }

        /** Records the job that follows carries (0: no job). */
        public long records() {
            long n = 0;
            for (Cell c : cells) {
                n += c.sampled();
            }
            return n;
        }
    }

    // ---------------------------------------------------------------- requests

    public static byte[] encode(Request r) {
        Out o = new Out();
        o.u8(VERSION);
        if (r instanceof Open op) {
            o.u8(OPEN);
            StreamSpec s = op.spec();
            o.f64(s.emax());
            o.u32(s.groupEmax().size());
            s.groupEmax()
                    .forEach(
                            (g, e) -> {
                                o.string(g);
                                o.f64(e);
                            });
            o.f64(s.confidence());
            o.f64(s.assumedCv());
            o.f64(s.headroom());
            o.i64(s.windowMs());
            o.i64(s.graceMs());
            o.u8(s.stratification().kind().ordinal());
            o.string(s.stratification().header() == null ? "" : s.stratification().header());
            o.u8(s.readCommitted() ? 1 : 0);
            o.i64(s.seed());
            o.u8(s.value().kind().ordinal());
            o.string(s.value().header() == null ? "" : s.value().header());
            o.string(op.token() == null ? "" : op.token().tokenId());
            o.string(op.token() == null ? "" : op.token().hmac());
        } else if (r instanceof Pull p) {
            o.u8(PULL);
            o.string(p.partition().topic());
            o.i32(p.partition().partition());
            o.i64(p.from());
            o.i32(p.maxWaitMs());
            o.i64(p.seq());
        } else {
            Release rel = (Release) r;
            o.u8(RELEASE);
            o.u32(rel.partitions().size());
            for (TopicPartition tp : rel.partitions()) {
                o.string(tp.topic());
                o.i32(tp.partition());
            }
            o.i64(rel.seq());
        }
        return o.bytes();
    }

    public static Request decodeRequest(byte[] bytes) {
        In in = new In(ByteBuffer.wrap(bytes));
        in.version();
        int kind = in.u8();
        Request r =
                switch (kind) {
                    case OPEN -> {
                        double emax = in.f64();
                        int n = in.count();
                        Map<String, Double> groups = new HashMap<>();
                        for (int i = 0; i < n; i++) {
                            groups.put(in.string(), in.f64());
                        }
                        double confidence = in.f64();
                        double cv = in.f64();
                        double headroom = in.f64();
                        long windowMs = in.i64();
                        long graceMs = in.i64();
                        int strata = in.u8();
                        String header = in.string();
                        if (strata >= Stratification.Kind.values().length) {
                            throw malformed("unknown stratification " + strata);
                        }
                        Stratification.Kind k = Stratification.Kind.values()[strata];
                        boolean readCommitted = in.bool();
                        long seed = in.i64();
                        int valueKind = in.u8();
                        String valueHeader = in.string();
                        if (valueKind >= ValueSource.Kind.values().length) {
                            throw malformed("unknown value source " + valueKind);
                        }
                        ValueSource.Kind vk = ValueSource.Kind.values()[valueKind];
                        String tokenId = in.string();
                        String tokenHmac = in.string();
                        DelegatedToken token;
                        if (tokenId.isEmpty() && tokenHmac.isEmpty()) {
                            token = null;
                        } else {
                            try {
                                token = new DelegatedToken(tokenId, tokenHmac);
                            } catch (IllegalArgumentException e) {
                                throw malformed(e.getMessage());
                            }
                        }
                        yield new Open(
                                new StreamSpec(
                                        emax,
                                        groups,
                                        confidence,
                                        cv,
                                        headroom,
                                        windowMs,
                                        graceMs,
                                        new Stratification(
                                                k, k == Stratification.Kind.HEADER ? header : null),
                                        readCommitted,
                                        seed,
                                        new ValueSource(
                                                vk,
                                                vk == ValueSource.Kind.HEADER
                                                        ? valueHeader
                                                        : null)),
                                token);
                    }
                    case PULL -> {
                        TopicPartition tp = in.partition();
                        long from = in.i64();
                        int wait = in.i32();
                        long seq = in.i64();
                        if (from < 0 || wait < 0 || seq < 0) {
                            throw malformed("negative offset, wait or sequence number");
                        }
                        yield new Pull(tp, from, wait, seq);
                    }
                    case RELEASE -> {
                        int n = in.count();
                        List<TopicPartition> tps = new ArrayList<>(n);
                        for (int i = 0; i < n; i++) {
                            tps.add(in.partition());
                        }
                        long seq = in.i64();
                        if (seq < 0) {
                            throw malformed("negative sequence number");
                        }
                        yield new Release(tps, seq);
                    }
                    default -> throw malformed("unknown request kind " + kind);
                };
        in.end();
        return r;
    }

    // ---------------------------------------------------------------- answers

    public static byte[] ok() {
        Out o = new Out();
        o.u8(VERSION);
        o.u8(0);
        return o.bytes();
    }

    public static byte[] failure(RelayException e) {
        Out o = new Out();
        o.u8(VERSION);
        o.u8(e.reason().ordinal() + 1);
        o.i32(e.leaderId());
        String m = String.valueOf(e.getMessage());
        o.string(m.length() > 1000 ? m.substring(0, 1000) : m);
        return o.bytes();
    }

    public static byte[] header(Segment s) {
        Out o = new Out();
        o.u8(VERSION);
        o.u8(0);
        o.i64(s.from());
        o.i64(s.to());
        o.i64(s.logEnd());
        o.u32(s.cells().size());
        for (Cell c : s.cells()) {
            o.i64(c.windowStart());
            o.string(c.stratum());
            o.i64(c.count());
            o.i32(c.target());
            o.i32(c.sampled());
        }
        return o.bytes();
    }

    /** Bytes one cell adds to a segment header. */
    static int headerBytes(String stratum) {
        return 26 + utf8Length(stratum);
    }

    /** Throws the relay's failure, if the answer is one. */
    public static void checkOk(byte[] answer) {
        In in = new In(ByteBuffer.wrap(answer));
        in.version();
        failIfFailure(in);
        in.end();
    }

    /** A PULL's answer: the segment header, or the relay's failure thrown. */
    public static SegmentHeader decodeHeader(byte[] answer) {
        In in = new In(ByteBuffer.wrap(answer));
        in.version();
        failIfFailure(in);
        long from = in.i64();
        long to = in.i64();
        long logEnd = in.i64();
        if (from < 0 || to < from || logEnd < -1) {
            throw malformed("bad segment range [" + from + ", " + to + "), end " + logEnd);
        }
        int n = in.count();
        List<Cell> cells = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long w = in.i64();
            String stratum = in.string();
            long count = in.i64();
            int target = in.i32();
            int sampled = in.i32();
            if (target > sampled && sampled > 0) {
                throw malformed("cell " + i + " carries fewer records than its target");
            }
            try {
                cells.add(new Cell(w, stratum, count, target, sampled));
            } catch (IllegalArgumentException e) {
                throw malformed(e.getMessage());
            }
        }
        in.end();
        return new SegmentHeader(from, to, logEnd, cells);
    }

    private static void failIfFailure(In in) {
        int status = in.u8();
        if (status == 0) {
            return;
        }
        RelayException.Reason[] reasons = RelayException.Reason.values();
        if (status > reasons.length) {
            throw malformed("unknown status " + status);
        }
        int leader = in.i32();
        String message = in.string();
        in.end();
        throw new RelayException(reasons[status - 1], "relay: " + message, leader, null);
    }

    // ---------------------------------------------------------------- records

    public static void writeRecord(SampledRecord r, ByteBuf out) {
        out.writeLong(r.offset());
        out.writeLong(r.timestamp());
        out.writeByte(r.timestampType().id + 1);
        writeBytes(out, r.key());
        writeBytes(out, r.value());
        if (r.headers().length > 0xffff) {
            throw new IllegalArgumentException("record has more than 65535 headers");
        }
        out.writeShort(r.headers().length);
        for (Header h : r.headers()) {
            writeBytes(out, h.key().getBytes(StandardCharsets.UTF_8));
            writeBytes(out, h.value());
        }
    }

    /** A record of the cell {@code cell} from an ATP message's bytes. */
    public static SampledRecord readRecord(ByteBuffer buf, int cell) {
        In in = new In(buf);
        long offset = in.i64();
        long timestamp = in.i64();
        TimestampType type = timestampType(in.u8() - 1);
        byte[] key = in.bytes();
        byte[] value = in.bytes();
        int n = in.u16();
        Header[] headers = new Header[n];
        for (int i = 0; i < n; i++) {
            byte[] k = in.bytes();
            if (k == null) {
                throw malformed("null header key");
            }
            headers[i] = new RecordHeader(in.utf8(k), in.bytes());
        }
        in.end();
        if (offset < 0) {
            throw malformed("negative offset");
        }
        return new SampledRecord(offset, timestamp, type, key, value, headers, cell);
    }

    private static TimestampType timestampType(int id) {
        for (TimestampType t : TimestampType.values()) {
            if (t.id == id) {
                return t;
            }
        }
        throw malformed("unknown timestamp type " + id);
    }

    private static void writeBytes(ByteBuf out, byte[] b) {
        if (b == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(b.length);
            out.writeBytes(b);
        }
    }

    // ---------------------------------------------------------------- plumbing

    static IllegalArgumentException malformed(String what) {
        return new IllegalArgumentException("malformed relay message: " + what);
    }

    static int utf8Length(String s) {
        return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static final class Out {
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream(64);
        private final DataOutputStream out = new DataOutputStream(buf);

        void u8(int v) {
            io(() -> out.writeByte(v));
        }

        void i32(int v) {
            io(() -> out.writeInt(v));
        }

        void u32(int v) {
            io(() -> out.writeInt(v));
        }

        void i64(long v) {
            io(() -> out.writeLong(v));
        }

        void f64(double v) {
            io(() -> out.writeDouble(v));
        }

        void string(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            if (b.length > 0xffff) {
                throw new IllegalArgumentException("string of " + b.length + " bytes (max 65535)");
            }
            io(
                    () -> {
                        out.writeShort(b.length);
                        out.write(b);
                    });
        }

        byte[] bytes() {
            return buf.toByteArray();
        }

        private interface IoAction {
            void run() throws IOException;
        }

        private static void io(IoAction a) {
            try {
                a.run();
            } catch (IOException e) {
                throw new UncheckedIOException(e); // a byte array stream does not fail
            }
        }
    }

    private static final class In {
        private final ByteBuffer b;

        In(ByteBuffer b) {
            this.b = b;
        }

        void version() {
            int v = u8();
            if (v != VERSION) {
                throw malformed("version " + v + " (this side speaks " + VERSION + ")");
            }
        }

        int u8() {
            try {
                return b.get() & 0xff;
            } catch (BufferUnderflowException e) {
                throw malformed("truncated");
            }
        }

        boolean bool() {
            int v = u8();
            if (v > 1) {
                throw malformed("flag " + v);
            }
            return v == 1;
        }

        int u16() {
            try {
                return b.getShort() & 0xffff;
            } catch (BufferUnderflowException e) {
                throw malformed("truncated");
            }
        }

        int i32() {
            try {
                return b.getInt();
            } catch (BufferUnderflowException e) {
                throw malformed("truncated");
            }
        }

        long i64() {
            try {
                return b.getLong();
            } catch (BufferUnderflowException e) {
                throw malformed("truncated");
            }
        }

        double f64() {
            try {
                double d = b.getDouble();
                if (Double.isNaN(d) || Double.isInfinite(d)) {
                    throw malformed("not a finite number");
                }
                return d;
            } catch (BufferUnderflowException e) {
                throw malformed("truncated");
            }
        }

        int count() {
            int n = i32();
            if (n < 0 || n > MAX_LIST) {
                throw malformed("count " + Integer.toUnsignedString(n) + " above " + MAX_LIST);
            }
            return n;
        }

        String string() {
            int n = u16();
            if (n > b.remaining()) {
                throw malformed("string of " + n + " bytes, " + b.remaining() + " left");
            }
            byte[] s = new byte[n];
            b.get(s);
            return utf8(s);
        }

        String utf8(byte[] s) {
            try {
                return StandardCharsets.UTF_8
                        .newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(s))
                        .toString();
            } catch (CharacterCodingException e) {
                throw malformed("invalid UTF-8");
            }
        }

        byte[] bytes() {
            int n = i32();
            if (n == -1) {
                return null;
            }
            if (n < 0 || n > b.remaining()) {
                throw malformed("byte string of " + n + " bytes, " + b.remaining() + " left");
            }
            byte[] s = new byte[n];
            b.get(s);
            return s;
        }

        TopicPartition partition() {
            String topic = string();
            int p = i32();
            if (topic.isEmpty() || topic.length() > 249 || p < 0) {
                throw malformed("bad partition " + topic + "-" + p);
            }
            return new TopicPartition(topic, p);
        }

        void end() {
            if (b.hasRemaining()) {
                throw malformed(b.remaining() + " trailing bytes");
            }
        }
    }
}
