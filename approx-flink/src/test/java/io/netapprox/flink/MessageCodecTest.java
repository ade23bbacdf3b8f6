package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.junit.jupiter.api.Test;

/** The bytes that cross the network: round trips, and strict rejection of malformed input. */
class MessageCodecTest {

    private static StratumBuffer buffer(int records, boolean keys) {
        StratumBuffer b = new StratumBuffer(2, keys);
        for (int i = 0; i < records; i++) {
            b.add(new double[] {i, -i * 0.5}, keys ? "k" + (i % 3) + "é" : null);
        }
        return b;
    }

    @Test
    void messagesRoundTrip() {
        StratumBuffer b = buffer(10, true);
        byte[] m = MessageCodec.encode(b, 3, 7);
        List<String> seen = new ArrayList<>();
        int n =
                MessageCodec.decode(
                        Unpooled.wrappedBuffer(m),
                        2,
                        v -> seen.add(v[0] + "/" + v[1]),
                        (k, c) -> seen.add(k + "=" + c));
        assertEquals(4, n);
        assertEquals(
                List.of("3.0/-1.5", "4.0/-2.0", "5.0/-2.5", "6.0/-3.0", "k0é=2", "k1é=1", "k2é=1"),
                seen);
    }

    @Test
    void permutationKeepsRecordsTogether() {
        StratumBuffer b = buffer(100, true);
        b.permute(new SplittableRandom(1));
        double[] firsts = new double[100];
        for (int r = 0; r < 100; r++) {
            assertEquals(-b.value(r, 0) * 0.5, b.value(r, 1), 0.0);
            assertEquals("k" + ((int) b.value(r, 0) % 3) + "é", b.key(r));
            firsts[r] = b.value(r, 0);
        }
        Arrays.sort(firsts);
        for (int r = 0; r < 100; r++) {
            assertEquals(r, firsts[r]);
        }
    }

    @Test
    void malformedMessagesAreRejectedBeforeAnyRecordIsConsumed() {
        byte[] good = MessageCodec.encode(buffer(3, true), 0, 3);
        List<byte[]> bad = new ArrayList<>();
        bad.add(new byte[0]);
        bad.add(new byte[] {0, 0, 0});
        bad.add(Arrays.copyOf(good, good.length - 1)); // truncated
        bad.add(Arrays.copyOf(good, good.length + 1)); // trailing byte
        byte[] many = good.clone();
        many[3] = 4; // claims one record more than there is
        bad.add(many);
        byte[] zero = good.clone();
        zero[3] = 0;
        bad.add(zero);
        byte[] huge = good.clone();
        huge[0] = 0x7f; // 2^31 records
        bad.add(huge);
        int table = 4 + 3 * 16; // header + 3 records of 2 values: the key table starts here
        byte[] longKey = good.clone();
        longKey[table + 4] = (byte) 0xff; // first key's length 65k+
        bad.add(longKey);
        byte[] moreKeys = good.clone();
        moreKeys[table + 3] = 4; // 4 distinct keys for 3 records
        bad.add(moreKeys);
        byte[] badCount = good.clone();
        badCount[
                        table
                                + 4
                                + 2
                                + "k0é".getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                                + 3] =
                2;
        bad.add(badCount); // counts add up to 4, not 3
        bad.add(Arrays.copyOf(good, table + 2)); // key table truncated
        for (byte[] b : bad) {
            ByteBuf in = Unpooled.wrappedBuffer(b);
            int[] consumed = {0};
            assertThrows(
                    IllegalArgumentException.class,
                    () -> MessageCodec.decode(in, 2, v -> consumed[0]++, (k, c) -> consumed[0]++),
                    Arrays.toString(b));
            assertEquals(0, consumed[0], "nothing consumed from " + Arrays.toString(b));
        }
        // a message of another shape (no keys) does not parse either
        assertThrows(
                IllegalArgumentException.class,
                () -> MessageCodec.decode(Unpooled.wrappedBuffer(good), 2, v -> {}, null));
    }

    @Test
    void overlongKeysAreCutOnACharacterBoundary() {
        StratumBuffer b = new StratumBuffer(0, true);
        b.add(new double[0], "é".repeat(MessageCodec.MAX_KEY_BYTES)); // 2 bytes each
        String[] key = {null};
        MessageCodec.decode(
                Unpooled.wrappedBuffer(MessageCodec.encode(b, 0, 1)),
                0,
                v -> {},
                (k, c) -> key[0] = k);
        assertEquals("é".repeat(MessageCodec.MAX_KEY_BYTES / 2), key[0]);
    }

    @Test
    void stratumTablesRoundTripAndRejectGarbage() throws IOException {
        NonFinite odd = new NonFinite(2);
        odd.add(0, Double.NaN);
        odd.add(1, Double.POSITIVE_INFINITY);
        odd.add(1, Double.NEGATIVE_INFINITY);
        odd.add(1, 3.0); // finite: not counted
        List<StratumInfo<Integer>> table =
                List.of(
                        new StratumInfo<>(0, 60_000, 7, 3, 40, 0.5),
                        new StratumInfo<>(60_000, 120_000, -1, 1, 1, 1.0),
                        new StratumInfo<>(0, 60_000, 8, 2, 20, 1.0, odd));
        byte[] bytes = StratumTable.encode(table, IntSerializer.INSTANCE);
        List<StratumInfo<Integer>> back = StratumTable.decode(bytes, 3, 2, IntSerializer.INSTANCE);
        assertEquals(table, back);
        assertEquals(1, back.get(2).nonFinite().nan(0));
        assertEquals(0, back.get(2).nonFinite().nan(1));
        assertEquals(1, back.get(2).nonFinite().positive(1));
        assertEquals(1, back.get(2).nonFinite().negative(1));
        assertTrue(back.get(0).nonFinite().isEmpty());
        assertEquals(2, table.get(0).target());
        assertThrows(
                IOException.class, () -> StratumTable.decode(bytes, 4, 2, IntSerializer.INSTANCE));
        assertThrows(
                IOException.class, () -> StratumTable.decode(bytes, 2, 2, IntSerializer.INSTANCE));
        assertThrows(
                IOException.class, () -> StratumTable.decode(bytes, -1, 2, IntSerializer.INSTANCE));
        int stratum = 8 + 8 + 4 + 4 + 8 + 8 + 1; // window, group (int), N, M, MSR, non-finite flag
        byte[] zeroMsr = bytes.clone();
        Arrays.fill(zeroMsr, 8 + 8 + 4 + 4 + 8, 8 + 8 + 4 + 4 + 8 + 8, (byte) 0);
        assertThrows(
                IOException.class,
                () -> StratumTable.decode(zeroMsr, 3, 2, IntSerializer.INSTANCE));
        byte[] badFlag = bytes.clone();
        badFlag[stratum - 1] = 2;
        assertThrows(
                IOException.class,
                () -> StratumTable.decode(badFlag, 3, 2, IntSerializer.INSTANCE));
        byte[] tooMany = bytes.clone(); // third stratum: 20 records, NaN count of column 0 -> 2^56
        tooMany[3 * stratum] = 1;
        assertThrows(
                IOException.class,
                () -> StratumTable.decode(tooMany, 3, 2, IntSerializer.INSTANCE));
        byte[] negative = bytes.clone();
        negative[3 * stratum] = (byte) 0x80;
        assertThrows(
                IOException.class,
                () -> StratumTable.decode(negative, 3, 2, IntSerializer.INSTANCE));
    }

    @Test
    void aNullKeyIsAKeyOfItsOwnNotTheEmptyString() {
        StratumBuffer b = new StratumBuffer(1, true);
        b.add(new double[] {Double.NaN}, null);
        b.add(new double[] {1}, "");
        b.add(new double[] {Double.POSITIVE_INFINITY}, null);
        List<String> seen = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        int n =
                MessageCodec.decode(
                        Unpooled.wrappedBuffer(MessageCodec.encode(b, 0, 3)),
                        1,
                        v -> values.add(v[0]),
                        (k, c) -> seen.add(k == null ? "<null>=" + c : "'" + k + "'=" + c));
        assertEquals(3, n);
        assertEquals(List.of("<null>=2", "''=1"), seen);
        assertEquals(List.of(Double.NaN, 1.0, Double.POSITIVE_INFINITY), values);
        assertEquals(1, b.nonFinite().nan(0));
        assertEquals(1, b.nonFinite().positive(0));
        // the null marker may come once per message
        byte[] twice = MessageCodec.encode(b, 0, 3);
        int keys = 4 + 3 * 8 + 4; // header, 3 values, key count: the first key's length is here
        twice[keys + 2 + 4] = (byte) 0xff; // the second key ("", length 0) becomes a null marker
        twice[keys + 2 + 4 + 1] = (byte) 0xff;
        assertThrows(
                IllegalArgumentException.class,
                () -> MessageCodec.decode(Unpooled.wrappedBuffer(twice), 1, v -> {}, (k, c) -> {}));
    }

    @Test
    void outboxKeysRoundTripAndRequestsOfTheWrongSizeAreRefused() {
        OutboxKey k = new OutboxKey(-5, 3, 1, 77, 2);
        assertEquals(k, OutboxKey.fromBytes(k.toBytes()));
        assertArrayEquals(k.toBytes(), OutboxKey.fromBytes(k.toBytes()).toBytes());
        assertThrows(IllegalArgumentException.class, () -> OutboxKey.fromBytes(new byte[27]));
        assertThrows(IllegalArgumentException.class, () -> OutboxKey.fromBytes(new byte[29]));
        assertThrows(IllegalArgumentException.class, () -> OutboxKey.fromBytes(null));
    }
}
