package io.netapprox.kafka.flink.suite;

import io.netapprox.kafka.flink.ApproxKafkaSource;
import java.util.concurrent.TimeUnit;
import org.apache.flink.connector.testframe.environment.MiniClusterTestEnvironment;
import org.apache.flink.connector.testframe.external.ExternalContextFactory;
import org.apache.flink.connector.testframe.junit.annotations.TestContext;
import org.apache.flink.connector.testframe.junit.annotations.TestEnv;
import org.apache.flink.connector.testframe.junit.annotations.TestExternalSystem;
import org.apache.flink.connector.testframe.junit.annotations.TestSemantics;
import org.apache.flink.connector.testframe.testsuites.SourceTestSuiteBase;
import org.apache.flink.core.execution.CheckpointingMode;
import org.junit.jupiter.api.Timeout;

/**
 * Flink's own connector test suite ({@code SourceTestSuiteBase} of flink-connector-test-utils, the
 * build's Flink version) against {@link ApproxKafkaSource}, once with {@code approx.enable=false}
 * and once with it on (through the relay, every cell planned whole: {@link
 * ApproxKafkaSourceContext}): single and multiple splits, an idle reader, savepoint restarts at the
 * same, a higher and a lower parallelism, a TaskManager failure, and {@code numRecordsIn} ({@code
 * testSourceMetrics}) - all of them, exactly once. A Flink MiniCluster (the suite's {@link
 * MiniClusterTestEnvironment}: 1 TaskManager x 6 slots), the shared KRaft broker and a relay.
 *
 * <p>The suite waits without bound in places ({@code testSourceMetrics} polls until {@code
 * numRecordsIn} equals the records written: it hung while the reader counted nothing); every case
 * therefore has a liveness bound after which it fails, generous for a loaded 2-core machine.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ApproxKafkaSourceSuiteTest extends SourceTestSuiteBase<String> {
    @TestEnv MiniClusterTestEnvironment flink = new MiniClusterTestEnvironment();

    @TestExternalSystem KafkaWithRelay kafka = new KafkaWithRelay();

    @TestContext
    ExternalContextFactory<ApproxKafkaSourceContext> exact =
            name -> new ApproxKafkaSourceContext(kafka, false);

    @TestContext
    ExternalContextFactory<ApproxKafkaSourceContext> approximate =
            name -> new ApproxKafkaSourceContext(kafka, true);

    @TestSemantics CheckpointingMode[] semantics = {CheckpointingMode.EXACTLY_ONCE};
}
