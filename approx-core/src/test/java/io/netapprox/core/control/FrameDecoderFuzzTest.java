package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netapprox.core.control.Messages.DecodeFailure;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.Msg;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Coverage-guided fuzzing (Jazzer) of the control-plane frame decoder: whatever bytes arrive, in
 * whatever chunks, {@link FrameDecoder} never throws, emits at most one {@link DecodeFailure} and
 * nothing after it, every frame it emits re-encodes to exactly the bytes it came from (the encoding
 * is canonical), frames plus failure account for the whole stream, and the result does not depend
 * on how the stream was split into reads.
 *
 * <p>Input: byte 0 picks the body limit (even: the 4096-byte handshake limit, odd: 1 MiB), byte 1
 * the read size (1..64 bytes), the rest is the stream. The seed corpus ({@code
 * FrameDecoderFuzzTestInputs/}, one valid frame of every message type and a few streams; regenerate
 * with {@link #main}) runs as a regression test; the suite fuzzes for {@code fuzz.java.duration} in
 * its own JVM (approx-core/pom.xml, execution {@code control-fuzz}). A long campaign: {@code mvn -B
 * -ntp test -pl approx-core -am -Dtest=FrameDecoderFuzzTest -Dfuzz.java.duration=1800s
 * -Dsurefire.failIfNoSpecifiedTests=false} (docs/security.md has the exec counts).
 */
class FrameDecoderFuzzTest {

    @FuzzTest(maxDuration = "30s")
    void decoderIsStrictCanonicalAndChunkingInvariant(byte[] input) {
        if (input.length < 2) {
            return;
        }
        int limit = (input[0] & 1) == 0 ? WireFormat.HANDSHAKE_MAX_BODY : 1 << 20;
        int chunk = 1 + (input[1] & 0x3F);
        byte[] stream = Arrays.copyOfRange(input, 2, input.length);
        List<Object> chunked = decode(stream, limit, chunk);
        checkInvariants(stream, chunked);
        List<Object> whole = decode(stream, limit, Math.max(1, stream.length));
        assertEquals(
                describe(whole),
                describe(chunked),
                "the result depends on how the stream was split");
    }

    /**
     * The sample messages as one stream, split every way the fuzz input can split it, both limits.
     */
    @Test
    void everySampleStreamDecodesCleanly() throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        long id = 1;
        for (Msg m : WireFormatTest.samples()) {
            all.write(TestSupport.encode(id++, m));
        }
        byte[] stream = all.toByteArray();
        for (int chunk = 1; chunk <= 64; chunk++) {
            List<Object> out = decode(stream, 1 << 20, chunk);
            checkInvariants(stream, out);
            assertEquals(WireFormatTest.samples().size(), out.size(), "every sample is a frame");
        }
        // A truncated stream ends with exactly one failure after the complete frames.
        List<Object> cut = decode(Arrays.copyOf(stream, stream.length - 5), 1 << 20, 7);
        checkInvariants(Arrays.copyOf(stream, stream.length - 5), cut);
        assertInstanceOf(DecodeFailure.class, cut.get(cut.size() - 1));
    }

    /**
     * Decodes {@code stream} fed in reads of {@code chunk} bytes, then end of input; returns what
     * was emitted.
     */
    static List<Object> decode(byte[] stream, int limit, int chunk) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(limit));
        for (int off = 0; off < stream.length; off += chunk) {
            ch.writeInbound(
                    Unpooled.wrappedBuffer(stream, off, Math.min(chunk, stream.length - off)));
        }
        ch.finish(); // end of input: a partial frame becomes a "truncated" failure; rethrows
        // anything thrown
        List<Object> out = new ArrayList<>();
        for (Object o; (o = ch.readInbound()) != null; ) {
            out.add(o);
        }
        return out;
    }

    static void checkInvariants(byte[] stream, List<Object> out) {
        ByteArrayOutputStream reencoded = new ByteArrayOutputStream();
        for (int i = 0; i < out.size(); i++) {
            Object o = out.get(i);
            if (o instanceof DecodeFailure f) {
                assertEquals(out.size() - 1, i, "output after a failure: " + out);
                assertTrue(
                        f.message() != null && !f.message().isEmpty(),
                        "a failure names its reason");
                return; // the rest of the stream is discarded, whatever it is
            }
            Frame fr = assertInstanceOf(Frame.class, o);
            byte[] bytes = TestSupport.encode(fr.requestId(), fr.msg());
            reencoded.writeBytes(bytes);
        }
        // No failure: the frames are the whole stream, byte for byte.
        assertArrayEquals(stream, reencoded.toByteArray(), "frames do not re-encode to the stream");
    }

    private static String describe(List<Object> out) {
        StringBuilder sb = new StringBuilder();
        for (Object o : out) {
            if (o instanceof Frame f) {
                sb.append(Arrays.toString(TestSupport.encode(f.requestId(), f.msg()))).append('\n');
            } else {
                DecodeFailure d = (DecodeFailure) o;
                sb.append(d.code()).append(": ").append(d.message()).append('\n');
            }
        }
        return sb.toString();
    }

    /**
     * Writes the seed corpus: one frame of every sample message type, and all of them as one
     * stream.
     */
    public static void main(String[] args) throws Exception {
        Path dir =
                Path.of(
                        args.length > 0
                                ? args[0]
                                : "approx-core/src/test/resources/io/netapprox/core/control/"
                                        + "FrameDecoderFuzzTestInputs/decoderIsStrictCanonicalAndChunkingInvariant");
        Files.createDirectories(dir);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        all.write(new byte[] {1, 16});
        List<Msg> samples = WireFormatTest.samples();
        for (int i = 0; i < samples.size(); i++) {
            Msg m = samples.get(i);
            byte[] frame = TestSupport.encode(i + 1, m);
            all.write(frame);
            ByteArrayOutputStream one = new ByteArrayOutputStream();
            one.write(new byte[] {(byte) (i & 1), 63});
            one.write(frame);
            Files.write(dir.resolve(String.format("seed-%02d-%s", i, m.type())), one.toByteArray());
        }
        Files.write(dir.resolve("seed-all-messages"), all.toByteArray());
    }
}
