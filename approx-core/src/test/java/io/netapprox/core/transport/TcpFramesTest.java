package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The TCP data plane's frame decoder is strict and exception-free like the control plane's: every
 * frame round-trips to its own bytes however the stream is split, each kind of bad input fails once
 * with a message and nothing decodes after it, lengths are refused before a body is buffered, and
 * mutated streams never throw.
 */
class TcpFramesTest {
    private static final AtpConfig LIMITS =
            AtpConfig.builder().maxGroupsPerJob(1000).maxMessageBytes(4096).build();

    static JobSpec spec() {
        return JobSpec.builder()
                .addGroup(-7, 10, 0.25)
                .addGroup(1L << 40, 3, 1.0)
                .mrdf(true)
                .jobId(5)
                .build();
    }

    /** One of each frame, encoded. */
    static byte[] samples() {
        ByteBuf b = Unpooled.buffer();
        TcpFrames.writeStart(b, 5, spec());
        TcpFrames.writeMsgHeader(b, 5, 1, 2, 3);
        b.writeBytes(new byte[] {9, 8, 7});
        TcpFrames.writeUpdate(b, 5, new int[] {0, 1}, new double[] {0.5, 0.0});
        TcpFrames.writeDone(b, -3, new int[] {4, 0, 2});
        TcpFrames.writeCancel(b, 0x8000_0001, AtpStatus.CLOSED);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    /** Decodes {@code stream} in reads of {@code chunk} bytes, then end of input. */
    static List<Object> decode(byte[] stream, int chunk) {
        EmbeddedChannel ch = new EmbeddedChannel(new TcpFrames.Decoder(LIMITS));
        for (int i = 0; i < stream.length; i += chunk) {
            ch.writeInbound(
                    Unpooled.wrappedBuffer(
                            Arrays.copyOfRange(stream, i, Math.min(stream.length, i + chunk))));
        }
        ch.finish();
        List<Object> out = new ArrayList<>();
        for (Object o = ch.readInbound(); o != null; o = ch.readInbound()) {
            out.add(o);
        }
        return out;
    }

    /** Re-encodes what was decoded (and releases MSG payloads). */
    static byte[] reencode(List<Object> frames) {
        ByteBuf b = Unpooled.buffer();
        for (Object o : frames) {
            if (o instanceof TcpFrames.Start s) {
                TcpFrames.writeStart(b, s.job(), s.spec());
            } else if (o instanceof TcpFrames.Msg m) {
                TcpFrames.writeMsgHeader(
                        b, m.job(), m.groupIndex(), m.index(), m.payload().readableBytes());
                b.writeBytes(m.payload());
                m.payload().release();
            } else if (o instanceof TcpFrames.Update u) {
                TcpFrames.writeUpdate(b, u.job(), u.groupIndex(), u.msr());
            } else if (o instanceof TcpFrames.Done d) {
                TcpFrames.writeDone(b, d.job(), d.delivered());
            } else if (o instanceof TcpFrames.Cancel c) {
                TcpFrames.writeCancel(b, c.job(), c.status());
            }
        }
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    @Test
    void everyFrameRoundTripsHoweverTheStreamIsSplit() {
        byte[] stream = samples();
        for (int chunk = 1; chunk <= stream.length; chunk++) {
            List<Object> out = decode(stream, chunk);
            assertEquals(5, out.size(), "chunk " + chunk);
            assertEquals(spec(), ((TcpFrames.Start) out.get(0)).spec());
            assertArrayEquals(stream, reencode(out), "chunk " + chunk);
        }
    }

    private static String failureOf(byte[] frame) {
        List<Object> out = decode(frame, frame.length);
        reencode(out);
        assertEquals(1, out.size(), "one result: " + out);
        return assertInstanceOf(TcpFrames.Failure.class, out.get(0)).message();
    }

    private static byte[] frame(int type, int job, byte[] body) {
        ByteBuf b = Unpooled.buffer().writeByte(type).writeInt(job).writeInt(body.length);
        b.writeBytes(body);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    @Test
    void eachKindOfBadFrameFailsOnceWithItsReason() {
        assertTrue(failureOf(frame(9, 1, new byte[0])).contains("unknown frame type 9"));
        // A length beyond its type's limit fails at the header, without waiting for the body.
        byte[] huge = Arrays.copyOf(frame(TcpFrames.MSG, 1, new byte[0]), TcpFrames.HEADER);
        huge[5] = 0x7f;
        assertTrue(failureOf(huge).contains("exceeds"));
        assertTrue(
                failureOf(frame(TcpFrames.MSG, 1, new byte[8])).contains("empty message"),
                "a MSG needs a payload");
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.MSG,
                                        1,
                                        bytes(
                                                Unpooled.buffer()
                                                        .writeInt(-1)
                                                        .writeInt(0)
                                                        .writeByte(1))))
                        .contains("negative"));
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.START,
                                        1,
                                        bytes(Unpooled.buffer().writeByte(0).writeInt(0))))
                        .contains("0 groups"));
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.START,
                                        1,
                                        bytes(
                                                Unpooled.buffer()
                                                        .writeByte(2)
                                                        .writeInt(1)
                                                        .writeLong(1)
                                                        .writeInt(1)
                                                        .writeDouble(1.0))))
                        .contains("unknown flags"));
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.START,
                                        1,
                                        bytes(
                                                Unpooled.buffer()
                                                        .writeByte(0)
                                                        .writeInt(1)
                                                        .writeLong(1)
                                                        .writeInt(1)
                                                        .writeDouble(1.5))))
                        .contains("MSR"));
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.START,
                                        1,
                                        bytes(
                                                Unpooled.buffer()
                                                        .writeByte(0)
                                                        .writeInt(1)
                                                        .writeLong(1)
                                                        .writeInt(0)
                                                        .writeDouble(1.0))))
                        .contains("0 messages"));
        assertTrue(
                failureOf(frame(TcpFrames.UPDATE, 1, bytes(Unpooled.buffer().writeInt(0))))
                        .contains("0 changes"));
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.UPDATE,
                                        1,
                                        bytes(
                                                Unpooled.buffer()
                                                        .writeInt(1)
                                                        .writeInt(0)
                                                        .writeDouble(Double.NaN))))
                        .contains("invalid"));
        assertTrue(
                failureOf(
                                frame(
                                        TcpFrames.DONE,
                                        1,
                                        bytes(Unpooled.buffer().writeInt(1).writeInt(-2))))
                        .contains("negative"));
        assertTrue(
                failureOf(frame(TcpFrames.CANCEL, 1, bytes(Unpooled.buffer().writeInt(0))))
                        .contains("not an engine error status"));
        assertTrue(
                failureOf(frame(TcpFrames.CANCEL, 1, bytes(Unpooled.buffer().writeInt(-55))))
                        .contains("not an engine error status"));
        // A truncated frame at the end of the stream.
        byte[] s = samples();
        List<Object> cut = decode(Arrays.copyOf(s, s.length - 2), 7);
        reencode(cut);
        assertEquals(5, cut.size());
        assertTrue(
                assertInstanceOf(TcpFrames.Failure.class, cut.get(4))
                        .message()
                        .contains("truncated"));
        // Nothing decodes after a failure.
        List<Object> after = decode(concat(frame(9, 1, new byte[0]), s), 3);
        assertEquals(1, after.size(), after.toString());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    @Test
    void mutatedStreamsNeverThrowAndFailAtMostOnce() {
        byte[] s = samples();
        Random rnd = new Random(30);
        for (int trial = 0; trial < 20_000; trial++) {
            byte[] m = s.clone();
            int flips = 1 + rnd.nextInt(4);
            for (int i = 0; i < flips; i++) {
                m[rnd.nextInt(m.length)] ^= (byte) (1 << rnd.nextInt(8));
            }
            if (trial % 5 == 0) {
                m = Arrays.copyOf(m, rnd.nextInt(m.length + 1));
            }
            List<Object> out = decode(m, 1 + rnd.nextInt(40));
            int failures = 0;
            for (int i = 0; i < out.size(); i++) {
                if (out.get(i) instanceof TcpFrames.Failure) {
                    failures++;
                    assertEquals(out.size() - 1, i, "nothing after a failure");
                }
            }
            assertTrue(failures <= 1);
            reencode(out); // releases the payloads
        }
    }
}
