package io.netapprox.kafka.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The enumerator's checkpoint: round trips, the first format, corrupt input. */
class EnumeratorStateSerializerTest {
    private final EnumeratorStateSerializer serializer = new EnumeratorStateSerializer();

    @Test
    void roundTripKeepsPendingSplitsAndKnownPartitions() throws IOException {
        EnumeratorState state =
                new EnumeratorState(
                        true,
                        List.of(new PartitionSplit("t", 3, 7, PartitionSplit.UNBOUNDED)),
                        Set.of(0, 1, 2, 3));
        byte[] bytes = serializer.serialize(state);
        assertEquals(state, serializer.deserialize(serializer.getVersion(), bytes));
        EnumeratorState unknown = new EnumeratorState(true, List.of(), null);
        assertEquals(
                unknown,
                serializer.deserialize(serializer.getVersion(), serializer.serialize(unknown)));
    }

    @Test
    void firstFormatRestoresWithoutKnownPartitions() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeBoolean(true); // version 1: discovered, pending splits, nothing more
            out.writeInt(1);
            PartitionSplitSerializer.write(new PartitionSplit("t", 1, 5, 9), out);
        }
        EnumeratorState restored = serializer.deserialize(1, bytes.toByteArray());
        assertEquals(List.of(new PartitionSplit("t", 1, 5, 9)), restored.pending());
        assertNull(restored.known(), "every partition of the next listing counts as read");
    }

    @Test
    void corruptOrUnknownInputFailsWithIOException() throws IOException {
        byte[] good =
                serializer.serialize(
                        new EnumeratorState(
                                true, List.of(new PartitionSplit("t", 0, 0, 1)), Set.of(0)));
        assertThrows(IOException.class, () -> serializer.deserialize(99, good));
        for (int n = 0; n < good.length; n++) {
            byte[] cut = Arrays.copyOf(good, n);
            assertThrows(IOException.class, () -> serializer.deserialize(2, cut), "cut at " + n);
        }
        byte[] longer = Arrays.copyOf(good, good.length + 1);
        assertThrows(IOException.class, () -> serializer.deserialize(2, longer));
    }
}
