package io.netapprox.kafka.flink.suite;

import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import org.apache.flink.connector.testframe.TestResource;

/**
 * The suite's external system: the shared in-process KRaft broker of approx-kafka's test kit and a
 * real relay beside it (loopback ATP), as the module's other tests use them.
 */
final class KafkaWithRelay implements TestResource {
    private KafkaRelay relay;

    @Override
    public void startUp() throws Exception {
        KafkaBroker.shared();
        relay = TestRelays.start();
    }

    @Override
    public void tearDown() throws Exception {
        if (relay != null) {
            relay.close();
            relay = null;
        }
    }

    KafkaBroker broker() throws Exception {
        return KafkaBroker.shared();
    }

    KafkaRelay relay() {
        if (relay == null) {
            throw new IllegalStateException("the relay is not started");
        }
        return relay;
    }
}
