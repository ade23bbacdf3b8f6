package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.sampling.ShareSample;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.junit.jupiter.api.Test;

/** Estimates from hand-built strata: census, sample, and a stratum of which nothing arrived. */
class ApproxResultsTest {
    private static final QuerySpec<Ride, Integer> SPEC =
            new QuerySpec<>(
                    Ride::getGroup,
                    List.of(
                            Aggregate.avg("value", Ride::getValue),
                            Aggregate.sum("value", Ride::getValue),
                            Aggregate.count(),
                            Aggregate.median("value", Ride::getValue)),
                    0.05,
                    Map.of(),
                    0.95);

    @Test
    void aggregatesNamingTheSameValueShareIt() {
        assertEquals(1, SPEC.valueCount());
        assertEquals(0, SPEC.valueIndex(0));
        assertEquals(0, SPEC.valueIndex(1));
        assertEquals(-1, SPEC.valueIndex(2));
        assertEquals(0, SPEC.valueIndex(3));
    }

    /**
     * A stratum of {@code records} records with values 1..records in messages of 4, first {@code
     * arrived} delivered.
     */
    private static WindowShare<Integer> stratum(int records, int arrived) {
        StratumBuffer buf = new StratumBuffer(1, false);
        for (int i = 1; i <= records; i++) {
            buf.add(new double[] {i}, null);
        }
        int messages = (records + 3) / 4;
        WindowShare<Integer> s =
                new WindowShare<>(
                        new StratumInfo<>(0, 60_000, 7, messages, records, 0.5),
                        new ShareSample.Columns(new boolean[] {true}, new boolean[] {true}, false));
        for (int m = 0; m < arrived; m++) {
            s.addMessage(
                    Unpooled.wrappedBuffer(
                            MessageCodec.encode(
                                    buf,
                                    StratumBuffer.start(m, records, messages),
                                    StratumBuffer.start(m + 1, records, messages))));
        }
        return s;
    }

    private static Map<String, WindowEstimate> answers(List<WindowShare<Integer>> strata) {
        List<WindowEstimate> out = new ArrayList<>();
        new ApproxResults<>(SPEC)
                .emit(
                        7,
                        new TimeWindow(0, 60_000),
                        strata,
                        new Collector<>() {
                            @Override
                            public void collect(WindowEstimate e) {
                                out.add(e);
                            }

                            @Override
                            public void close() {}
                        });
        Map<String, WindowEstimate> m = new java.util.HashMap<>();
        out.forEach(e -> m.put(e.aggregate, e));
        return m;
    }

    @Test
    void aCensusIsExact() {
        Map<String, WindowEstimate> a = answers(List.of(stratum(40, 10), stratum(8, 2)));
        assertEquals((820 + 36) / 48.0, a.get("avg(value)").estimate, 1e-12);
        assertEquals(a.get("avg(value)").estimate, a.get("avg(value)").low, 1e-12);
        assertEquals(856, a.get("sum(value)").estimate, 1e-9);
        assertEquals(48, a.get("count").estimate);
        assertEquals(48, a.get("count").sampleRecords);
        assertTrue(a.get("avg(value)").approximate);
    }

    @Test
    void aSampleHasAnIntervalAndCountsStayExact() {
        Map<String, WindowEstimate> a = answers(List.of(stratum(400, 30), stratum(400, 100)));
        WindowEstimate avg = a.get("avg(value)");
        assertTrue(avg.low < avg.estimate && avg.estimate < avg.high, avg.toString());
        assertEquals(800, a.get("count").estimate);
        assertEquals(800, a.get("count").populationRecords);
        assertEquals(520, a.get("count").sampleRecords);
        assertEquals(800 * avg.estimate, a.get("sum(value)").estimate, 1e-6);
    }

    @Test
    void aStratumOfWhichNothingArrivedRemovesTheBound() {
        Map<String, WindowEstimate> a = answers(List.of(stratum(400, 50), stratum(40, 0)));
        for (String agg : List.of("avg(value)", "sum(value)", "median(value)")) {
            WindowEstimate e = a.get(agg);
            assertEquals(Double.NEGATIVE_INFINITY, e.low, agg);
            assertEquals(Double.POSITIVE_INFINITY, e.high, agg);
            assertTrue(Double.isFinite(e.estimate), agg);
        }
        assertEquals(440, a.get("count").estimate);
        Map<String, WindowEstimate> none = answers(List.of(stratum(40, 0)));
        assertTrue(Double.isNaN(none.get("avg(value)").estimate));
        assertEquals(40, none.get("count").estimate);
    }

    /**
     * A permuted stratum of values {@code from .. from+records-1} with key "lo" below {@code from +
     * records/2}, else "hi", in messages of 4, the first {@code arrived} delivered.
     */
    private static WindowShare<Integer> share(int from, int records, int arrived, long seed) {
        StratumBuffer buf = new StratumBuffer(1, true);
        for (int i = 0; i < records; i++) {
            buf.add(new double[] {from + i}, (i < records / 2 ? "lo" : "hi") + from);
        }
        buf.permute(new java.util.SplittableRandom(seed));
        int messages = records / 4;
        WindowShare<Integer> s =
                new WindowShare<>(
                        new StratumInfo<>(0, 60_000, 7, messages, records, 0.1),
                        new ShareSample.Columns(new boolean[] {true}, new boolean[] {true}, true));
        for (int m = 0; m < arrived; m++) {
            s.addMessage(
                    Unpooled.wrappedBuffer(
                            MessageCodec.encode(
                                    buf,
                                    StratumBuffer.start(m, records, messages),
                                    StratumBuffer.start(m + 1, records, messages))));
        }
        return s;
    }

    @Test
    void unequalSharesAreWeightedEachByItsOwnFraction() {
        QuerySpec<Ride, Integer> spec =
                new QuerySpec<>(
                        Ride::getGroup,
                        List.of(
                                Aggregate.median("value", Ride::getValue),
                                Aggregate.topK("key", 2, Ride::getKey)),
                        0.05,
                        Map.of(),
                        0.95);
        // 4,000 values 1..4000 sampled at 10%, 400 values 10001..10400 sent whole: the group's
        // median is 2200 (rank 2200 of 4400); the two samples pooled as one would put it near 4000
        List<WindowEstimate> out = new ArrayList<>();
        new ApproxResults<>(spec)
                .emit(
                        7,
                        new TimeWindow(0, 60_000),
                        List.of(share(1, 4000, 100, 1), share(10_001, 400, 100, 2)),
                        new Collector<>() {
                            @Override
                            public void collect(WindowEstimate e) {
                                out.add(e);
                            }

                            @Override
                            public void close() {}
                        });
        WindowEstimate median = out.get(0);
        assertEquals("median(value)", median.aggregate);
        assertTrue(median.covers(2200), median.toString());
        assertTrue(Math.abs(median.estimate - 2200) < 300, median.toString());
        // top-2: each of the large share's keys has 2,000 records, each of the small one's 200
        assertEquals(3, out.size());
        for (WindowEstimate e : out.subList(1, 3)) {
            assertTrue(e.key.endsWith("1") && !e.key.endsWith("10001"), e.toString());
            assertTrue(e.covers(2000), e.toString());
        }
    }

    @Test
    void nonFiniteValuesGiveWhatDoubleArithmeticGives() {
        StratumBuffer buf = new StratumBuffer(1, false);
        for (double v : new double[] {1, Double.NaN, 3, 4}) {
            buf.add(new double[] {v}, null);
        }
        WindowShare<Integer> s =
                new WindowShare<>(
                        new StratumInfo<>(0, 60_000, 7, 1, 4, 1.0, buf.nonFinite()),
                        new ShareSample.Columns(new boolean[] {true}, new boolean[] {true}, false));
        s.addMessage(Unpooled.wrappedBuffer(MessageCodec.encode(buf, 0, 4)));
        Map<String, WindowEstimate> a = answers(List.of(s));
        assertTrue(Double.isNaN(a.get("avg(value)").estimate));
        assertTrue(Double.isNaN(a.get("sum(value)").low));
        assertEquals(4, a.get("count").estimate);
        assertEquals(3, a.get("median(value)").estimate); // rank 2 of {1, 3, 4, NaN}
        StratumBuffer inf = new StratumBuffer(1, false);
        for (double v : new double[] {1, Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY}) {
            inf.add(new double[] {v}, null);
        }
        WindowShare<Integer> t =
                new WindowShare<>(
                        new StratumInfo<>(0, 60_000, 7, 1, 3, 1.0, inf.nonFinite()),
                        new ShareSample.Columns(new boolean[] {true}, new boolean[] {true}, false));
        t.addMessage(Unpooled.wrappedBuffer(MessageCodec.encode(inf, 0, 3)));
        Map<String, WindowEstimate> b = answers(List.of(t));
        assertEquals(Double.POSITIVE_INFINITY, b.get("sum(value)").estimate);
        assertEquals(Double.POSITIVE_INFINITY, b.get("avg(value)").low);
        assertEquals(Double.POSITIVE_INFINITY, b.get("median(value)").estimate);
    }
}
