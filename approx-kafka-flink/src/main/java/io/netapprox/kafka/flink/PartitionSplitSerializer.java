package io.netapprox.kafka.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/** Checkpoint format of a {@link PartitionSplit}: topic (UTF), partition, next and stop offset. */
public final class PartitionSplitSerializer implements SimpleVersionedSerializer<PartitionSplit> {
    static final int VERSION = 1;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(PartitionSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            write(split, out);
        }
        return bytes.toByteArray();
    }

    @Override
    public PartitionSplit deserialize(int version, byte[] serialized) throws IOException {
        checkVersion(version);
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
            return read(in);
        }
    }

    static void write(PartitionSplit split, DataOutputStream out) throws IOException {
        out.writeUTF(split.topic());
        out.writeInt(split.partition());
        out.writeLong(split.nextOffset());
        out.writeLong(split.stopOffset());
    }

    static PartitionSplit read(DataInputStream in) throws IOException {
        String topic = in.readUTF();
        int partition = in.readInt();
        long next = in.readLong();
        long stop = in.readLong();
        try {
            return new PartitionSplit(topic, partition, next, stop);
        } catch (IllegalArgumentException e) {
            throw new IOException("corrupt split in checkpoint: " + e.getMessage(), e);
        }
    }

    static void checkVersion(int version) throws IOException {
        if (version != VERSION) {
            throw new IOException(
                    "unknown PartitionSplit serializer version "
                            + version
                            + " (knows "
                            + VERSION
                            + ")");
        }
    }
}
