package io.netapprox.spark;

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
 * whose loopback drops every UDP packet (tc), so the two executor JVMs' engines cannot reach each
 * other (Spark's local-cluster). {@code auto} completes on TCP with the WARN naming the reason;
 * {@code atp} fails naming it. Needs root and namespaces (skipped with the reason otherwise).
 */
class UdpBlockedFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        String why = UdpBlockedNamespace.unavailable();
        Assumptions.assumeTrue(why == null, why);
        try (UdpBlockedNamespace ns = UdpBlockedNamespace.open()) {
            Shell.Result r =
                    ns.runTestClass(
                            UdpBlockedCase.class.getName(),
                            Map.of(
                                    "spark.test.home",
                                    System.getProperty("spark.test.home"),
                                    "spark.testing",
                                    "true"),
                            540);
            System.out.println(r.out());
            assertEquals(0, r.rc(), r.out() + r.err());
            assertTrue(r.out().contains("[lab] tests 2 passed 2 failed 0 skipped 0"), r.out());
            // the WARNs are in the executors' logs: UdpBlockedCase counts them
            assertTrue(ns.udpDropped() > 0, "the namespace dropped UDP");
        }
    }
}
