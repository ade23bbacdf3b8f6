package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

/** approx.stratum=partition|key|header:<name>: which stratum a record belongs to. */
class StratifierTest {
    private static ConsumerRecord<byte[], byte[]> record(int partition, byte[] key, byte[] zone) {
        RecordHeaders h = new RecordHeaders();
        if (zone != null) {
            h.add(new RecordHeader("zone", zone));
        }
        return new ConsumerRecord<>(
                "t",
                partition,
                0L,
                0L,
                TimestampType.CREATE_TIME,
                -1,
                -1,
                key,
                new byte[1],
                h,
                Optional.empty());
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String stratum(String spec, ConsumerRecord<byte[], byte[]> r) {
        return new Stratifier(Stratification.parse("approx.stratum", spec)).stratumOf(r);
    }

    @Test
    void partitionKeyAndHeaderStrata() {
        ConsumerRecord<byte[], byte[]> r = record(3, utf8("k-ü"), utf8("zone-17"));
        assertEquals("3", stratum("partition", r));
        assertEquals("k-ü", stratum("key", r));
        assertEquals("zone-17", stratum("header:zone", r));
        assertEquals(Stratifier.NONE, stratum("header:other", r));
        assertEquals(Stratifier.NONE, stratum("key", record(0, null, null)));
        assertEquals(Stratifier.NONE, stratum("header:zone", record(0, null, null)));
    }

    @Test
    void bytesThatAreNotUtf8OrTooLongGetDistinctNames() {
        byte[] bad = {(byte) 0xff, (byte) 0xfe};
        assertEquals("0xfffe", stratum("key", record(0, bad, null)));
        byte[] a = new byte[Stratifier.MAX_NAME_BYTES + 1];
        Arrays.fill(a, (byte) 'a');
        byte[] b = a.clone();
        b[b.length - 1] = 'b';
        String na = stratum("key", record(0, a, null));
        assertTrue(na.startsWith("sha256:") && na.length() == 7 + 64, na);
        assertNotEquals(na, stratum("key", record(0, b, null)));
        byte[] limit = Arrays.copyOf(a, Stratifier.MAX_NAME_BYTES);
        assertEquals(
                new String(limit, StandardCharsets.UTF_8), stratum("key", record(0, limit, null)));
    }

    @Test
    void badSpecsNameTheKey() {
        for (String bad : new String[] {"value", "header:", "Key", ""}) {
            ConfigException e =
                    assertThrows(
                            ConfigException.class,
                            () -> Stratification.parse("approx.stratum", bad));
            assertTrue(e.getMessage().contains("approx.stratum"), e.getMessage());
        }
    }

    /**
     * Keys as views into one shared buffer (as the relay's consumer returns them), more distinct
     * keys than the name cache holds, each asked twice: every name is that of its own bytes.
     */
    @Test
    void cachedNamesAreThoseOfTheViewsBytes() {
        Stratifier s = new Stratifier(Stratification.parse("approx.stratum", "key"));
        int n = Stratifier.MAX_CACHED_NAMES + 100;
        java.nio.ByteBuffer all = java.nio.ByteBuffer.allocate(n * 8);
        for (int i = 0; i < n; i++) {
            all.put(utf8(String.format("k%07d", i)));
        }
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < n; i++) {
                java.nio.ByteBuffer view = all.duplicate().position(i * 8).limit(i * 8 + 8).slice();
                ConsumerRecord<java.nio.ByteBuffer, byte[]> r =
                        new ConsumerRecord<>(
                                "t",
                                0,
                                0L,
                                0L,
                                TimestampType.CREATE_TIME,
                                -1,
                                -1,
                                view,
                                new byte[1],
                                new RecordHeaders(),
                                Optional.empty());
                assertEquals(String.format("k%07d", i), s.stratumOf(r));
                assertEquals(0, view.position(), "the view is not moved");
            }
        }
    }
}
