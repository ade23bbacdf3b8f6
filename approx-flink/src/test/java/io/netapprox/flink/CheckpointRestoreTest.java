package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Checkpoints and restore mid-stream: a task upstream of the senders fails once after a checkpoint
 * completed; Flink restores the job from that checkpoint (senders never snapshot an open epoch,
 * receivers snapshot resolved epochs only), and every (window, group) is answered exactly once by
 * the exactly-once collect sink, with exact counts (nothing counted twice, nothing lost) and
 * estimates within their bound.
 */
class CheckpointRestoreTest {
  static final FlinkCluster FLINK = new FlinkCluster();

  @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

  static final AtomicBoolean FAILED = new AtomicBoolean();
  static final AtomicInteger CHECKPOINTS = new AtomicInteger();

  @Test
  void jobRecoversFromAFailedTaskWithEveryWindowAnsweredOnce() throws Exception {
    Rides rides = new Rides(21, 60_000, 6, 4);
    Configuration conf = new Configuration();
    conf.setString("approx.enabled", "true");
    conf.setString("approx.faultDropOutgoing", "0.3");
    conf.setString("restart-strategy.type", "fixed-delay");
    conf.setString("restart-strategy.fixed-delay.attempts", "3");
    conf.setString("restart-strategy.fixed-delay.delay", "100 ms");
    conf.setString("execution.checkpointing.interval", "200 ms");
    conf.setString("pipeline.auto-watermark-interval", "20 ms");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(FlinkCluster.PARALLELISM);
    FAILED.set(false);
    CHECKPOINTS.set(0);
    DataStream<Ride> input =
        rides.stream(env, 20_000).rebalance().map(new FailOnceAfterCheckpoint(30_000 / 4));
    DataStream<WindowEstimate> out =
        Approx.of(input)
            .stratifyBy(Ride::getGroup)
            .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
            .errorBound(0.05)
            .aggregate(Aggregate.avg("value", Ride::getValue), Aggregate.count());
    List<WindowEstimate> result = new ArrayList<>();
    JobID job;
    try (CloseableIterator<WindowEstimate> it = out.collectAsync()) {
      JobClient client = env.executeAsync("checkpoint and restore");
      job = client.getJobID();
      it.forEachRemaining(result::add);
    }
    assertTrue(FAILED.get(), "the task never failed");
    Map<Long, Map<Integer, double[]>> truth = rides.truth();
    Map<String, Integer> seen = new HashMap<>();
    int avgs = 0;
    int within = 0;
    for (WindowEstimate e : result) {
      seen.merge(e.windowStart + "/" + e.group + "/" + e.aggregate, 1, Integer::sum);
      double[] t = truth.get(e.windowStart).get(Integer.parseInt(e.group));
      assertEquals((long) t[0], e.populationRecords, "nothing counted twice or lost: " + e);
      if (e.aggregate.equals("count")) {
        assertEquals(t[0], e.estimate, e.toString());
      } else {
        avgs++;
        within += e.relativeError(t[1] / t[0]) <= e.eMax ? 1 : 0;
        assertTrue(e.covers(t[1] / t[0]) || e.relativeError(t[1] / t[0]) <= 3 * e.eMax, e.toString());
      }
    }
    int windows = truth.values().stream().mapToInt(Map::size).sum();
    assertEquals(2 * windows, seen.size(), "every (window, group) answered");
    seen.forEach((k, n) -> assertEquals(1, n, "answered once: " + k));
    System.out.printf(
        "[flink-restore] restored after a failure: %d answers, avg within e_max %d/%d, %d"
            + " checkpoints before the failure, %d epoch deadlines%n",
        result.size(),
        within,
        avgs,
        CHECKPOINTS.get(),
        FLINK.receiverCounter(job, "approxEpochDeadlines"));
    assertTrue(within >= avgs - 2, "avg within e_max " + within + "/" + avgs);
  }

  /** Throws once, on the first record after a completed checkpoint past {@code after} records. */
  static final class FailOnceAfterCheckpoint extends RichMapFunction<Ride, Ride>
      implements CheckpointListener {
    private final long after;
    private long seen;
    private boolean checkpointed;

    FailOnceAfterCheckpoint(long after) {
      this.after = after;
    }

    @Override
    public Ride map(Ride r) {
      if (++seen > after && checkpointed && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure after a checkpoint");
      }
      return r;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      checkpointed = true;
      if (!FAILED.get()) {
        CHECKPOINTS.incrementAndGet();
      }
    }
  }
}
