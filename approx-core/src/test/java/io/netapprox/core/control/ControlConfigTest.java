package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class ControlConfigTest {

    private static void rejects(String fragment, Executable e) {
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
        assertTrue(
                ex.getMessage().contains(fragment),
                "'" + ex.getMessage() + "' should mention '" + fragment + "'");
    }

    @Test
    void defaultsAreValid() {
        ControlConfig c = ControlConfig.defaults();
        assertEquals(1 << 20, c.maxFrameLength());
        assertFalse(c.authEnabled());
        assertTrue(c.endpointId().startsWith("netapprox-"));
        assertTrue(c.pingInterval().compareTo(c.idleTimeout()) < 0);
    }

    @Test
    void invalidValuesFailWithClearMessages() {
        rejects("port must be in [0, 65535]", () -> ControlConfig.builder().port(70000).build());
        rejects(
                "maxFrameLength must be in [4096, 67108864] bytes, got 100",
                () -> ControlConfig.builder().maxFrameLength(100).build());
        rejects(
                "requestTimeout must be a positive duration",
                () -> ControlConfig.builder().requestTimeout(Duration.ZERO).build());
        rejects(
                "pingInterval",
                () ->
                        ControlConfig.builder()
                                .pingInterval(Duration.ofSeconds(60))
                                .idleTimeout(Duration.ofSeconds(30))
                                .build());
        rejects(
                "eventLoopThreads must be in [1, 256]",
                () -> ControlConfig.builder().eventLoopThreads(0).build());
        rejects(
                "authSecret must be at least 16 bytes",
                () -> ControlConfig.builder().authSecret("short").build());
        rejects("endpointId", () -> ControlConfig.builder().endpointId("x".repeat(300)).build());
        rejects(
                "maxQueuedBytes must be in [1048592 (one frame of maxFrameLength)",
                () -> ControlConfig.builder().maxQueuedBytes(1 << 20).build());
    }

    @Test
    void sendQueueBoundDefaultsToSixteenMiBOrTwoFrames() {
        assertEquals(16L << 20, ControlConfig.defaults().maxQueuedBytes());
        assertEquals(
                2L * ((64 << 20) + 16),
                ControlConfig.builder().maxFrameLength(64 << 20).build().maxQueuedBytes());
        assertEquals(
                2_000_000,
                ControlConfig.builder().maxQueuedBytes(2_000_000).build().maxQueuedBytes());
        // toBuilder keeps "derived" derived: a larger frame limit raises the default bound with it.
        assertEquals(
                2L * ((32 << 20) + 16),
                ControlConfig.defaults().toBuilder()
                        .maxFrameLength(32 << 20)
                        .build()
                        .maxQueuedBytes());
    }

    @Test
    void secretIsNeverPrinted() {
        ControlConfig c = ControlConfig.builder().authSecret("a-very-secret-value-123").build();
        assertTrue(c.authEnabled());
        assertFalse(c.toString().contains("secret-value"));
    }
}
