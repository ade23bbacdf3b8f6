package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netapprox.core.lab.UdpBlockedNamespace;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback with UDP really blocked: {@link TcpFallbackCase} in a JVM inside a network namespace
 * whose loopback drops every UDP packet (tc), so the approximate consumer cannot reach the relay's
 * engine (one JVM: broker, relay, consumer). {@code auto} completes on TCP with the WARN naming the
 * reason and the consumer's metric; {@code atp} fails naming it. Needs root and namespaces (skipped
 * with the reason otherwise).
 */
class UdpBlockedFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        String log = UdpBlockedNamespace.runCase(TcpFallbackCase.class.getName(), Map.of(), 2, 540);
        // the consumer's transport warns once
        assertEquals(1, UdpBlockedNamespace.warnings(log, "it uses the TCP data plane"), log);
    }
}
