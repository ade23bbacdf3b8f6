package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.GroupEstimator;
import io.netapprox.core.sampling.ShareSample;
import java.util.List;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * The window state of both topologies keeps NaN values and a null top-k key through Flink's
 * serializers (what a checkpoint or a state backend that serializes does to it): the flag-off
 * {@link ExactAccumulator} (a POJO) and the flag-on {@link WindowShare} (Kryo, with its {@link
 * ShareSample}).
 */
class WindowStateSerializerTest {
    @Test
    void nanValuesAndANullKeySurviveFlinksSerializer() throws Exception {
        boolean[] keep = {true};
        ExactAccumulator a = ExactAccumulator.create(1, keep, true);
        a.add(new double[] {Double.NaN}, keep, null);
        a.add(new double[] {2.0}, keep, "");
        a.add(new double[] {Double.POSITIVE_INFINITY}, keep, null);
        TypeSerializer<ExactAccumulator> s =
                TypeInformation.of(ExactAccumulator.class)
                        .createSerializer(new SerializerConfigImpl());
        DataOutputSerializer out = new DataOutputSerializer(64);
        s.serialize(a, out);
        ExactAccumulator b = s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertEquals(3, b.count);
        assertTrue(Double.isNaN(b.sums[0]));
        assertEquals(3, b.valueCounts[0]);
        assertTrue(Double.isNaN(b.values[0][0]));
        assertEquals(2L, b.keyCounts.get(null));
        assertEquals(1L, b.keyCounts.get(""));
    }

    @Test
    @SuppressWarnings({"unchecked", "rawtypes"})
    void aWindowShareKeepsItsNonFiniteCountsAndTheNullKey() throws Exception {
        NonFinite odd = new NonFinite(1);
        odd.add(0, Double.NaN);
        StratumBuffer buf = new StratumBuffer(1, true);
        buf.add(new double[] {Double.NaN}, null);
        buf.add(new double[] {1.0}, "a");
        WindowShare<Integer> sample =
                new WindowShare<>(
                        new StratumInfo<>(0, 60_000, 3, 1, 2, 1.0, odd),
                        new ShareSample.Columns(new boolean[] {true}, new boolean[] {true}, true));
        sample.addMessage(io.netty.buffer.Unpooled.wrappedBuffer(MessageCodec.encode(buf, 0, 2)));
        TypeSerializer<WindowShare> s =
                TypeInformation.of(WindowShare.class).createSerializer(new SerializerConfigImpl());
        DataOutputSerializer out = new DataOutputSerializer(64);
        s.serialize(sample, out);
        WindowShare<Integer> b = s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
        assertEquals(1, b.share.nan(0));
        assertEquals(0, b.share.positiveInfinities(0));
        assertEquals(1, b.share.quantileSample(0).count()); // the NaN is counted, not sampled
        assertEquals(2, b.share.deliveredRecords());
        List<GroupEstimator.KeyEstimate> top =
                new GroupEstimator(List.of(b.share), 0.95, false).topK(5);
        assertEquals(2, top.size()); // "a" and the null key
        assertTrue(top.stream().anyMatch(k -> k.key() == null), top.toString());
    }
}
