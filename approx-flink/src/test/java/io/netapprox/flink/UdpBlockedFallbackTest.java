package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.Shell;
import io.netapprox.core.lab.UdpBlockedNamespace;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback with UDP really blocked: {@link UdpBlockedCase} in a JVM inside a network namespace
 * whose loopback drops every UDP packet (tc), so the two TaskManagers' engines cannot reach each
 * other. {@code auto} completes on TCP with the WARN naming the reason; {@code atp} fails naming
 * it. Needs root and namespaces (skipped with the reason otherwise).
 */
class UdpBlockedFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        String why = UdpBlockedNamespace.unavailable();
        Assumptions.assumeTrue(why == null, why);
        try (UdpBlockedNamespace ns = UdpBlockedNamespace.open()) {
            Shell.Result r = ns.runTestClass(UdpBlockedCase.class.getName(), Map.of(), 540);
            System.out.println(r.out());
            assertEquals(0, r.rc(), r.out() + r.err());
            assertTrue(r.out().contains("[lab] tests 2 passed 2 failed 0 skipped 0"), r.out());
            String log = r.out() + r.err();
            long warns =
                    log.lines()
                            .filter(
                                    l ->
                                            l.contains("WARN")
                                                    && l.contains("it uses the TCP data plane"))
                            .count();
            // one per TaskManager engine that asked the other (at most both directions)
            assertTrue(warns >= 1 && warns <= 2, warns + " WARNs:\n" + log);
            assertTrue(ns.udpDropped() > 0, "the namespace dropped UDP");
        }
    }
}
