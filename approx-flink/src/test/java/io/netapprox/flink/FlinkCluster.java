package io.netapprox.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;

/**
 * A test cluster: a real Flink MiniCluster with 2 TaskManagers x 2 slots (so ATP runs between two
 * TaskManagers' engines over loopback) and an in-memory metric reporter. One per test class.
 */
final class FlinkCluster {
    static final int TASK_MANAGERS = 2;
    static final int SLOTS = 2;
    static final int PARALLELISM = TASK_MANAGERS * SLOTS;

    final InMemoryReporter metrics = InMemoryReporter.createWithRetainedMetrics();
    final MiniClusterExtension extension;

    FlinkCluster() {
        // The compat modules (approx-flink-compat-*) run these tests on another Flink release.
        String expected = System.getProperty("netapprox.expectedFlinkVersion");
        if (expected != null && !expected.equals(EnvironmentInformation.getVersion())) {
            throw new IllegalStateException(
                    "expected Flink "
                            + expected
                            + " on the test class path, found "
                            + EnvironmentInformation.getVersion());
        }
        Configuration conf = new Configuration();
        metrics.addToConfiguration(conf);
        extension =
                new MiniClusterExtension(
                        new MiniClusterResourceConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumberTaskManagers(TASK_MANAGERS)
                                .setNumberSlotsPerTaskManager(SLOTS)
                                .build());
    }

    /** One finished job: its id (for the metrics) and every result it produced. */
    record Run(JobID job, List<WindowEstimate> results) {}

    /** Runs {@code out}'s job on {@code env} to the end and collects every result. */
    static Run collect(StreamExecutionEnvironment env, DataStream<WindowEstimate> out, String name)
            throws Exception {
        List<WindowEstimate> results = new ArrayList<>();
        try (CloseableIterator<WindowEstimate> it = out.collectAsync()) {
            JobID job = env.executeAsync(name).getJobID();
            it.forEachRemaining(results::add);
            return new Run(job, results);
        }
    }

    /** Sum of a NetApprox receiver counter over the job's subtasks and attempts. */
    long receiverCounter(JobID job, String name) {
        return counter(job, "NetApprox receiver", name);
    }

    /** Sum of a NetApprox sender counter over the job's subtasks and attempts. */
    long senderCounter(JobID job, String name) {
        return counter(job, "NetApprox sender", name);
    }

    /**
     * Largest value of a numeric gauge of a NetApprox operator ("sender", "receiver") over the
     * job's subtasks and attempts.
     */
    double gaugeMax(JobID job, String operator, String name) {
        double max = Double.NEGATIVE_INFINITY;
        for (OperatorMetricGroup g :
                metrics.findOperatorMetricGroups(job, "NetApprox " + operator)) {
            if (metrics.getMetricsByGroup(g).get(name) instanceof Gauge<?> gauge
                    && gauge.getValue() instanceof Number v) {
                max = Math.max(max, v.doubleValue());
            }
        }
        return max;
    }

    private long counter(JobID job, String operator, String name) {
        long sum = 0;
        for (OperatorMetricGroup g : metrics.findOperatorMetricGroups(job, operator)) {
            Map<String, Metric> m = metrics.getMetricsByGroup(g);
            if (m.get(name) instanceof Counter c) {
                sum += c.getCount();
            }
        }
        return sum;
    }
}
