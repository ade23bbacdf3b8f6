package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.lab.FallbackLab;
import io.netapprox.core.lab.UdpBlockedNamespace;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback where the ATP engine cannot load (a platform without a build, a libc that does not
 * match): {@link TcpFallbackCase} in a JVM of its own with {@code
 * -Dio.netapprox.native.disable=true} (broker, relay and consumer in it). {@code auto} covers every
 * record over TCP with a WARN naming the reason and the consumer's {@code native-fallbacks} metric;
 * {@code atp} fails naming it. Needs no root.
 */
class NativeUnavailableFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        String log =
                FallbackLab.runWithoutNative(TcpFallbackCase.class.getName(), Map.of(), 2, 540);
        long warns = UdpBlockedNamespace.warnings(log, "ATP engine cannot run on this platform");
        assertTrue(warns >= 1, warns + " WARNs:\n" + log);
    }
}
