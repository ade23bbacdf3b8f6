package io.netapprox.kafka.testkit;

import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayConfig;
import java.nio.charset.StandardCharsets;
import java.util.function.UnaryOperator;

/**
 * Relays for the tests: real {@link KafkaRelay}s beside the shared broker, on loopback with
 * ephemeral ports, authenticating consumers with {@link #SECRET}.
 */
public final class TestRelays {
    public static final String SECRET = "kafka-relay-test-secret-0123456789";

    private TestRelays() {}

    public static KafkaRelay start() throws Exception {
        return start(b -> b);
    }

    public static KafkaRelay start(UnaryOperator<RelayConfig.Builder> tune) throws Exception {
        return start(KafkaBroker.shared(), tune);
    }

    /** A relay beside {@code broker} (e.g. {@link KafkaBroker#secured()}). */
    public static KafkaRelay start(KafkaBroker broker, UnaryOperator<RelayConfig.Builder> tune)
            throws Exception {
        RelayConfig.Builder b =
                RelayConfig.builder(broker.bootstrapServers())
                        .listen("127.0.0.1:0")
                        .dataPort(0)
                        .serveThreads(16)
                        .readThreads(2) // the tests' streams are read by two log readers
                        // the shared broker has no ACLs; RelayAuthorizationTest reads as the
                        // consumers on KafkaBroker.secured()
                        .authorization(RelayConfig.Authorization.NONE)
                        .secret(SECRET.getBytes(StandardCharsets.UTF_8));
        return KafkaRelay.start(tune.apply(b).build());
    }
}
