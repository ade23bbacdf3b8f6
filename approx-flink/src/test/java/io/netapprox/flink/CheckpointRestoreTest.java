package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Checkpoints and restore mid-stream: a task upstream of the senders fails once after a checkpoint
 * completed, or a TaskManager (with its ATP engine) is killed; Flink restores the job from that
 * checkpoint (senders never snapshot an open epoch, receivers snapshot resolved epochs only), and
 * every (window, group) is answered exactly once by the exactly-once collect sink, with exact
 * counts (nothing counted twice, nothing lost) and estimates within their bound.
 */
class CheckpointRestoreTest {
    static final FlinkCluster FLINK = new FlinkCluster();

    @RegisterExtension static final MiniClusterExtension CLUSTER = FLINK.extension;

    static final AtomicBoolean FAILED = new AtomicBoolean();
    static final AtomicInteger CHECKPOINTS = new AtomicInteger();
    static final AtomicLong PENDING_AT_FAILURE = new AtomicLong();
    static volatile CompletableFuture<Void> triggered = new CompletableFuture<>();

    @Test
    void jobRecoversFromAFailedTaskWithEveryWindowAnsweredOnce() throws Exception {
        FAILED.set(false);
        CHECKPOINTS.set(0);
        triggered = new CompletableFuture<>();
        runAndCheck(
                new FailOnceAfterCheckpoint(30_000 / 4, true, false),
                null,
                "a failed task",
                Map.of());
        assertTrue(FAILED.get(), "the task never failed");
    }

    /**
     * The same with {@code approx.flushInterval}: epochs also end on the senders' processing-time
     * timer between the barriers, and the job still restores with every (window, group) answered
     * once, counts exact, within its bound.
     */
    @Test
    void flushedEpochsRestoreLikeAnyOther() throws Exception {
        FAILED.set(false);
        CHECKPOINTS.set(0);
        triggered = new CompletableFuture<>();
        JobID job =
                runAndCheck(
                        new FailOnceAfterCheckpoint(30_000 / 4, true, false),
                        null,
                        "a failed task, epochs flushed every 20 ms",
                        Map.of("approx.flushInterval", "20 ms"));
        assertTrue(FAILED.get(), "the task never failed");
        assertTrue(
                FLINK.senderCounter(job, "approxFlushEpochs") > 0, "no epoch ended by the flush");
    }

    /**
     * Outboxes are not checkpointed, and need not be: every epoch ended before a barrier is
     * resolved by its receiver before that barrier passes it, so a completed checkpoint covers no
     * unpulled outbox; outboxes alive at a failure hold records after the checkpoint, which the
     * source replays into new epochs. Here epochs end every 500 records, and the task fails only at
     * a moment when outboxes are waiting to be pulled: still every (window, group) is answered once
     * with exact counts and within its bound.
     */
    @Test
    void outboxesPendingAtAFailureAreReplayedNotLost() throws Exception {
        FAILED.set(false);
        CHECKPOINTS.set(0);
        PENDING_AT_FAILURE.set(0);
        triggered = new CompletableFuture<>();
        JobID job =
                runAndCheck(
                        new FailOnceAfterCheckpoint(30_000 / 4, true, true),
                        null,
                        "a failed task with pending outboxes",
                        Map.of("approx.epochMaxRecords", "500"));
        assertTrue(FAILED.get(), "the task never failed");
        assertTrue(PENDING_AT_FAILURE.get() > 0, "no outbox was pending at the failure");
        System.out.printf(
                "[flink-restore] %d bytes of outboxes pending at the failure; %d outboxes of the"
                        + " failed attempt dropped unpulled%n",
                PENDING_AT_FAILURE.get(), FLINK.senderCounter(job, "approxOutboxesDropped"));
    }

    @Test
    void jobRecoversFromALostTaskManager(@InjectMiniCluster MiniCluster cluster) throws Exception {
        FAILED.set(false);
        CHECKPOINTS.set(0);
        triggered = new CompletableFuture<>();
        runAndCheck(
                new FailOnceAfterCheckpoint(30_000 / 4, false, false),
                () -> {
                    // the TaskManager dies with its engine and exchange; a fresh one replaces its
                    // slots
                    cluster.terminateTaskManager(0).get();
                    cluster.startTaskManager();
                },
                "a lost TaskManager",
                Map.of());
    }

    private JobID runAndCheck(
            FailOnceAfterCheckpoint trigger,
            ThrowingRunnable whenTriggered,
            String what,
            Map<String, String> approxConf)
            throws Exception {
        Rides rides = new Rides(21, 60_000, 6, 4);
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        conf.setString("approx.faultDropOutgoing", "0.3");
        conf.setString("restart-strategy.type", "fixed-delay");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "100 ms");
        conf.setString("execution.checkpointing.interval", "200 ms");
        conf.setString("pipeline.auto-watermark-interval", "20 ms");
        approxConf.forEach(conf::setString);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        // 5,000 rides per checkpoint: a map subtask past 7,500 of its 15,000 rides has seen several
        // checkpoints complete, so the failure comes mid-stream on any machine
        DataStream<Ride> input = rides.streamPerCheckpoint(env, 5_000).rebalance().map(trigger);
        DataStream<WindowEstimate> out =
                Approx.of(input)
                        .stratifyBy(Ride::getGroup)
                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                        .errorBound(0.05)
                        .aggregate(Aggregate.avg("value", Ride::getValue), Aggregate.count());
        List<WindowEstimate> result = new ArrayList<>();
        JobID job;
        try (CloseableIterator<WindowEstimate> it = out.collectAsync()) {
            JobClient client = env.executeAsync("checkpoint and restore: " + what);
            job = client.getJobID();
            if (whenTriggered != null) {
                // the collect iterator is read only after the TaskManager is gone; a job that ends
                // without the trigger fails the test instead of leaving it waiting forever
                CompletableFuture.anyOf(triggered, client.getJobExecutionResult()).get();
                assertTrue(
                        triggered.isDone(),
                        "the job ended before a map subtask passed a completed checkpoint");
                whenTriggered.run();
            }
            it.forEachRemaining(result::add);
        }
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
                assertTrue(
                        e.covers(t[1] / t[0]) || e.relativeError(t[1] / t[0]) <= 3 * e.eMax,
                        e.toString());
            }
        }
        int windows = truth.values().stream().mapToInt(Map::size).sum();
        assertEquals(2 * windows, seen.size(), "every (window, group) answered");
        seen.forEach((k, n) -> assertEquals(1, n, "answered once: " + k));
        System.out.printf(
                "[flink-restore] restored after %s: %d answers, avg within e_max %d/%d, %d"
                        + " checkpoints before the failure, %d epoch deadlines%n",
                what,
                result.size(),
                within,
                avgs,
                CHECKPOINTS.get(),
                FLINK.receiverCounter(job, "approxEpochDeadlines"));
        assertTrue(within >= avgs - 2, "avg within e_max " + within + "/" + avgs);
        return job;
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /**
     * On the first record after a completed checkpoint past {@code after} records: throws once
     * ({@code fail}) or completes {@link #triggered} so that the test can kill a TaskManager.
     */
    static final class FailOnceAfterCheckpoint extends RichMapFunction<Ride, Ride>
            implements CheckpointListener {
        private final long after;
        private final boolean fail;
        private final boolean withPendingOutboxes;
        private long seen;
        private boolean checkpointed;

        /**
         * {@code withPendingOutboxes}: only at a record when some TaskManager holds outboxes not
         * yet pulled (the test's TaskManagers share this JVM).
         */
        FailOnceAfterCheckpoint(long after, boolean fail, boolean withPendingOutboxes) {
            this.after = after;
            this.fail = fail;
            this.withPendingOutboxes = withPendingOutboxes;
        }

        @Override
        public Ride map(Ride r) {
            long pending = withPendingOutboxes ? TaskManagerExchange.outboxBytesInJvm() : 1;
            if (++seen > after
                    && checkpointed
                    && pending > 0
                    && FAILED.compareAndSet(false, true)) {
                PENDING_AT_FAILURE.set(pending);
                if (fail) {
                    throw new IllegalStateException("injected failure after a checkpoint");
                }
                triggered.complete(null);
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
