package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpMode;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The relay's transport options (approx-core's TransportOptions, Kafka naming) reach the transport
 * it serves on, beside its own settings. TCP data plane: no native library, no broker needed to
 * start.
 */
class RelayTransportOptionsTest {
    private static RelayConfig.Builder relay() {
        return RelayConfig.builder("127.0.0.1:9")
                .listen("127.0.0.1:0")
                .authorization(RelayConfig.Authorization.NONE)
                .dataPlane(DataPlaneMode.TCP)
                .serveThreads(6);
    }

    @Test
    void theOptionsReachTheRelaysTransport() {
        TransportOptions o =
                TransportOptions.parse(
                        Style.KAFKA,
                        Map.of(
                                "approx.dscp", "8,10,12,14,16,18,20,22",
                                "approx.line.rate.bps", "2000000000",
                                "approx.mode", "base",
                                "approx.receive.window.bytes", String.valueOf(4L << 20),
                                "approx.start.before.accept", "false"));
        try (KafkaRelay r = KafkaRelay.start(relay().transport(o).build())) {
            ApproxTransportConfig t = r.transportConfig();
            assertArrayEquals(new byte[] {8, 10, 12, 14, 16, 18, 20, 22}, t.atp().dscpByClass());
            assertEquals(2_000_000_000L, t.atp().lineRateBps());
            assertEquals(AtpMode.BASE, t.atp().mode());
            assertEquals(4L << 20, t.atp().recvBufferBytes());
            assertFalse(t.startBeforeAccept());
            // the relay's own settings
            assertEquals(DataPlaneMode.TCP, t.dataPlane());
            assertEquals(6, t.serveThreads());
            assertEquals("127.0.0.1", t.atp().bindAddress());
            assertEquals("netapprox-kafka-relay--1", t.control().endpointId());
            assertFalse(t.control().authEnabled());
        }
        // defaults: what the relay ran with before the options
        try (KafkaRelay r = KafkaRelay.start(relay().secret(new byte[16]).build())) {
            ApproxTransportConfig t = r.transportConfig();
            ApproxTransportConfig d = ApproxTransportConfig.builder().build();
            assertArrayEquals(d.atp().dscpByClass(), t.atp().dscpByClass());
            assertEquals(d.atp().lineRateBps(), t.atp().lineRateBps());
            assertTrue(t.startBeforeAccept());
            assertTrue(t.control().authEnabled());
            assertEquals(4096, t.maxQueuedRequests());
        }
    }

    @Test
    void optionsOwnedByTheRelaysSettingsOrTheConsumerAreRefused() {
        IllegalArgumentException own =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                relay().transport(
                                                TransportOptions.parse(
                                                        Style.KAFKA,
                                                        Map.of("approx.serve.threads", "2")))
                                        .build());
        assertTrue(own.getMessage().contains("--serve-threads"), own.getMessage());
        IllegalArgumentException consumer =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                relay().transport(
                                                TransportOptions.parse(
                                                        Style.KAFKA,
                                                        Map.of("approx.connect.timeout.ms", "500")))
                                        .build());
        assertTrue(consumer.getMessage().contains("consumer"), consumer.getMessage());
    }
}
