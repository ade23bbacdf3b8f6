package io.netapprox.kafka.flink;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** The Flink clusters of these tests: real MiniClusters, several TaskManagers. */
final class FlinkClusters {
    private FlinkClusters() {}

    /** 2 TaskManagers x 2 slots: the approximate edge crosses TaskManagers. */
    static MiniClusterExtension twoByTwo() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(2)
                        .setNumberSlotsPerTaskManager(2)
                        .build());
    }
}
