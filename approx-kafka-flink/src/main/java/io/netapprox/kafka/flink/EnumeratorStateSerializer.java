package io.netapprox.kafka.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Checkpoint format of an {@link EnumeratorState}: version 2 is discovered, the pending splits and
 * the known partitions; version 1 (before partition discovery) lacks the known partitions.
 */
public final class EnumeratorStateSerializer implements SimpleVersionedSerializer<EnumeratorState> {
    static final int VERSION = 2;

    /**
     * A topic has at most this many partitions here (Kafka's own limits are far lower in practice).
     */
    private static final int MAX_SPLITS = 1 << 20;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(EnumeratorState state) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeBoolean(state.discovered());
            out.writeInt(state.pending().size());
            for (PartitionSplit s : state.pending()) {
                PartitionSplitSerializer.write(s, out);
            }
            if (state.known() == null) {
                out.writeInt(-1); // still unknown (restored from version 1, not listed since)
            } else {
                out.writeInt(state.known().size());
                for (int partition : state.known()) {
                    out.writeInt(partition);
                }
            }
        }
        return bytes.toByteArray();
    }

    @Override
    public EnumeratorState deserialize(int version, byte[] serialized) throws IOException {
        if (version != 1 && version != VERSION) {
            throw new IOException(
                    "unknown EnumeratorState serializer version "
                            + version
                            + " (knows 1 and "
                            + VERSION
                            + ")");
        }
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            boolean discovered = in.readBoolean();
            int n = in.readInt();
            if (n < 0 || n > MAX_SPLITS) {
                throw new IOException("corrupt enumerator state: " + n + " splits");
            }
            List<PartitionSplit> pending = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                pending.add(PartitionSplitSerializer.read(in));
            }
            if (version == 1) {
                return new EnumeratorState(discovered, pending, discovered ? null : Set.of());
            }
            int k = in.readInt();
            if (k == -1) {
                return new EnumeratorState(discovered, pending, null);
            }
            if (k < 0 || k > MAX_SPLITS) {
                throw new IOException("corrupt enumerator state: " + k + " known partitions");
            }
            Set<Integer> known = new HashSet<>();
            for (int i = 0; i < k; i++) {
                int partition = in.readInt();
                if (partition < 0) {
                    throw new IOException("corrupt enumerator state: partition " + partition);
                }
                known.add(partition);
            }
            if (in.available() > 0) {
                throw new IOException("corrupt enumerator state: trailing bytes");
            }
            return new EnumeratorState(discovered, pending, known);
        }
    }
}
