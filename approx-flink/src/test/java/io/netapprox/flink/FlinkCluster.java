package io.netapprox.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/**
 * The test cluster: a real Flink MiniCluster with 2 TaskManagers x 2 slots (so ATP runs between
 * two TaskManagers' engines over loopback) and an in-memory metric reporter.
 */
final class FlinkCluster {
  static final int TASK_MANAGERS = 2;
  static final int SLOTS = 2;
  static final int PARALLELISM = TASK_MANAGERS * SLOTS;

  private FlinkCluster() {}

  static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

  static MiniClusterExtension extension() {
    Configuration conf = new Configuration();
    METRICS.addToConfiguration(conf);
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setConfiguration(conf)
            .setNumberTaskManagers(TASK_MANAGERS)
            .setNumberSlotsPerTaskManager(SLOTS)
            .build());
  }
}
