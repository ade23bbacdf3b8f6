package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpMode;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.ExchangeRegistry.Lease;
import io.netapprox.kafka.relay.RelayClient;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * A consumer's transport options (approx-core's TransportOptions in Kafka's naming) reach the
 * transport its relay connections run on: the JVM's shared client transport, taken as {@code
 * RelayClient} takes it. TCP data plane, so no native library is needed.
 */
class ConsumerTransportOptionsTest {
    private static Properties props(String dscp) {
        Properties p = new Properties();
        p.put("approx.enable", "true");
        p.put("approx.data.plane", "tcp");
        p.put("approx.dscp", dscp);
        p.put("approx.line.rate.bps", "2000000000");
        p.put("approx.mode", "rc");
        p.put("approx.peer.death.timeout.ms", "1500");
        p.put("approx.connect.timeout.ms", "2500");
        p.put("approx.receive.window.bytes", String.valueOf(8L << 20));
        p.put("approx.auth.secret", "0123456789abcdef-secret");
        return p;
    }

    private static Lease<ApproxTransport> lease(ApproxConsumerConfig c) {
        return RelayClient.sharedTransport(
                c.authSecret(), Duration.ofMillis(c.pullWaitMs() + 30_000), c.transport());
    }

    @Test
    void dscpLineRateAndModeReachTheConsumersTransport() {
        ApproxConsumerConfig c = ApproxConsumerConfig.parse(props("8,10,12,14,16,18,20,22"));
        try (Lease<ApproxTransport> l = lease(c)) {
            ApproxTransportConfig t = l.get().config();
            assertArrayEquals(new byte[] {8, 10, 12, 14, 16, 18, 20, 22}, t.atp().dscpByClass());
            assertEquals(2_000_000_000L, t.atp().lineRateBps());
            assertEquals(AtpMode.RC, t.atp().mode());
            assertEquals(Duration.ofMillis(1500), t.atp().peerDeathTimeout());
            assertEquals(8L << 20, t.atp().recvBufferBytes());
            assertEquals(Duration.ofMillis(2500), t.control().connectTimeout());
            assertEquals(DataPlaneMode.TCP, t.dataPlane());
            assertTrue(t.control().authEnabled());
            assertFalse(t.serverEnabled(), "a consumer only requests");
            assertEquals("0.0.0.0", t.atp().bindAddress());
            assertEquals(Duration.ofMillis(5000 + 30_000), t.control().requestTimeout());
        }
    }

    @Test
    void consumersOfEqualOptionsShareATransportAndOthersDoNot() {
        ApproxConsumerConfig a = ApproxConsumerConfig.parse(props("8,10,12,14,16,18,20,22"));
        ApproxConsumerConfig same = ApproxConsumerConfig.parse(props("8,10,12,14,16,18,20,22"));
        ApproxConsumerConfig other = ApproxConsumerConfig.parse(props("46,40,32,24,18,16,10,8"));
        try (Lease<ApproxTransport> x = lease(a);
                Lease<ApproxTransport> y = lease(same);
                Lease<ApproxTransport> z = lease(other)) {
            assertSame(x.get(), y.get());
            assertNotSame(x.get(), z.get());
            assertEquals(46, z.get().config().atp().dscpByClass()[0]);
        }
    }
}
