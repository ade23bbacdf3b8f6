package io.netapprox.spark;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.sql.SparkSession;

/**
 * Spark's own task metrics, summed over the tasks that ended: shuffle records and bytes written,
 * bytes spilled, and the largest task's peak execution memory. {@link #snapshot} after {@link
 * #settle} gives what one query did (the difference of two snapshots).
 */
final class TaskMetricsTally extends SparkListener {
    private final SparkSession spark;
    private final AtomicLong recordsWritten = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();
    private final AtomicLong bytesSpilled = new AtomicLong();
    private final AtomicLong peakTaskMemory = new AtomicLong();

    private TaskMetricsTally(SparkSession spark) {
        this.spark = spark;
    }

    /** A tally of every task of {@code spark} from now on. */
    static TaskMetricsTally on(SparkSession spark) {
        TaskMetricsTally t = new TaskMetricsTally(spark);
        spark.sparkContext().addSparkListener(t);
        return t;
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd e) {
        if (e.taskMetrics() == null) {
            return;
        }
        recordsWritten.addAndGet(e.taskMetrics().shuffleWriteMetrics().recordsWritten());
        bytesWritten.addAndGet(e.taskMetrics().shuffleWriteMetrics().bytesWritten());
        bytesSpilled.addAndGet(e.taskMetrics().diskBytesSpilled());
        peakTaskMemory.accumulateAndGet(e.taskMetrics().peakExecutionMemory(), Math::max);
    }

    /** Waits until the listener has seen every event posted so far. */
    TaskMetricsTally settle() {
        try {
            spark.sparkContext().listenerBus().waitUntilEmpty();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("Spark's listener bus did not drain", e);
        }
        return this;
    }

    /** The sums so far. */
    Snapshot snapshot() {
        return new Snapshot(
                recordsWritten.get(), bytesWritten.get(), bytesSpilled.get(), peakTaskMemory.get());
    }

    /** Sums at one moment; {@link #minus} of an earlier one gives what happened in between. */
    record Snapshot(
            long recordsWritten, long bytesWritten, long bytesSpilled, long peakTaskMemory) {
        /** The sums since {@code before} (the peak stays the largest so far). */
        Snapshot minus(Snapshot before) {
            return new Snapshot(
                    recordsWritten - before.recordsWritten,
                    bytesWritten - before.bytesWritten,
                    bytesSpilled - before.bytesSpilled,
                    peakTaskMemory);
        }
    }
}
