package io.netapprox.spark;

import io.netapprox.core.lab.FallbackLab;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The fallback where the ATP engine cannot load (a platform without a build, a libc that does not
 * match): {@link TcpFallbackCase} in a JVM of its own with {@code
 * -Dio.netapprox.native.disable=true}, passed on to both executor JVMs of its local-cluster. {@code
 * auto} pulls every block over TCP and meets every bound, with the executors' WARN naming the
 * reason (the case reads their logs); {@code atp} fails the query naming it. Needs no root.
 */
class NativeUnavailableFallbackTest {
    @Test
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void autoRunsOnTcpAndAtpFailsNamingTheCause() throws Exception {
        FallbackLab.runWithoutNative(
                TcpFallbackCase.class.getName(), TcpFallbackCase.CASE_PROPERTIES, 2, 540);
    }
}
