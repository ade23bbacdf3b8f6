package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bound with {@code approx.flushInterval}: senders end an epoch every 50 ms while windows are
 * open, so each (window, group) is split into several strata per sender (shipped and pulled before
 * the window closes), each sampled and weighted on its own. Over 30 seeded jobs (2 TaskManagers x 2
 * slots, 30% outgoing loss, exactly the planned sample), the sampled (window, group) averages are
 * within e_max and covered by their intervals at >= 0.93 each, sums agree, counts and populations
 * are exact, no group ends below target, and the flush really split the windows (more epochs than
 * windows, flush-ended epochs counted).
 */
class FlushStatisticalTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final int RUNS = 30;
    static final int WINDOWS = 5;
    static final double E_MAX = 0.05;

    @Test
    void windowsShippedInFlushedEpochsStayWithinTheirBound() throws Exception {
        int checks = 0;
        int within = 0;
        int covered = 0;
        long sampled = 0;
        long population = 0;
        long flushEpochs = 0;
        long epochs = 0;
        for (int run = 1; run <= RUNS; run++) {
            Rides rides = new Rides(9000 + run, 120_000, WINDOWS, 6);
            Configuration conf = new Configuration();
            conf.setString("approx.enabled", "true");
            conf.setString("approx.flushInterval", "50 ms");
            conf.setString("approx.faultDropOutgoing", "0.3");
            conf.setString("approx.faultSeed", String.valueOf(run));
            conf.setString("approx.submit", "target");
            conf.setString("pipeline.auto-watermark-interval", "20 ms");
            StreamExecutionEnvironment env =
                    StreamExecutionEnvironment.getExecutionEnvironment(conf);
            env.setParallelism(FlinkCluster.PARALLELISM);
            // paced so that the stream lasts about 1 s: each window spans several flush periods
            DataStream<WindowEstimate> out =
                    Approx.of(rides.streamPerSecond(env, 120_000).rebalance())
                            .stratifyBy(Ride::getGroup)
                            .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                            .errorBound(E_MAX)
                            .confidence(0.95)
                            .aggregate(
                                    Aggregate.avg("value", Ride::getValue),
                                    Aggregate.sum("value", Ride::getValue),
                                    Aggregate.count());
            FlinkCluster.Run done = FlinkCluster.collect(env, out, "flush run " + run);
            List<WindowEstimate> result = done.results();
            JobID job = done.job();
            Map<Long, Map<Integer, double[]>> truth = rides.truth();
            Map<String, WindowEstimate> avgs = new java.util.HashMap<>();
            for (WindowEstimate e : result) {
                if (e.aggregate.startsWith("avg")) {
                    avgs.put(e.windowStart + "/" + e.group, e);
                }
            }
            int answers = 0;
            for (WindowEstimate e : result) {
                double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
                assertEquals((long) t[0], e.populationRecords, e.toString());
                if (e.aggregate.equals("count")) {
                    assertEquals(t[0], e.estimate, e.toString());
                    answers++;
                    sampled += e.sampleRecords;
                    population += e.populationRecords;
                    continue;
                }
                boolean avg = e.aggregate.startsWith("avg");
                double exact = avg ? t[1] / t[0] : t[1];
                if (e.sampleRecords == e.populationRecords) {
                    assertEquals(exact, e.estimate, 1e-9 * Math.abs(exact), e.toString());
                    continue;
                }
                if (!avg) {
                    WindowEstimate a = avgs.get(e.windowStart + "/" + e.group);
                    assertEquals(a.covers(t[1] / t[0]), e.covers(exact), e.toString());
                    continue;
                }
                checks++;
                if (e.relativeError(exact) <= E_MAX) {
                    within++;
                }
                if (e.covers(exact)) {
                    covered++;
                }
            }
            assertEquals(truth.values().stream().mapToInt(Map::size).sum(), answers, "run " + run);
            assertEquals(
                    0,
                    FLINK.receiverCounter(job, "approxGroupsBelowTarget"),
                    "groups below target, run " + run);
            flushEpochs += FLINK.senderCounter(job, "approxFlushEpochs");
            epochs += FLINK.senderCounter(job, "approxEpochs");
        }
        double withinRate = (double) within / checks;
        double coverage = (double) covered / checks;
        System.out.printf(
                "[flink-flush] %d runs: %d sampled (window, group) averages, within e_max %.3f, CI"
                        + " coverage %.3f; %d epochs (%d ended by the flush timer); %.1f%% of records"
                        + " sampled%n",
                RUNS,
                checks,
                withinRate,
                coverage,
                epochs,
                flushEpochs,
                100.0 * sampled / population);
        // without the flush each sender ends about one epoch per window
        long perWindow = (long) RUNS * FlinkCluster.PARALLELISM * WINDOWS;
        assertTrue(flushEpochs > perWindow, "flush epochs " + flushEpochs + " <= " + perWindow);
        assertTrue(checks >= 300, "too few sampled (window, group)s to test: " + checks);
        assertTrue(withinRate >= 0.93, "within e_max " + withinRate);
        assertTrue(coverage >= 0.93, "coverage " + coverage);
    }
}
