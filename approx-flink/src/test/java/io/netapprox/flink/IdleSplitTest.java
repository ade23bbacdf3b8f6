package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A source split that goes idle ({@code WatermarkStrategy.withIdleness}) while it still holds
 * records of an open window: its subtask emits 500 records of window 0 and then nothing until the
 * other three have emitted windows 0 to 2 (window 0 paced over 1.5 s, so the quiet split is
 * declared idle while the others are still in window 0) and finished. With the idle split left out
 * of the watermark (Flink's valve ignores an idle channel), the others close window 0; plain Flink
 * has the idle split's records in the window by then (they left the source before its IDLE status),
 * and so must the approximate topology: every count equals the truth, flag off and on, and so do
 * the sums of the windows sent whole.
 *
 * <p>Before: the sender forwarded IDLE while still holding the split's 500 records, which it sent
 * only at the end of the input, after window 0 had fired: window 0 counted 1,500, reported exact.
 */
class IdleSplitTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int PER_WINDOW = 500;
    static final int IDLE = 3;

    /** Subtask s's script: the idle split's, or an active one's. */
    static List<ScriptedSource.Step<Ride>> script(String run, int subtask) {
        List<ScriptedSource.Step<Ride>> steps = new ArrayList<>();
        int windows = subtask == IDLE ? 1 : 3;
        for (int w = 0; w < windows; w++) {
            for (int k = 0; k < PER_WINDOW; k++) {
                steps.add(new ScriptedSource.Emit<>(ride(subtask, w, k)));
                if (subtask != IDLE && k % 5 == 4) {
                    steps.add(new ScriptedSource.Pause<>(2)); // a window lasts >= 0.2 s
                }
            }
            if (w == 0 && subtask != IDLE) {
                steps.add(new ScriptedSource.Await<>(run + "/idle"));
            }
        }
        if (subtask == IDLE) {
            for (int s = 0; s < 4; s++) {
                if (s != IDLE) {
                    steps.add(new ScriptedSource.Await<>(run + "/done-" + s));
                }
            }
        } else {
            steps.add(new ScriptedSource.Open<>(run + "/done-" + subtask));
        }
        return steps;
    }

    static Ride ride(int subtask, int w, int k) {
        long ts = w * Rides.MINUTE + k * (Rides.MINUTE / PER_WINDOW);
        return new Ride(ts, k % 2, 1 + subtask + k % 7, "s" + subtask);
    }

    /** Per (window start, group): records, sum. */
    static Map<String, double[]> truth() {
        Map<String, double[]> t = new TreeMap<>();
        for (int s = 0; s < 4; s++) {
            for (int w = 0; w < (s == IDLE ? 1 : 3); w++) {
                for (int k = 0; k < PER_WINDOW; k++) {
                    Ride r = ride(s, w, k);
                    double[] c =
                            t.computeIfAbsent(w * Rides.MINUTE + "/" + r.group, x -> new double[2]);
                    c[0]++;
                    c[1] += r.value;
                }
            }
        }
        return t;
    }

    private static Map<String, double[]> run(boolean approx) throws Exception {
        String run = "idle-" + approx + "-" + System.nanoTime();
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", String.valueOf(approx));
        conf.setString("pipeline.auto-watermark-interval", "20 ms");
        StreamExecutionEnvironment env = StatisticalRuns.environment(conf);
        ScriptedSource.Script<Ride> script = s -> script(run, s);
        DataStream<Ride> rides =
                env.fromSource(
                        new ScriptedSource<>(script),
                        new SignalIdle(
                                WatermarkStrategy.<Ride>forMonotonousTimestamps()
                                        .withTimestampAssigner((r, t) -> r.ts)
                                        .withIdleness(Duration.ofMillis(500)),
                                "s" + IDLE,
                                run + "/idle"),
                        "rides with an idle split",
                        TypeInformation.of(Ride.class));
        DataStream<WindowEstimate> out =
                Approx.of(rides)
                        .stratifyBy(Ride::getGroup)
                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                        .aggregate(Aggregate.count(), Aggregate.sum("value", Ride::getValue));
        Map<String, double[]> answers = new TreeMap<>();
        for (WindowEstimate e : FlinkCluster.collect(env, out, run).results()) {
            double[] a =
                    answers.computeIfAbsent(
                            e.windowStart + "/" + e.group, x -> new double[] {-1, -1, -1});
            if (e.aggregate.equals("count")) {
                a[0] = e.estimate;
            } else {
                a[1] = e.estimate;
                a[2] = e.sampleRecords == e.populationRecords ? 1 : 0;
            }
        }
        return answers;
    }

    @Test
    void anIdleSplitsRecordsAreInTheWindowItsIdlenessLetsClose() throws Exception {
        Map<String, double[]> truth = truth();
        assertEquals(4 * PER_WINDOW, truth.get("0/0")[0] + truth.get("0/1")[0]); // window 0
        for (boolean approx : new boolean[] {false, true}) {
            long started = System.nanoTime();
            Map<String, double[]> answers = run(approx);
            System.out.printf(
                    "[flink-idle] flag %s: %d ms%n",
                    approx ? "on" : "off", (System.nanoTime() - started) / 1_000_000);
            assertEquals(truth.keySet(), answers.keySet(), "flag " + approx);
            for (Map.Entry<String, double[]> t : truth.entrySet()) {
                double[] a = answers.get(t.getKey());
                String what = "flag " + (approx ? "on" : "off") + ", window/group " + t.getKey();
                assertEquals(t.getValue()[0], a[0], "count, " + what);
                if (a[2] == 1) {
                    assertEquals(t.getValue()[1], a[1], 1e-9 * t.getValue()[1], "sum, " + what);
                }
            }
        }
    }

    /**
     * Flink's watermark strategy, unchanged, that also opens a gate once the generator of the
     * subtask whose records carry {@code key} has marked its output idle (after the idle status
     * went downstream).
     */
    static final class SignalIdle implements WatermarkStrategy<Ride> {
        private static final long serialVersionUID = 1L;
        private final WatermarkStrategy<Ride> inner;
        private final String key;
        private final String gate;

        SignalIdle(WatermarkStrategy<Ride> inner, String key, String gate) {
            this.inner = inner;
            this.key = key;
            this.gate = gate;
        }

        @Override
        public TimestampAssigner<Ride> createTimestampAssigner(
                TimestampAssignerSupplier.Context context) {
            return inner.createTimestampAssigner(context);
        }

        @Override
        public WatermarkGenerator<Ride> createWatermarkGenerator(
                WatermarkGeneratorSupplier.Context context) {
            WatermarkGenerator<Ride> g = inner.createWatermarkGenerator(context);
            return new WatermarkGenerator<>() {
                private boolean watched;

                @Override
                public void onEvent(Ride r, long timestamp, WatermarkOutput out) {
                    watched |= key.equals(r.key);
                    g.onEvent(r, timestamp, out);
                }

                @Override
                public void onPeriodicEmit(WatermarkOutput out) {
                    g.onPeriodicEmit(
                            new WatermarkOutput() {
                                @Override
                                public void emitWatermark(Watermark w) {
                                    out.emitWatermark(w);
                                }

                                @Override
                                public void markIdle() {
                                    out.markIdle();
                                    if (watched) {
                                        ScriptedSource.gate(gate).complete(null);
                                    }
                                }

                                @Override
                                public void markActive() {
                                    out.markActive();
                                }
                            });
                }
            };
        }
    }
}
