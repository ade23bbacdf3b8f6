package io.netapprox.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.kafka.relay.StreamSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApproxConsumerConfigTest {
    private static ConfigException rejects(String key, String value) {
        Properties p = new Properties();
        p.put(key, value);
        ConfigException e =
                assertThrows(ConfigException.class, () -> ApproxConsumerConfig.parse(p));
        assertTrue(e.getMessage().contains(key), e.getMessage());
        return e;
    }

    @Test
    void unknownKeysAndBadValuesAreRejectedByName() {
        rejects("approx.emx", "0.1");
        rejects("approx.enable", "yes");
        rejects("approx.emax", "0");
        rejects("approx.emax", "1.5");
        rejects("approx.emax", "NaN");
        rejects("approx.group.zone-17.emax", "-0.1");
        rejects("approx.confidence", "1");
        rejects("approx.window.ms", "0");
        rejects("approx.window.grace.ms", "-1");
        rejects("approx.stratum", "value");
        rejects("approx.stratum", "header:");
        rejects("approx.cv", "0");
        rejects("approx.value", "key");
        rejects("approx.value", "header:");
        rejects("approx.seed", "x");
        rejects("approx.relay.port", "70000");
        rejects("approx.relay.address.1", "nohost");
        rejects("approx.relay.fallback", "ignore");
        rejects("approx.relay.pull.wait.ms", "1");
        rejects("approx.headroom", "0.9");
        rejects("approx.headroom", "5");
        ConfigException shortSecret = rejects("approx.auth.secret", "short-secret");
        assertFalse(shortSecret.getMessage().contains("short-secret"), "the secret is not echoed");
        rejects("approx.auth.secret.file", "/nonexistent/secret");
        rejects("approx.relay.delegation", "password");
        ConfigException plane = rejects("approx.data.plane", "udp");
        assertTrue(plane.getMessage().contains("one of atp, tcp, auto"), plane.getMessage());
        rejects("approx.data.plane", "");
        for (String t : new String[] {"-1", "60001", "2s"}) {
            rejects("approx.udp.probe.timeout.ms", t);
        }
        assertTrue(
                rejects("approx.udp.probe.timeout.ms", "60001")
                        .getMessage()
                        .contains("[0, 60000]"));
        // the send policy is the relay's (--tcp-send-policy): a consumer only receives; so are the
        // other serving-side transport options
        rejects("approx.tcp.send.policy", "sampleSend");
        for (String k :
                new String[] {
                    "approx.control.port",
                    "approx.serve.threads",
                    "approx.start.before.accept",
                    "approx.max.pushed.jobs",
                    "approx.max.pushed.messages"
                }) {
            assertTrue(rejects(k, "1").getMessage().contains("relay"), k);
        }
        // the transport options a consumer has, named as Kafka names its configs
        assertTrue(rejects("approx.dscp", "1,2,3").getMessage().contains("8 comma-separated"));
        assertTrue(rejects("approx.line.rate.bps", "10").getMessage().contains("[1000000, "));
        rejects("approx.mode", "FAST");
        rejects("approx.peer.death.timeout.ms", "1");
        rejects("approx.connect.timeout.ms", "2s");
        rejects("approx.receive.window.bytes", "1024");
        rejects("approx.bind.address", "consumer-host");
        rejects("approx.fault.drop.outgoing", "1");
        // another framework's spelling is not a Kafka key
        rejects("approx.lineRateBps", "1000000000");
        // a delegation token is created and accepted over SASL only
        ConfigException plain = rejects("approx.relay.delegation", "token");
        assertTrue(plain.getMessage().contains("security.protocol"), plain.getMessage());
        Properties sasl = new Properties();
        sasl.put("approx.relay.delegation", "token");
        sasl.put("security.protocol", "SASL_SSL");
        assertEquals(
                ApproxConsumerConfig.Delegation.TOKEN,
                ApproxConsumerConfig.parse(sasl).delegation());
    }

    @Test
    void theSecretComesFromTheKeyOrTheFileNotBoth(@TempDir Path dir) throws Exception {
        Path f = Files.writeString(dir.resolve("s"), "0123456789abcdef-secret\n");
        ApproxConsumerConfig fromFile =
                ApproxConsumerConfig.parse(Map.of("approx.auth.secret.file", f.toString()));
        assertArrayEquals(
                "0123456789abcdef-secret".getBytes(StandardCharsets.UTF_8), fromFile.authSecret());
        ApproxConsumerConfig fromKey =
                ApproxConsumerConfig.parse(Map.of("approx.auth.secret", "0123456789abcdef-secret"));
        assertArrayEquals(fromFile.authSecret(), fromKey.authSecret());
        assertNull(ApproxConsumerConfig.parse(Map.of()).authSecret());
        assertThrows(
                ConfigException.class,
                () ->
                        ApproxConsumerConfig.parse(
                                Map.of(
                                        "approx.auth.secret",
                                        "0123456789abcdef-secret",
                                        "approx.auth.secret.file",
                                        f.toString())));
    }

    @Test
    void defaultsAndOverrides() {
        ApproxConsumerConfig c =
                ApproxConsumerConfig.parse(
                        Map.of(
                                "approx.enable", true,
                                "approx.group.zone-17.emax", "0.01",
                                "approx.stratum", "header:zone",
                                "approx.relay.address.3", "relay3:7400",
                                "bootstrap.servers", "x:9092"));
        assertTrue(c.enabled());
        StreamSpec s = c.streamSpec(true);
        assertEquals(0.05, s.emax());
        assertEquals(0.01, s.emaxOf("zone-17"));
        assertEquals(0.95, s.confidence());
        assertEquals(60_000, s.windowMs());
        assertEquals(1.0, s.headroom());
        assertEquals("header:zone", s.stratification().toString());
        assertEquals("value", s.value().toString(), "planned from the record values by default");
        assertEquals(1.5, s.assumedCv());
        assertEquals(
                "header:fare",
                ApproxConsumerConfig.parse(Map.of("approx.value", "header:fare"))
                        .streamSpec(false)
                        .value()
                        .toString());
        assertFalse(
                ApproxConsumerConfig.parse(Map.of("approx.value", "none"))
                        .streamSpec(false)
                        .value()
                        .measures());
        assertEquals("relay3:7400", c.relayAddress(3, "broker3"));
        assertEquals("broker1:7390", c.relayAddress(1, "broker1"));
        assertFalse(c.kafkaProperties().containsKey("approx.enable"));
        assertEquals("x:9092", c.kafkaProperties().get("bootstrap.servers"));
        assertFalse(ApproxConsumerConfig.parse(new Properties()).enabled());
        assertEquals(DataPlaneMode.AUTO, c.transport().dataPlane());
        assertEquals(
                ApproxTransportConfig.DEFAULT_UDP_PROBE_TIMEOUT, c.transport().udpProbeTimeout());
        ApproxConsumerConfig tcp =
                ApproxConsumerConfig.parse(
                        Map.of("approx.data.plane", "TCP", "approx.udp.probe.timeout.ms", 0));
        assertEquals(DataPlaneMode.TCP, tcp.transport().dataPlane());
        assertEquals(Duration.ZERO, tcp.transport().udpProbeTimeout());
        assertEquals(
                Duration.ofSeconds(60),
                ApproxConsumerConfig.parse(Map.of("approx.udp.probe.timeout.ms", "60000"))
                        .transport()
                        .udpProbeTimeout());
    }

    /** The public entry points (what users and Kafka Streams call), flag off and on. */
    @Test
    void theFactoryAndTheStreamsSupplierRejectBadKeysByName() {
        Map<String, Object> base =
                Map.of(
                        "bootstrap.servers", "127.0.0.1:9",
                        "key.deserializer", StringDeserializer.class.getName(),
                        "value.deserializer", StringDeserializer.class.getName());
        for (String enable : new String[] {"false", "true"}) {
            Properties p = new Properties();
            p.putAll(base);
            p.put("approx.enable", enable);
            p.put("approx.emx", "0.05");
            ConfigException e =
                    assertThrows(ConfigException.class, () -> ApproxConsumers.create(p));
            assertTrue(e.getMessage().contains("approx.emx"), e.getMessage());
            p.remove("approx.emx");
            p.put("approx.headroom", "9");
            e = assertThrows(ConfigException.class, () -> ApproxConsumers.create(p));
            assertTrue(e.getMessage().contains("approx.headroom"), e.getMessage());
        }
        Map<String, Object> streams = new HashMap<>(base);
        streams.put("approx.enable", "true");
        streams.put("approx.stratum", "value");
        ApproxClientSupplier supplier = new ApproxClientSupplier();
        ConfigException e =
                assertThrows(ConfigException.class, () -> supplier.getConsumer(streams));
        assertTrue(e.getMessage().contains("approx.stratum"), e.getMessage());
        e = assertThrows(ConfigException.class, () -> supplier.getRestoreConsumer(streams));
        assertTrue(e.getMessage().contains("approx.stratum"), e.getMessage());
    }
}
