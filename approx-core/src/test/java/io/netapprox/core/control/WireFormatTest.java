package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.DecodeFailure;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Codec round trips and a decoder fuzz: strict, exception-free, at most one failure per connection.
 */
class WireFormatTest {

    static List<Msg> samples() throws Exception {
        JobReport report =
                JobReport.outcome(
                        -1,
                        AtpStatus.PEER_DEAD,
                        99,
                        5,
                        0.125,
                        new long[] {1, 2, 3},
                        List.of(
                                GroupReport.ofIds(
                                        Long.MIN_VALUE,
                                        1000,
                                        IdSet.ofRange(0, 500),
                                        IdSet.of(600, 602, 604, 999)),
                                GroupReport.ofIds(7, 1, IdSet.empty(), IdSet.empty())));
        return List.of(
                new Messages.HelloMsg(
                        2,
                        3,
                        1 << 20,
                        "exec-1@host",
                        InetAddress.getByName("::1"),
                        65535,
                        filled(32, 0x11),
                        filled(32, 0x22)),
                new Messages.HelloMsg(2, 2, 4096, "no-udp", null, 0, new byte[32], new byte[32]),
                new Messages.HelloAckMsg(
                        2,
                        true,
                        1 << 20,
                        "srv",
                        InetAddress.getByName("10.0.0.1"),
                        1,
                        filled(32, 0x33),
                        filled(32, 0x44)),
                new Messages.HelloAckMsg(
                        2,
                        false,
                        1 << 20,
                        "srv",
                        InetAddress.getByName("10.0.0.1"),
                        1,
                        new byte[32],
                        new byte[32]),
                new Messages.AuthResponseMsg(filled(32, 0x55)),
                new Messages.AuthOkMsg(new byte[32]),
                new Messages.SessionSetupMsg(),
                new Messages.SessionSetupAckMsg(-5L, filled(32, 0x66)),
                new Messages.JobAnnounceMsg(
                        JobAnnouncement.ofGroups(
                                1,
                                List.of(new GroupSpec(1, 10, 0.3), new GroupSpec(2, 20, 1.0)),
                                true,
                                new byte[] {9, 8})),
                new Messages.JobAnnounceMsg(JobAnnouncement.global(2, 100, 0.0, false, null)),
                new Messages.JobAnnounceMsg(
                        JobAnnouncement.ofGroups(
                                        JobAnnouncement.PUSHED_JOB_ID_BIT | 5,
                                        List.of(new GroupSpec(3, 7, 0.5)),
                                        false,
                                        new byte[] {1, 2, 3, 4})
                                .asPushed()),
                new Messages.JobAcceptMsg(4),
                new Messages.JobRejectMsg(4, "nope \u00e9\u4e2d"),
                new Messages.DataRequestMsg(7, new byte[] {1, 2, 3}),
                new Messages.DataResponseMsg(new byte[0]),
                new Messages.MsrUpdateMsg(MsrUpdate.of(3, 2, 0.75)),
                new Messages.JobReportMsg(report),
                new Messages.AckMsg(),
                new Messages.ErrorMsg(ErrorCode.AUTH_FAILED.code(), "bad"),
                new Messages.PingMsg(),
                new Messages.PongMsg(),
                // version 4: both data planes offered, TCP alone (no UDP address), the attach and
                // the choice
                new Messages.HelloMsg(
                        4,
                        4,
                        1 << 20,
                        "both",
                        InetAddress.getByName("10.0.0.2"),
                        7000,
                        filled(32, 0x12),
                        filled(32, 0x23),
                        DataPlaneKind.ATP.bit() | DataPlaneKind.TCP.bit()),
                new Messages.HelloAckMsg(
                        4,
                        false,
                        1 << 20,
                        "tcp-only",
                        null,
                        0,
                        filled(32, 0x34),
                        filled(32, 0x45),
                        DataPlaneKind.TCP.bit()),
                new Messages.DataAttachMsg(0x1234_5678_9abc_def0L, filled(32, 0x56)),
                new Messages.DataAttachAckMsg(filled(32, 0x67), filled(32, 0x78)),
                new Messages.DataAttachProofMsg(filled(32, 0x89)),
                new Messages.DataPlaneSelectMsg(DataPlaneKind.TCP, "UDP probe: no answer"),
                new Messages.DataPlaneSelectMsg(DataPlaneKind.ATP, ""));
    }

    private static byte[] filled(int n, int value) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) value);
        return b;
    }

    private static byte[] frameBytes(long id, Msg m) {
        return TestSupport.encode(id, m);
    }

    @Test
    void everyMessageRoundTripsThroughTheDecoder() throws Exception {
        for (Msg m : samples()) {
            byte[] bytes = frameBytes(42, m);
            EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20));
            ch.writeInbound(Unpooled.wrappedBuffer(bytes));
            Frame f = assertInstanceOf(Frame.class, ch.readInbound(), m.toString());
            assertEquals(42, f.requestId());
            assertEquals(m.type(), f.type());
            // Canonical: re-encoding the decoded message gives the same bytes.
            assertArrayEquals(bytes, frameBytes(42, f.msg()), m.type().toString());
            assertFalse(ch.finish());
        }
    }

    @Test
    void framesSplitAtEveryByteBoundaryDecode() throws Exception {
        byte[] all = new byte[0];
        List<Msg> msgs = samples();
        for (Msg m : msgs) {
            byte[] b = frameBytes(1, m);
            byte[] n = new byte[all.length + b.length];
            System.arraycopy(all, 0, n, 0, all.length);
            System.arraycopy(b, 0, n, all.length, b.length);
            all = n;
        }
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20));
        for (byte x : all) {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {x}));
        }
        for (Msg m : msgs) {
            Frame f = assertInstanceOf(Frame.class, ch.readInbound());
            assertEquals(m.type(), f.type());
        }
        assertFalse(ch.finish());
    }

    @Test
    void fuzzedInputNeverThrowsAndFailsAtMostOnce() throws Exception {
        Random rnd = new Random(20240601);
        List<byte[]> valid = new ArrayList<>();
        for (Msg m : samples()) {
            valid.add(frameBytes(rnd.nextLong(), m));
        }
        int failures = 0;
        for (int trial = 0; trial < 20_000; trial++) {
            byte[] input;
            if (trial % 2 == 0) { // bit flips and truncations of valid frames
                input = valid.get(rnd.nextInt(valid.size())).clone();
                int flips = 1 + rnd.nextInt(4);
                for (int k = 0; k < flips; k++) {
                    input[rnd.nextInt(input.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
                if (rnd.nextInt(4) == 0) {
                    input = java.util.Arrays.copyOf(input, rnd.nextInt(input.length + 1));
                }
            } else { // a valid header with a random body
                byte[] body = new byte[rnd.nextInt(200)];
                rnd.nextBytes(body);
                MessageType t = MessageType.values()[rnd.nextInt(MessageType.values().length)];
                input = TestSupport.rawFrame(t, 1, body);
            }
            EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(1 << 20));
            ch.writeInbound(Unpooled.wrappedBuffer(input)); // throws if the decoder throws
            ch.writeInbound(Unpooled.wrappedBuffer(input)); // input after a failure is ignored
            ch.finish();
            int decodeFailures = 0;
            for (Object o; (o = ch.readInbound()) != null; ) {
                if (o instanceof DecodeFailure) {
                    decodeFailures++;
                } else {
                    Frame f = assertInstanceOf(Frame.class, o);
                    assertTrue(decodeFailures == 0, "no frame after a failure");
                    // Anything that decodes is canonical.
                    byte[] again = frameBytes(f.requestId(), f.msg());
                    EmbeddedChannel ch2 = new EmbeddedChannel(new FrameDecoder(1 << 20));
                    ch2.writeInbound(Unpooled.wrappedBuffer(again));
                    assertInstanceOf(Frame.class, ch2.readInbound());
                }
            }
            assertTrue(decodeFailures <= 1);
            failures += decodeFailures;
        }
        assertTrue(failures > 10_000, "the fuzz mostly produces invalid input: " + failures);
    }

    @Test
    void idSetsChooseTheSmallerEncodingAndRoundTrip() {
        Random rnd = new Random(3);
        for (int trial = 0; trial < 500; trial++) {
            int n = rnd.nextInt(300);
            int[] ids = new int[n];
            int spread = 1 + rnd.nextInt(5000);
            int base = rnd.nextInt(1 << 20);
            for (int i = 0; i < n; i++) {
                ids[i] = base + rnd.nextInt(spread);
            }
            IdSet s = IdSet.of(ids);
            java.util.TreeSet<Integer> expect = new java.util.TreeSet<>();
            for (int id : ids) {
                expect.add(id);
            }
            assertEquals(expect.size(), s.cardinality());
            int[] arr = s.toArray();
            int k = 0;
            for (int id : expect) {
                assertEquals(id, arr[k++]);
                assertTrue(s.contains(id));
            }
            assertFalse(s.contains(base + spread + 1));
            ByteBuf buf = Unpooled.buffer();
            IdSetCodec.encode(s, buf);
            assertEquals(IdSetCodec.encodedLength(s), buf.readableBytes());
            IdSet back = IdSetCodec.decode(buf, "x");
            assertEquals(s, back);
            assertFalse(buf.isReadable());
        }
        assertEquals(
                IdSet.ofRange(5, 1000),
                IdSet.of(java.util.stream.IntStream.range(5, 1005).toArray()));
        assertThrows(IllegalArgumentException.class, () -> IdSet.of(-1));
    }

    @Test
    void idSetRejectsNonCanonicalOrOversizedEncodings() {
        ByteBuf padding =
                Unpooled.buffer()
                        .writeByte(IdSetCodec.ENC_BITMAP)
                        .writeInt(0)
                        .writeInt(3)
                        .writeByte(0xFF);
        assertThrows(WireFormat.MalformedException.class, () -> IdSetCodec.decode(padding, "x"));
        ByteBuf huge =
                Unpooled.buffer()
                        .writeByte(IdSetCodec.ENC_BITMAP)
                        .writeInt(0)
                        .writeInt(0x7FFF_FFFF);
        assertThrows(WireFormat.MalformedException.class, () -> IdSetCodec.decode(huge, "x"));
        ByteBuf adjacent =
                Unpooled.buffer()
                        .writeByte(IdSetCodec.ENC_RANGES)
                        .writeInt(2)
                        .writeInt(0)
                        .writeInt(5)
                        .writeInt(5)
                        .writeInt(1);
        assertThrows(WireFormat.MalformedException.class, () -> IdSetCodec.decode(adjacent, "x"));
        ByteBuf overflow =
                Unpooled.buffer()
                        .writeByte(IdSetCodec.ENC_RANGES)
                        .writeInt(1)
                        .writeInt(0x7FFF_FFFF)
                        .writeInt(2);
        assertThrows(WireFormat.MalformedException.class, () -> IdSetCodec.decode(overflow, "x"));
        // Found by FrameDecoderFuzzTest in CI: these decoded into sets that re-encode differently.
        // Ranges where the bitmap is smaller: ids 0, 2, 4, 6 are 37 bytes as ranges, 10 as a
        // bitmap.
        ByteBuf rangesNotBitmap = Unpooled.buffer().writeByte(IdSetCodec.ENC_RANGES).writeInt(4);
        for (int id = 0; id <= 6; id += 2) {
            rangesNotBitmap.writeInt(id).writeInt(1);
        }
        assertThrows(
                WireFormat.MalformedException.class, () -> IdSetCodec.decode(rangesNotBitmap, "x"));
        // A bitmap that does not start on a member (bit 0 clear): the set {1, 3} spans 1..3.
        ByteBuf bitmapLeadingZero =
                Unpooled.buffer()
                        .writeByte(IdSetCodec.ENC_BITMAP)
                        .writeInt(0)
                        .writeInt(4)
                        .writeByte(0b1010);
        assertThrows(
                WireFormat.MalformedException.class,
                () -> IdSetCodec.decode(bitmapLeadingZero, "x"));
        // A bitmap of one range: the ranges form (13 bytes) is smaller than the bitmap (8 + 64).
        ByteBuf bitmapOfARange =
                Unpooled.buffer().writeByte(IdSetCodec.ENC_BITMAP).writeInt(0).writeInt(512);
        bitmapOfARange.writeBytes(new byte[64], 0, 64);
        for (int i = 0; i < 64; i++) {
            bitmapOfARange.setByte(9 + i, 0xFF);
        }
        assertThrows(
                WireFormat.MalformedException.class, () -> IdSetCodec.decode(bitmapOfARange, "x"));
        // An all-zero bitmap is the empty set, whose canonical form is zero ranges.
        ByteBuf bitmapEmpty =
                Unpooled.buffer()
                        .writeByte(IdSetCodec.ENC_BITMAP)
                        .writeInt(0)
                        .writeInt(8)
                        .writeByte(0);
        assertThrows(
                WireFormat.MalformedException.class, () -> IdSetCodec.decode(bitmapEmpty, "x"));
        ByteBuf unknown = Unpooled.buffer().writeByte(7);
        assertThrows(WireFormat.MalformedException.class, () -> IdSetCodec.decode(unknown, "x"));
    }

    @Test
    void nonCanonicalJobReportsAreMalformed() throws Exception {
        // Found by FrameDecoderFuzzTest: status 0x030000F9 decoded as UNKNOWN and re-encoded as
        // Integer.MIN_VALUE, so the frame did not re-encode to its own bytes.
        Msg report =
                samples().stream()
                        .filter(m -> m instanceof Messages.JobReportMsg)
                        .findFirst()
                        .orElseThrow();
        byte[] frame = TestSupport.encode(1, report);
        java.nio.ByteBuffer.wrap(frame).putInt(WireFormat.HEADER_LENGTH + 4, 0x030000F9);
        List<Object> out = FrameDecoderFuzzTest.decode(frame, 1 << 20, frame.length);
        assertEquals(1, out.size());
        assertTrue(
                out.get(0) instanceof Messages.DecodeFailure f && f.message().contains("status"),
                "decoded: " + out);
        // Found by FrameDecoderFuzzTest: trailing zero priority classes, which the encoder leaves
        // out (the sample's classes are {1, 2, 3}: set the last one to 0).
        byte[] zeroClass = TestSupport.encode(1, report);
        java.nio.ByteBuffer.wrap(zeroClass).putLong(WireFormat.HEADER_LENGTH + 33 + 16, 0);
        List<Object> zero = FrameDecoderFuzzTest.decode(zeroClass, 1 << 20, zeroClass.length);
        assertTrue(
                zero.get(0) instanceof Messages.DecodeFailure f
                        && f.message().contains("priority classes"),
                "decoded: " + zero);
        // A known code still decodes.
        java.nio.ByteBuffer.wrap(frame)
                .putInt(WireFormat.HEADER_LENGTH + 4, AtpStatus.IDLE_TIMEOUT.code());
        assertTrue(
                FrameDecoderFuzzTest.decode(frame, 1 << 20, frame.length).get(0)
                        instanceof Messages.Frame);
    }

    /**
     * Version 3: a pushed JOB_ANNOUNCE carries flag 4 and a job id with bit 31 set (the pusher's id
     * space); a pushed flag on a requester-space id is malformed, and so is any other unknown flag.
     */
    @Test
    void pushedJobAnnounceIsValidated() {
        JobAnnouncement ok =
                JobAnnouncement.ofGroups(
                                JobAnnouncement.PUSHED_JOB_ID_BIT | 9,
                                List.of(new GroupSpec(1, 4, 1.0)),
                                false,
                                new byte[] {7})
                        .asPushed();
        byte[] frame = frameBytes(1, new Messages.JobAnnounceMsg(ok));
        int flagsAt = WireFormat.HEADER_LENGTH + 4;
        assertEquals(WireFormat.JOB_FLAG_PUSHED, frame[flagsAt]);
        Messages.JobAnnounceMsg back =
                (Messages.JobAnnounceMsg)
                        ((Frame) FrameDecoderFuzzTest.decode(frame, 1 << 20, frame.length).get(0))
                                .msg();
        assertTrue(back.job().pushed());
        assertEquals(ok, back.job());

        byte[] lowId = frame.clone(); // clear bit 31 of the job id
        lowId[WireFormat.HEADER_LENGTH] = 0;
        assertMalformed(lowId, "bit 31");
        byte[] unknownFlag = frame.clone();
        unknownFlag[flagsAt] = 8;
        assertMalformed(unknownFlag, "unknown flags");
        assertThrows(
                IllegalArgumentException.class,
                () -> JobAnnouncement.global(3, 1, 1.0, false, null).asPushed(),
                "a pushed job id without bit 31 is refused locally too");
    }

    /**
     * Version 4: HELLO / HELLO_ACK carry a non-empty set of known planes, ATP exactly with a UDP
     * address; DATA_PLANE_SELECT names exactly one plane; DATA_ATTACH never session 0.
     */
    @Test
    void dataPlaneFieldsAreValidated() throws Exception {
        byte[] hello = frameBytes(1, TestSupport.hello("h", 9));
        int planesAt = WireFormat.HEADER_LENGTH + 2;
        assertEquals(DataPlaneKind.ATP.bit(), hello[planesAt], "a HELLO with an address: ATP");
        byte[] none = hello.clone();
        none[planesAt] = 0;
        assertMalformed(none, "not a valid set");
        byte[] unknown = hello.clone();
        unknown[planesAt] = 4;
        assertMalformed(unknown, "not a valid set");
        byte[] tcpWithAddress = hello.clone();
        tcpWithAddress[planesAt] = (byte) DataPlaneKind.TCP.bit();
        assertMalformed(tcpWithAddress, "does not offer ATP");
        byte[] reserved = hello.clone();
        reserved[planesAt + 1] = 1;
        assertMalformed(reserved, "reserved");
        byte[] atpWithoutAddress =
                frameBytes(
                        1,
                        new Messages.HelloMsg(
                                4,
                                4,
                                4096,
                                "x",
                                null,
                                0,
                                new byte[32],
                                new byte[32],
                                DataPlaneKind.ATP.bit()));
        assertMalformed(atpWithoutAddress, "ATP without a UDP address");

        byte[] select = frameBytes(1, new Messages.DataPlaneSelectMsg(DataPlaneKind.ATP, "why"));
        for (int bad : new int[] {0, 3, 4}) {
            byte[] b = select.clone();
            b[WireFormat.HEADER_LENGTH] = (byte) bad;
            assertMalformed(b, "not exactly one data plane");
        }
        byte[] attach = frameBytes(1, new Messages.DataAttachMsg(1, new byte[32]));
        byte[] zero = attach.clone();
        zero[WireFormat.HEADER_LENGTH + 7] = 0;
        assertMalformed(zero, "session id 0");
    }

    private static void assertMalformed(byte[] frame, String expected) {
        Object r = FrameDecoderFuzzTest.decode(frame, 1 << 20, frame.length).get(0);
        assertFalse(r instanceof Frame, "must not decode: " + r);
        assertTrue(String.valueOf(r).contains(expected), r + " should mention " + expected);
    }

    @Test
    void anIpv4MappedIpv6AddressIsMalformed() {
        // Found by FrameDecoderFuzzTest: ::ffff:255.253.0.1 decoded as an Inet4Address and
        // re-encoded as family 4, so the HELLO did not re-encode to its own bytes.
        ByteBuf mapped = Unpooled.buffer().writeByte(6).writeZero(10).writeShort(0xFFFF);
        mapped.writeBytes(new byte[] {(byte) 255, (byte) 253, 0, 1});
        WireFormat.MalformedException e =
                assertThrows(
                        WireFormat.MalformedException.class,
                        () -> WireFormat.readAddress(mapped, "udpAddress"));
        assertTrue(e.getMessage().contains("IPv4-mapped"), e.getMessage());
        ByteBuf v6 = Unpooled.buffer().writeByte(6).writeZero(15).writeByte(1); // ::1
        assertEquals("/0:0:0:0:0:0:0:1", WireFormat.readAddress(v6, "udpAddress").toString());
    }

    @Test
    void valueTypesValidate() {
        assertThrows(IllegalArgumentException.class, () -> new GroupSpec(1, 10, 1.01));
        assertThrows(IllegalArgumentException.class, () -> new GroupSpec(1, 10, Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> new GroupSpec(1, -1, 0.5));
        assertThrows(
                IllegalArgumentException.class,
                () -> new GroupSpec(1, 0, 0.5)); // one rule: N_g >= 1
        assertThrows(
                IllegalArgumentException.class,
                () -> JobAnnouncement.ofGroups(1, List.of(), false, null));
        assertThrows(IllegalArgumentException.class, () -> new MsrUpdate(1, List.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> JobReport.outcome(1, AtpStatus.OK, 0, 0, 2.0, null, List.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> JobReport.outcome(1, AtpStatus.OK, 0, 0, 0.0, new long[9], List.of()));
        assertThrows(
                IllegalArgumentException.class,
                () -> GroupReport.ofIds(1, 2, IdSet.ofRange(0, 2), IdSet.ofRange(2, 1)));
    }
}
