package io.netapprox.core.engine;

import io.netty.buffer.ByteBuf;
import java.util.zip.CRC32C;

/**
 * Deterministic message payloads and their checksums, shared by the loopback tests of several
 * packages.
 */
public final class TestPayloads {
    private TestPayloads() {}

    /**
     * Deterministic content of message {@code id} (xorshift seeded by it), written into buf[0,
     * len).
     */
    public static void fill(ByteBuf buf, int id, int len) {
        // Built in a heap array and written once: a leak-detector-sampled ByteBuf traces every
        // access, and 131k
        // writeLong calls per MiB made a 1 GiB test run for hours when its buffer happened to be
        // sampled.
        byte[] a = new byte[len];
        java.nio.ByteBuffer w = java.nio.ByteBuffer.wrap(a);
        long x = 0x9E3779B97F4A7C15L * (id + 1);
        for (int k = 0; k < len / 8; k++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            w.putLong(x);
        }
        while (w.hasRemaining()) {
            w.put((byte) x);
        }
        buf.clear();
        buf.writeBytes(a);
    }

    /** CRC32C of the readable bytes. */
    public static long crc(ByteBuf b) {
        CRC32C c = new CRC32C();
        c.update(b.nioBuffer(b.readerIndex(), b.readableBytes()));
        return c.getValue();
    }
}
