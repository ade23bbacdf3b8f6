package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.UdpBlockedNamespace;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback with UDP really blocked: {@link TcpFallbackCase} in a JVM inside a network namespace
 * whose loopback drops every UDP packet (tc), so the two TaskManagers' engines cannot reach each
 * other. {@code auto} completes on TCP with the WARN naming the reason; {@code atp} fails naming
 * it. Needs root and namespaces (skipped with the reason otherwise).
 */
class UdpBlockedFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        String log = UdpBlockedNamespace.runCase(TcpFallbackCase.class.getName(), Map.of(), 2, 540);
        long warns = UdpBlockedNamespace.warnings(log, "it uses the TCP data plane");
        // one per TaskManager engine that asked the other (at most both directions)
        assertTrue(warns >= 1 && warns <= 2, warns + " WARNs:\n" + log);
    }
}
