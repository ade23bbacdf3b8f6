package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import java.net.InetAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ApproxTransportConfigTest {

    @Test
    void defaults() {
        ApproxTransportConfig c = ApproxTransportConfig.builder().build();
        assertEquals(ApproxTransportConfig.DEFAULT_ATP_IDLE_TIMEOUT, c.atp().idleTimeout());
        assertEquals(c.atp().maxSessions(), c.maxPeers());
        assertEquals(4, c.serveThreads());
        assertEquals(Duration.ofSeconds(30), c.reportTimeout());
        assertTrue(c.serverEnabled());
        assertEquals(ControlConfig.defaults().requestTimeout(), c.control().requestTimeout());
    }

    private static void rejects(String fragment, ApproxTransportConfig.Builder b) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, b::build);
        assertTrue(e.getMessage().contains(fragment), e.getMessage());
    }

    @Test
    void invalidValuesNameTheSetting() throws Exception {
        AtpConfig small = AtpConfig.builder().maxSessions(8).build();
        rejects("maxPeers", ApproxTransportConfig.builder().atp(small).maxPeers(9));
        rejects("maxPeers", ApproxTransportConfig.builder().maxPeers(0));
        rejects("serveThreads", ApproxTransportConfig.builder().serveThreads(0));
        rejects("maxQueuedRequests", ApproxTransportConfig.builder().maxQueuedRequests(-1));
        rejects("reportTimeout", ApproxTransportConfig.builder().reportTimeout(Duration.ZERO));
        rejects("reportTimeout", ApproxTransportConfig.builder().reportTimeout(null));
        rejects(
                "advertisedDataAddress",
                ApproxTransportConfig.builder()
                        .atp(AtpConfig.builder().bindAddress("127.0.0.1").build())
                        .advertisedDataAddress(InetAddress.getByName("10.1.2.3")));
        rejects(
                "different IP families",
                ApproxTransportConfig.builder()
                        .atp(AtpConfig.builder().bindAddress("127.0.0.1").build())
                        .control(
                                ControlConfig.builder()
                                        .bindAddress(InetAddress.getByName("::1"))
                                        .build()));
        // the same with the server disabled is fine (the client does not bind)
        ApproxTransportConfig.builder()
                .atp(AtpConfig.builder().bindAddress("127.0.0.1").build())
                .control(ControlConfig.builder().bindAddress(InetAddress.getByName("::1")).build())
                .serverEnabled(false)
                .build();
        assertEquals(8, ApproxTransportConfig.builder().atp(small).build().maxPeers());
    }
}
