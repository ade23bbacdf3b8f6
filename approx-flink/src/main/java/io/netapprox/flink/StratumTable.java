package io.netapprox.flink;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;

/**
 * The strata of a manifest as bytes: per stratum {@code window start i64, end i64, group (the key
 * type's Flink serializer), N messages i32, M records i64, MSR f64, non-finite u8}, and when that
 * byte is 1, per value column the counts of its NaN, +infinity and -infinity values among the M
 * records ({@code 3 x i64}, see {@link NonFinite}). Index i is the ATP group id of stratum i in the
 * epoch's job.
 */
final class StratumTable {
    private StratumTable() {}

    static <K> byte[] encode(List<StratumInfo<K>> strata, TypeSerializer<K> keySerializer)
            throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 * strata.size());
        DataOutputViewStreamWrapper out = new DataOutputViewStreamWrapper(bytes);
        for (StratumInfo<K> s : strata) {
            out.writeLong(s.windowStart());
            out.writeLong(s.windowEnd());
            keySerializer.serialize(s.group(), out);
            out.writeInt(s.messages());
            out.writeLong(s.records());
            out.writeDouble(s.msr());
            if (s.nonFinite().isEmpty()) {
                out.writeByte(0);
            } else {
                out.writeByte(1);
                for (long c : s.nonFinite().counts()) {
                    out.writeLong(c);
                }
            }
        }
        out.flush();
        return bytes.toByteArray();
    }

    /**
     * @param width value columns of the query (how many counts a non-finite entry has)
     */
    static <K> List<StratumInfo<K>> decode(
            byte[] bytes, int count, int width, TypeSerializer<K> keySerializer)
            throws IOException {
        if (count < 0 || count > bytes.length) {
            throw new IOException("bad stratum count " + count);
        }
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        List<StratumInfo<K>> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long start = in.readLong();
            long end = in.readLong();
            K group = keySerializer.deserialize(in);
            int messages = in.readInt();
            long records = in.readLong();
            double msr = in.readDouble();
            if (messages < 1 || records < messages || !(msr > 0 && msr <= 1) || end <= start) {
                throw new IOException("bad stratum " + i + " in a manifest");
            }
            NonFinite nonFinite = NonFinite.NONE;
            int flag = in.readUnsignedByte();
            if (flag == 1) {
                long[] counts = new long[3 * width];
                for (int v = 0; v < width; v++) {
                    long column = 0;
                    for (int c = 0; c < 3; c++) {
                        counts[3 * v + c] = in.readLong();
                        if (counts[3 * v + c] < 0) {
                            throw new IOException("bad non-finite count in stratum " + i);
                        }
                        column += counts[3 * v + c];
                    }
                    if (column > records) {
                        throw new IOException(
                                "stratum " + i + " claims more non-finite values than records");
                    }
                }
                nonFinite = NonFinite.of(counts);
            } else if (flag != 0) {
                throw new IOException("bad non-finite flag " + flag + " in stratum " + i);
            }
            out.add(new StratumInfo<>(start, end, group, messages, records, msr, nonFinite));
        }
        if (in.available() != 0) {
            throw new IOException(in.available() + " trailing bytes in a manifest's stratum table");
        }
        return out;
    }
}
