package io.netapprox.spark;

import io.netapprox.core.lab.UdpBlockedNamespace;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback with UDP really blocked: {@link TcpFallbackCase} in a JVM inside a network namespace
 * whose loopback drops every UDP packet (tc), so the two executor JVMs' engines cannot reach each
 * other (Spark's local-cluster). {@code auto} completes on TCP with the WARN naming the reason (in
 * the executors' logs, which the case reads); {@code atp} fails naming it. Needs root and
 * namespaces (skipped with the reason otherwise).
 */
class UdpBlockedFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        UdpBlockedNamespace.runCase(
                TcpFallbackCase.class.getName(), TcpFallbackCase.CASE_PROPERTIES, 2, 540);
    }
}
