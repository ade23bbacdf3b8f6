package io.netapprox.examples.spark;

import java.util.HashSet;
import java.util.Set;
import org.apache.spark.Success$;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;

/**
 * Sums of the task metrics Spark reports for the jobs of a window of an application (the same
 * numbers as the event log's {@code SparkListenerTaskEnd} events), for load-independent comparisons
 * of two shuffle managers: the executors' task CPU (executor CPU + deserialize CPU, what the task
 * threads computed, whatever else ran on the machine) and the shuffle's tasks, records and bytes,
 * which must be the same when two applications did the same work.
 */
final class TaskTotals extends SparkListener {
    private long tasks;
    private long failedTasks;
    private long cpuNs;
    private long deserializeCpuNs;
    private long runMs;
    private long gcMs;
    private long shuffleWriteBytes;
    private long shuffleWriteRecords;
    private long shuffleReadBytes;
    private long shuffleReadRecords;
    private long jobs;
    private long allTasks; // since the application started (not reset)
    private final Set<Integer> stages = new HashSet<>();

    /** Registers a new instance with the application's listener bus. */
    static TaskTotals register(SparkSession spark) {
        TaskTotals t = new TaskTotals();
        spark.sparkContext().addSparkListener(t);
        return t;
    }

    /** Waits until the listener bus has delivered every event posted so far (bounded: 60 s). */
    static void drain(SparkSession spark) {
        try {
            spark.sparkContext().listenerBus().waitUntilEmpty(60_000);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new IllegalStateException("listener bus not drained in 60 s", e);
        }
    }

    @Override
    public synchronized void onTaskEnd(SparkListenerTaskEnd e) {
        tasks++;
        allTasks++;
        if (e.reason() != Success$.MODULE$) {
            failedTasks++;
        }
        TaskMetrics m = e.taskMetrics();
        if (m == null) {
            return;
        }
        cpuNs += m.executorCpuTime();
        deserializeCpuNs += m.executorDeserializeCpuTime();
        runMs += m.executorRunTime();
        gcMs += m.jvmGCTime();
        shuffleWriteBytes += m.shuffleWriteMetrics().bytesWritten();
        shuffleWriteRecords += m.shuffleWriteMetrics().recordsWritten();
        shuffleReadBytes += m.shuffleReadMetrics().totalBytesRead();
        shuffleReadRecords += m.shuffleReadMetrics().recordsRead();
    }

    @Override
    public synchronized void onStageCompleted(SparkListenerStageCompleted e) {
        stages.add(e.stageInfo().stageId());
    }

    @Override
    public synchronized void onJobEnd(SparkListenerJobEnd e) {
        jobs++;
    }

    /** Task CPU (executor + deserialize) so far, ms. */
    synchronized double cpuMs() {
        return (cpuNs + deserializeCpuNs) / 1e6;
    }

    /** Tasks ended since the application started (not cleared by {@link #reset}). */
    synchronized long allTasks() {
        return allTasks;
    }

    /** Clears the sums (call after {@link #drain}). */
    synchronized void reset() {
        tasks = failedTasks = cpuNs = deserializeCpuNs = runMs = gcMs = 0;
        shuffleWriteBytes = shuffleWriteRecords = shuffleReadBytes = shuffleReadRecords = jobs = 0;
        stages.clear();
    }

    /** {@code key=value} fields for a RESULT line (call after {@link #drain}). */
    synchronized String fields() {
        return String.format(
                "task_cpu_ms=%.1f task_exec_cpu_ms=%.1f task_deser_cpu_ms=%.1f task_run_ms=%d"
                        + " task_gc_ms=%d tasks=%d failed_tasks=%d stages=%d jobs=%d"
                        + " shuffle_write_bytes=%d shuffle_write_records=%d shuffle_read_bytes=%d"
                        + " shuffle_read_records=%d",
                (cpuNs + deserializeCpuNs) / 1e6,
                cpuNs / 1e6,
                deserializeCpuNs / 1e6,
                runMs,
                gcMs,
                tasks,
                failedTasks,
                stages.size(),
                jobs,
                shuffleWriteBytes,
                shuffleWriteRecords,
                shuffleReadBytes,
                shuffleReadRecords);
    }
}
