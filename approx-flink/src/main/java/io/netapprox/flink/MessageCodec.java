package io.netapprox.flink;

import io.netty.buffer.ByteBuf;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The bytes of one ATP message, a cluster of records of one stratum: {@code records u32}, then per
 * record its values (f64 each, NaN and infinities as they are); for top-k queries then {@code keys
 * u32} and per distinct key {@code u16 length + UTF-8, records u32}, the length {@link #NULL_KEY}
 * (no bytes) for the null key (top-k only needs each message's key counts). Decoding validates the
 * whole message before anything is consumed: message bytes come from the network.
 */
final class MessageCodec {
    /** Longest top-k key, in UTF-8 bytes; longer keys are cut (on a character boundary). */
    static final int MAX_KEY_BYTES = 1024;

    /** The key length that stands for a null key (longer than any key: no bytes follow). */
    static final int NULL_KEY = 0xFFFF;

    /** Most records in one message ({@code approx.recordsPerMessage} is at most this). */
    static final int MAX_RECORDS = 65536;

    private MessageCodec() {}

    /** Records {@code [from, to)} of {@code buf} as one message. */
    static byte[] encode(StratumBuffer buf, int from, int to) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 + (to - from) * buf.width() * 8);
        DataOutputStream out = new DataOutputStream(bytes);
        try {
            out.writeInt(to - from);
            for (int r = from; r < to; r++) {
                for (int v = 0; v < buf.width(); v++) {
                    out.writeDouble(buf.value(r, v));
                }
            }
            if (buf.hasKeys()) {
                Map<String, Integer> counts = new LinkedHashMap<>();
                for (int r = from; r < to; r++) {
                    counts.merge(buf.key(r), 1, Integer::sum); // a null key counts too
                }
                out.writeInt(counts.size());
                for (Map.Entry<String, Integer> e : counts.entrySet()) {
                    if (e.getKey() == null) {
                        out.writeShort(NULL_KEY);
                        out.writeInt(e.getValue());
                        continue;
                    }
                    byte[] k = keyBytes(e.getKey());
                    out.writeShort(k.length);
                    out.write(k);
                    out.writeInt(e.getValue());
                }
            }
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
        }
        return bytes.toByteArray();
    }

    private static byte[] keyBytes(String key) {
        byte[] b = key.getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_KEY_BYTES) {
            return b;
        }
        int n = MAX_KEY_BYTES;
        while (n > 0 && (b[n] & 0xC0) == 0x80) {
            n--; // do not cut a multi-byte character
        }
        return Arrays.copyOf(b, n);
    }

    /** Receives the decoded records of one message ({@code values} is reused between records). */
    interface Sink {
        void record(double[] values);
    }

    /** Receives the key counts of one message (the key is null for the null key). */
    interface KeySink {
        void key(String key, int records);
    }

    /**
     * Decodes one message of a stratum whose records carry {@code width} values (and key counts
     * when {@code keys} is not null).
     *
     * @return the number of records
     * @throws IllegalArgumentException the bytes are not a well-formed message of this shape
     */
    static int decode(ByteBuf in, int width, Sink sink, KeySink keys) {
        int n = validate(in.duplicate(), width, keys != null);
        in.skipBytes(4);
        double[] values = new double[width];
        for (int r = 0; r < n; r++) {
            for (int v = 0; v < width; v++) {
                values[v] = in.readDouble();
            }
            sink.record(values);
        }
        if (keys != null) {
            int distinct = in.readInt();
            for (int i = 0; i < distinct; i++) {
                int len = in.readUnsignedShort();
                String key =
                        len == NULL_KEY
                                ? null
                                : in.readCharSequence(len, StandardCharsets.UTF_8).toString();
                keys.key(key, in.readInt());
            }
        }
        return n;
    }

    /** Checks the whole message before anything is consumed; returns its record count. */
    private static int validate(ByteBuf in, int width, boolean withKeys) {
        if (in.readableBytes() < 4) {
            throw new IllegalArgumentException("message shorter than its header");
        }
        int n = in.readInt();
        if (n < 1 || n > MAX_RECORDS || (long) n * width * 8 > in.readableBytes()) {
            throw new IllegalArgumentException("message claims " + n + " records");
        }
        in.skipBytes(n * width * 8);
        if (withKeys) {
            if (in.readableBytes() < 4) {
                throw new IllegalArgumentException("message without its key table");
            }
            int distinct = in.readInt();
            if (distinct < 1 || distinct > n) {
                throw new IllegalArgumentException(
                        "message claims " + distinct + " keys for " + n + " records");
            }
            long total = 0;
            boolean nullKey = false;
            for (int i = 0; i < distinct; i++) {
                if (in.readableBytes() < 2) {
                    throw new IllegalArgumentException("key table truncated at key " + i);
                }
                int len = in.readUnsignedShort();
                if (len == NULL_KEY) {
                    if (nullKey) {
                        throw new IllegalArgumentException("null key given twice at key " + i);
                    }
                    nullKey = true;
                    len = 0;
                }
                if (len > MAX_KEY_BYTES || len + 4 > in.readableBytes()) {
                    throw new IllegalArgumentException("bad key length " + len + " at key " + i);
                }
                in.skipBytes(len);
                int count = in.readInt();
                if (count < 1) {
                    throw new IllegalArgumentException(
                            "key " + i + " counts " + count + " records");
                }
                total += count;
            }
            if (total != n) {
                throw new IllegalArgumentException("key counts add up to " + total + ", not " + n);
            }
        }
        if (in.isReadable()) {
            throw new IllegalArgumentException(
                    in.readableBytes() + " trailing bytes after the records");
        }
        return n;
    }
}
