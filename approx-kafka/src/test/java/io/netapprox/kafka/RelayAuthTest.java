package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.TransportException;
import io.netapprox.kafka.relay.KafkaRelay;
import io.netapprox.kafka.relay.RelayException;
import io.netapprox.kafka.testkit.KafkaBroker;
import io.netapprox.kafka.testkit.TestRelays;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

/**
 * A relay with a shared secret serves only consumers that prove it (the control plane's HMAC
 * handshake): a consumer without the secret or with another one gets a clear error and no stream,
 * and so does any other client of the relay's port.
 */
class RelayAuthTest {
    @Test
    void consumersWithoutTheSecretOrWithAnotherOneAreRefusedAndOpenNoStream() throws Exception {
        String topic = KafkaBroker.unique("auth");
        KafkaBroker.shared().createTopic(topic, 1);
        Records.produce(topic, 1, 1, List.of("a"), 200, 6);
        TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaRelay relay = TestRelays.start()) {
            for (String secret : new String[] {null, "another-secret-0123456789"}) {
                Properties p = Records.approxProps(KafkaBroker.unique("g"), relay.address());
                if (secret == null) {
                    p.remove("approx.auth.secret");
                } else {
                    p.put("approx.auth.secret", secret);
                }
                try (Consumer<String, String> c = ApproxConsumers.create(p)) {
                    c.assign(List.of(tp));
                    RelayException e = Records.pollUntilRelayException(c, null);
                    assertEquals(RelayException.Reason.UNAVAILABLE, e.reason());
                    assertTrue(e.getMessage().contains("AUTH_FAILED"), e.getMessage());
                    assertEquals(0, c.position(tp), "nothing covered");
                }
            }
            assertEquals(0, relay.metrics().sessionsOpened(), "no stream was opened");
            assertEquals(0, relay.metrics().pulls());

            // any client of the port, not only a consumer: no session without the proof
            try (ApproxTransport stranger =
                    ApproxTransport.start(
                            ApproxTransportConfig.builder()
                                    .atp(
                                            ApproxTransportConfig.defaultAtp()
                                                    .bindAddress("127.0.0.1")
                                                    .build())
                                    .control(
                                            ControlConfig.builder()
                                                    .connectTimeout(Duration.ofSeconds(5))
                                                    .build())
                                    .serverEnabled(false)
                                    .build())) {
                String[] hp = relay.address().split(":");
                ExecutionException e =
                        assertThrows(
                                ExecutionException.class,
                                () ->
                                        stranger.connect(
                                                        new InetSocketAddress(
                                                                hp[0], Integer.parseInt(hp[1])))
                                                .get(10, TimeUnit.SECONDS));
                TransportException te = assertInstanceOf(TransportException.class, e.getCause());
                assertEquals(TransportException.Reason.CONNECT_FAILED, te.reason());
                assertEquals(
                        ErrorCode.AUTH_FAILED,
                        assertInstanceOf(ControlException.class, te.getCause()).code());
            }
            assertEquals(0, relay.sessionCount());

            // the right secret works on the same relay
            Properties ok = Records.approxProps(KafkaBroker.unique("g"), relay.address());
            try (Consumer<String, String> c = ApproxConsumers.create(ok)) {
                c.assign(List.of(tp));
                Records.Polled got = Records.pollToEnd(c, List.of(tp), 200, new Records.Polled());
                assertEquals(200, c.position(tp));
                assertEquals(200, got.countedRecords(tp, 200));
            }
            assertEquals(1, relay.metrics().sessionsOpened());
        }
    }
}
