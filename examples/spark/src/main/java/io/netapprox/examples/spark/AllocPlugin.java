package io.netapprox.examples.spark;

import java.io.IOException;
import java.io.Serializable;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.plugin.DriverPlugin;
import org.apache.spark.api.plugin.ExecutorPlugin;
import org.apache.spark.api.plugin.PluginContext;
import org.apache.spark.api.plugin.SparkPlugin;

/**
 * Bytes allocated by each task's thread, a count that does not depend on the CPU's speed (for
 * SparkBench passthrough: {@code spark.plugins=io.netapprox.examples.spark.AllocPlugin}).
 *
 * <p>Spark calls {@link ExecutorPlugin#onTaskStart()} on the task thread in {@code Task.run} right
 * before the task's work ({@code runTask}: deserializing the RDD and function, reading, computing,
 * writing the shuffle output), and {@code onTaskSucceeded} / {@code onTaskFailed} on the same
 * thread in {@code Executor.TaskRunner.run} after the result has been serialized and right before
 * the status update to the driver (Spark 3.5 and 4.1 alike; checked in both jars). The executor
 * side reads the thread's allocated bytes ({@code com.sun.management.ThreadMXBean}) at both points
 * and sends one small message per task to the driver side ({@link PluginContext#send}), which sums
 * them. The plugin's own allocations (its per-thread mark, the message) happen outside the measured
 * window, and are the same number of messages under any shuffle manager (one per task).
 *
 * <p>A message can reach the driver after the scheduler has seen the task end (a different RPC
 * endpoint): callers compare {@link #tasks()} with the number of ended tasks before reading the
 * sums.
 */
public final class AllocPlugin implements SparkPlugin {
    /** One task's allocation, executor to driver. */
    static final class TaskAlloc implements Serializable {
        private static final long serialVersionUID = 1L;
        final long bytes; // -1: no start mark on this thread (onTaskStart not called)
        final boolean failed;
        final boolean sameThread;

        TaskAlloc(long bytes, boolean failed, boolean sameThread) {
            this.bytes = bytes;
            this.failed = failed;
            this.sameThread = sameThread;
        }
    }

    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    // the driver side's sums (one SparkContext per JVM)
    private static long tasks;
    private static long bytes;
    private static long failed;
    private static long unmarked;
    private static long otherThread;

    /** Tasks whose message the driver has received. */
    static synchronized long tasks() {
        return tasks;
    }

    /** Summed allocated bytes of the tasks received. */
    static synchronized long bytes() {
        return bytes;
    }

    /** {@code key=value} consistency counters for a RESULT line. */
    static synchronized String checks() {
        return String.format(
                "alloc_failed_tasks=%d alloc_unmarked_tasks=%d alloc_other_thread_tasks=%d",
                failed, unmarked, otherThread);
    }

    static synchronized void add(TaskAlloc t) {
        tasks++;
        if (t.bytes >= 0) {
            bytes += t.bytes;
        } else {
            unmarked++;
        }
        if (t.failed) {
            failed++;
        }
        if (!t.sameThread) {
            otherThread++;
        }
    }

    /**
     * Sum of the allocated bytes of every live thread of this JVM, by thread id (a thread that ends
     * between two snapshots loses what it allocated since the first).
     */
    static Map<Long, Long> threadBytes() {
        long[] ids = MX.getAllThreadIds();
        long[] b = MX.getThreadAllocatedBytes(ids);
        Map<Long, Long> m = new HashMap<>(ids.length * 2);
        for (int i = 0; i < ids.length; i++) {
            if (b[i] >= 0) {
                m.put(ids[i], b[i]);
            }
        }
        return m;
    }

    /** Bytes allocated between two {@link #threadBytes} snapshots; [0] bytes, [1] threads lost. */
    static long[] delta(Map<Long, Long> before, Map<Long, Long> after) {
        long sum = 0;
        for (Map.Entry<Long, Long> e : after.entrySet()) {
            sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        long lost = 0;
        for (Long id : before.keySet()) {
            if (!after.containsKey(id)) {
                lost++;
            }
        }
        return new long[] {sum, lost};
    }

    @Override
    public DriverPlugin driverPlugin() {
        return new DriverPlugin() {
            @Override
            public Map<String, String> init(SparkContext sc, PluginContext ctx) {
                synchronized (AllocPlugin.class) {
                    tasks = bytes = failed = unmarked = otherThread = 0;
                }
                return java.util.Collections.emptyMap();
            }

            @Override
            public Object receive(Object message) {
                if (message instanceof TaskAlloc) {
                    add((TaskAlloc) message);
                }
                return null;
            }
        };
    }

    @Override
    public ExecutorPlugin executorPlugin() {
        return new Exec();
    }

    private static final class Mark {
        long start = -1;
        long thread = -1;
    }

    private static final class Exec implements ExecutorPlugin {
        private final ThreadLocal<Mark> mark = ThreadLocal.withInitial(Mark::new);
        private PluginContext ctx;

        @Override
        public void init(PluginContext c, Map<String, String> extraConf) {
            ctx = c;
            if (MX.isThreadAllocatedMemorySupported()) {
                MX.setThreadAllocatedMemoryEnabled(true);
            }
        }

        @Override
        public void onTaskStart() {
            Mark m = mark.get(); // created (allocated) before the start is read
            m.thread = Thread.currentThread().getId();
            m.start = MX.getCurrentThreadAllocatedBytes();
        }

        @Override
        public void onTaskSucceeded() {
            end(false);
        }

        @Override
        public void onTaskFailed(TaskFailedReason reason) {
            end(true);
        }

        private void end(boolean failedTask) {
            long now = MX.getCurrentThreadAllocatedBytes(); // first: nothing of ours in the window
            Mark m = mark.get();
            long b = m.start >= 0 ? now - m.start : -1;
            boolean same = m.thread == Thread.currentThread().getId();
            m.start = -1;
            try {
                ctx.send(new TaskAlloc(b, failedTask, same));
            } catch (IOException e) {
                // the driver side will see fewer tasks than ended: SparkBench reports
                // alloc_complete=no
            }
        }
    }
}
