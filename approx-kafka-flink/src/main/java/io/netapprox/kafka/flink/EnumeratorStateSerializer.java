package io.netapprox.kafka.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/** Checkpoint format of an {@link EnumeratorState}. */
public final class EnumeratorStateSerializer implements SimpleVersionedSerializer<EnumeratorState> {
    /**
     * A topic has at most this many partitions here (Kafka's own limits are far lower in practice).
     */
    private static final int MAX_SPLITS = 1 << 20;

    @Override
    public int getVersion() {
        return PartitionSplitSerializer.VERSION;
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
        }
        return bytes.toByteArray();
    }

    @Override
    public EnumeratorState deserialize(int version, byte[] serialized) throws IOException {
        PartitionSplitSerializer.checkVersion(version);
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
            return new EnumeratorState(discovered, pending);
        }
    }
}
