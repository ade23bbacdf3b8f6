package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** The relay's wire format: round trips, and untrusted bytes never do more than fail cleanly. */
class RelayProtocolTest {
    private static final TopicPartition TP = new TopicPartition("trips", 3);

    private static StreamSpec spec() {
        return new StreamSpec(
                0.05,
                Map.of("zone-17", 0.01, "ünïcode", 0.2),
                0.95,
                1.5,
                1.25,
                60_000,
                1000,
                new Stratification(Stratification.Kind.HEADER, "zone"),
                true,
                -42,
                new ValueSource(ValueSource.Kind.HEADER, "fare"));
    }

    private static Segment segment() {
        List<Cell> cells =
                List.of(new Cell(60_000, "a", 1000, 300, 375), new Cell(60_000, "b", 1, 1, 1));
        List<SampledRecord> rs =
                List.of(
                        new SampledRecord(
                                10,
                                61_000,
                                TimestampType.CREATE_TIME,
                                null,
                                "v".getBytes(StandardCharsets.UTF_8),
                                new Header[] {new RecordHeader("zone", new byte[] {'b'})},
                                1));
        return new Segment(TP, 5, 1006, 2000, cells, rs);
    }

    @Test
    void requestsRoundTrip() {
        for (RelayProtocol.Request r :
                List.of(
                        new RelayProtocol.Open(spec()),
                        new RelayProtocol.Open(
                                spec(), new DelegatedToken("tok-EN_1d", "aGVsbG8+/w==")),
                        new RelayProtocol.Pull(TP, 12345, 5000, 17),
                        new RelayProtocol.Release(List.of(TP, new TopicPartition("x", 0)), 18))) {
            assertEquals(r, RelayProtocol.decodeRequest(RelayProtocol.encode(r)));
        }
    }

    /**
     * A delegation token's strings end up in a JAAS line on the relay: anything but Base64 (a
     * quote, a semicolon, a space: another login option) is refused when decoding, and never
     * printed.
     */
    @Test
    void delegationTokensAreBase64OnlyAndTheirHmacIsNeverShown() {
        for (String[] bad :
                new String[][] {
                    {"id\" tokenauth=\"false", "aGVsbG8="},
                    {"id", "x\"; other required"},
                    {"id", ""},
                    {"", "aGVsbG8="},
                    {"id", "a b"}
                }) {
            assertThrows(IllegalArgumentException.class, () -> new DelegatedToken(bad[0], bad[1]));
        }
        // on the wire: a hand-made OPEN carrying a quote in the token id
        byte[] good =
                RelayProtocol.encode(
                        new RelayProtocol.Open(spec(), new DelegatedToken("ab", "cd")));
        int at = good.length - 8; // ... u16 2, "ab", u16 2, "cd"
        assertEquals('a', good[at + 2]);
        good[at + 2] = '"';
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> RelayProtocol.decodeRequest(good));
        assertTrue(e.getMessage().contains("Base64"), e.getMessage());
        DelegatedToken t = new DelegatedToken("tokid", "c2VjcmV0");
        assertFalse(t.toString().contains("c2VjcmV0"));
        assertFalse(new RelayProtocol.Open(spec(), t).toString().contains("c2VjcmV0"));
        assertTrue(t.jaasConfig().contains("tokenauth=\"true\""));
        // the consumer's own login token is found in its JAAS configuration
        assertEquals(
                new DelegatedToken("tokid", "c2VjcmV0"),
                TokenDelegation.loginToken(t.jaasConfig()));
        assertEquals(
                null,
                TokenDelegation.loginToken(
                        "org.apache.kafka.common.security.scram.ScramLoginModule required"
                                + " username=\"alice\" password=\"pw\";"));
    }

    @Test
    void answersRoundTripAndFailuresThrowTheRelaysReason() {
        Segment s = segment();
        RelayProtocol.SegmentHeader h = RelayProtocol.decodeHeader(RelayProtocol.header(s));
        assertEquals(s.from(), h.from());
        assertEquals(s.to(), h.to());
        assertEquals(s.logEnd(), h.logEnd());
        assertEquals(s.cells(), h.cells());
        assertEquals(376, h.records());
        RelayProtocol.checkOk(RelayProtocol.ok());
        RelayException e =
                assertThrows(
                        RelayException.class,
                        () ->
                                RelayProtocol.decodeHeader(
                                        RelayProtocol.failure(
                                                new RelayException(
                                                        RelayException.Reason.NOT_LEADER,
                                                        "moved",
                                                        7,
                                                        null))));
        assertEquals(RelayException.Reason.NOT_LEADER, e.reason());
        assertEquals(7, e.leaderId());
        assertTrue(e.getMessage().contains("moved"));
    }

    @Test
    void recordsRoundTripWithNullsAndHeaders() {
        SampledRecord r =
                new SampledRecord(
                        99,
                        -1,
                        TimestampType.NO_TIMESTAMP_TYPE,
                        new byte[] {1, 2},
                        null,
                        new Header[] {
                            new RecordHeader("a", null), new RecordHeader("zone", new byte[] {9})
                        },
                        4);
        ByteBuf buf = Unpooled.buffer();
        RelayProtocol.writeRecord(r, buf);
        SampledRecord back = RelayProtocol.readRecord(buf.nioBuffer(), 4);
        assertEquals(99, back.offset());
        assertEquals(-1, back.timestamp());
        assertEquals(TimestampType.NO_TIMESTAMP_TYPE, back.timestampType());
        assertArrayEquals(new byte[] {1, 2}, back.key());
        assertNull(back.value());
        assertEquals("a", back.headers()[0].key());
        assertNull(back.headers()[0].value());
        assertArrayEquals(new byte[] {9}, back.headers()[1].value());
        assertEquals(4, back.cell());
    }

    /**
     * Every truncation and 20,000 random bit flips of valid messages, plus random bytes: the
     * decoders either decode or throw IllegalArgumentException / RelayException, nothing else.
     */
    @Test
    void malformedInputFailsCleanly() {
        ByteBuf rec = Unpooled.buffer();
        RelayProtocol.writeRecord(segment().records().get(0), rec);
        byte[] record = Arrays.copyOf(rec.array(), rec.writerIndex());
        byte[][] valid = {
            RelayProtocol.encode(new RelayProtocol.Open(spec())),
            RelayProtocol.encode(
                    new RelayProtocol.Open(spec(), new DelegatedToken("id", "aGVsbG8="))),
            RelayProtocol.encode(new RelayProtocol.Pull(TP, 1, 1, 1)),
            RelayProtocol.encode(new RelayProtocol.Release(List.of(TP), 2)),
            RelayProtocol.header(segment()),
            RelayProtocol.failure(new RelayException(RelayException.Reason.READ_FAILED, "x")),
            record
        };
        SplittableRandom rnd = new SplittableRandom(5);
        int decoded = 0;
        for (byte[] v : valid) {
            for (int n = 0; n < v.length; n++) {
                decoded += tryAll(Arrays.copyOf(v, n));
            }
            for (int i = 0; i < 20_000 / valid.length; i++) {
                byte[] m = v.clone();
                int flips = 1 + rnd.nextInt(3);
                for (int f = 0; f < flips; f++) {
                    m[rnd.nextInt(m.length)] ^= (byte) (1 << rnd.nextInt(8));
                }
                decoded += tryAll(m);
            }
        }
        for (int i = 0; i < 5000; i++) {
            byte[] m = new byte[rnd.nextInt(64)];
            for (int j = 0; j < m.length; j++) {
                m[j] = (byte) rnd.nextInt(256);
            }
            decoded += tryAll(m);
        }
        assertTrue(decoded > 0, "some mutations still decode (e.g. flipped value bytes)");
    }

    private static int tryAll(byte[] m) {
        int ok = 0;
        ok += attempt(() -> RelayProtocol.decodeRequest(m));
        ok += attempt(() -> RelayProtocol.decodeHeader(m));
        ok += attempt(() -> RelayProtocol.checkOk(m));
        ok += attempt(() -> RelayProtocol.readRecord(ByteBuffer.wrap(m), 0));
        return ok;
    }

    private static int attempt(Runnable r) {
        try {
            r.run();
            return 1;
        } catch (IllegalArgumentException | RelayException e) {
            return 0;
        }
    }
}
