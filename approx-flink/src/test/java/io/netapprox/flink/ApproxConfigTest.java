package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import io.netapprox.core.transport.TransportOptions;
import java.time.Duration;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every approx.* option is validated when the query is built, and errors name the key. */
class ApproxConfigTest {

    @Test
    void defaults() {
        ApproxConfig c = ApproxConfig.parse(Map.of());
        assertFalse(c.enabled());
        assertEquals(0.05, c.errorBound());
        assertEquals(0.95, c.confidence());
        assertEquals(16, c.recordsPerMessage());
        assertEquals(ApproxConfig.Planning.CONSERVATIVE, c.planning());
        assertEquals(ApproxConfig.Submit.SLACK, c.submit());
        assertEquals(Duration.ofSeconds(1), c.epochDeadline());
        assertEquals(Duration.ofSeconds(30), c.epochTimeout());
        assertEquals(128L << 20, c.sendBufferBytes());
        assertEquals(Duration.ZERO, c.flushInterval());
        assertTrue(c.authSecretGenerated());
        assertEquals(64, c.authSecret().length());
        assertEquals(0.0, c.transport().faultDropOutgoing());
        assertEquals(Duration.ofSeconds(2), c.pushWait());
        assertEquals(16, c.transport().maxPushedJobs());
        assertEquals(65536, c.transport().maxPushedMessages());
        assertEquals(DataPlaneMode.AUTO, c.transport().dataPlane());
        assertEquals(TcpSendPolicy.EARLY_SEND, c.transport().tcpSendPolicy());
        assertEquals(
                ApproxTransportConfig.DEFAULT_UDP_PROBE_TIMEOUT, c.transport().udpProbeTimeout());
    }

    @Test
    void theDataPlaneOptionsReachTheTransportConfig() {
        ApproxConfig c =
                ApproxConfig.parse(
                        Map.of(
                                "approx.dataPlane", "tcp",
                                "approx.tcpSendPolicy", "sampleSend",
                                "approx.udpProbeTimeout", "250 ms"));
        var t = TaskManagerExchange.transportConfig(c, "127.0.0.1", "e");
        assertEquals(DataPlaneMode.TCP, t.dataPlane());
        assertEquals(TcpSendPolicy.SAMPLE_SEND, t.tcpSendPolicy());
        assertEquals(Duration.ofMillis(250), t.udpProbeTimeout());
        var d = TaskManagerExchange.transportConfig(ApproxConfig.parse(Map.of()), "127.0.0.1", "e");
        assertEquals(DataPlaneMode.AUTO, d.dataPlane());
        assertEquals(TcpSendPolicy.EARLY_SEND, d.tcpSendPolicy());
        assertEquals(ApproxTransportConfig.DEFAULT_UDP_PROBE_TIMEOUT, d.udpProbeTimeout());
        // any case; the bounds of the probe: 0 (none) and 60 s
        assertEquals(
                DataPlaneMode.ATP,
                ApproxConfig.parse(Map.of("approx.dataPlane", "ATP")).transport().dataPlane());
        assertEquals(
                Duration.ZERO,
                ApproxConfig.parse(Map.of("approx.udpProbeTimeout", "0 ms"))
                        .transport()
                        .udpProbeTimeout());
        assertEquals(
                Duration.ofSeconds(60),
                ApproxConfig.parse(Map.of("approx.udpProbeTimeout", "60 s"))
                        .transport()
                        .udpProbeTimeout());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "approx.dataPlane|udp|one of atp, tcp, auto",
                "approx.tcpSendPolicy|lateSend|one of earlySend, sampleSend",
                "approx.udpProbeTimeout|61 s|a duration from 0 (no probe) to 1 min",
                "approx.udpProbeTimeout|-1 s|approx.udpProbeTimeout=-1 s",
                "approx.udpProbeTimeout|soon|approx.udpProbeTimeout=soon"
            })
    void badDataPlaneValuesNameTheKeyAndTheAllowedValues(String key, String value, String says) {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> ApproxConfig.parse(Map.of(key, value)));
        assertTrue(e.getMessage().contains(key + "=" + value), e.getMessage());
        assertTrue(e.getMessage().contains(says), e.getMessage());
    }

    @Test
    void thePushBudgetReachesTheTransportConfig() {
        ApproxConfig c =
                ApproxConfig.parse(
                        Map.of("approx.maxPushedJobs", "3", "approx.maxPushedMessages", "1000"));
        var t = TaskManagerExchange.transportConfig(c, "127.0.0.1", "e");
        assertEquals(3, t.maxPushedJobs());
        assertEquals(1000, t.maxPushedMessages());
        var d = TaskManagerExchange.transportConfig(ApproxConfig.parse(Map.of()), "127.0.0.1", "e");
        assertEquals(16, d.maxPushedJobs());
        assertEquals(65536, d.maxPushedMessages());
    }

    @Test
    void pushWaitMayNotExceedTheEpochTimeout() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                ApproxConfig.parse(
                                        Map.of(
                                                "approx.epochTimeout", "1 s",
                                                "approx.pushWait", "2 s")));
        assertTrue(e.getMessage().contains("approx.pushWait"), e.getMessage());
        assertTrue(e.getMessage().contains("approx.epochTimeout"), e.getMessage());
        assertEquals(
                Duration.ofSeconds(1),
                ApproxConfig.parse(Map.of("approx.epochTimeout", "1 s", "approx.pushWait", "1 s"))
                        .pushWait());
        assertEquals(
                Duration.ofMillis(300),
                ApproxConfig.parse(Map.of("approx.epochTimeout", "300 ms")).pushWait(),
                "unset, the 2 s default is capped by a shorter epochTimeout");
    }

    @Test
    void everyOptionHasADescriptionAndTheKnownKeysAreExactlyTheOptions() {
        for (ConfigOption<?> o : ApproxOptions.ALL) {
            assertTrue(o.key().startsWith(ApproxOptions.PREFIX), o.key());
            assertFalse(o.description().toString().isBlank(), o.key());
        }
        Map<String, String> all = new java.util.HashMap<>();
        all.put("approx.enabled", "true");
        all.put("approx.errorBound", "0.1");
        all.put("approx.confidence", "0.9");
        all.put("approx.recordsPerMessage", "8");
        all.put("approx.planning", "balanced");
        all.put("approx.submit", "all");
        all.put("approx.epochTimeout", "5 s");
        all.put("approx.epochDeadline", "400 ms");
        all.put("approx.epochMaxRecords", "1000");
        all.put("approx.flushInterval", "250 ms");
        all.put("approx.sendBuffer", "64 mb");
        all.put("approx.receiveWindow", "1 mb");
        all.put("approx.concurrentPulls", "2");
        all.put("approx.pushTail", "false");
        all.put("approx.pushWait", "500 ms");
        all.put("approx.maxPushedJobs", "4");
        all.put("approx.maxPushedMessages", "4096");
        all.put("approx.bindAddress", "127.0.0.1");
        all.put("approx.controlPort", "7337");
        all.put("approx.dataPlane", "atp");
        all.put("approx.tcpSendPolicy", "sampleSend");
        all.put("approx.udpProbeTimeout", "1 s");
        all.put("approx.lineRateBps", "1000000000");
        all.put("approx.mode", "rc_mrdf");
        all.put("approx.dscp", "46,40,32,24,18,16,10,8");
        all.put("approx.authSecret", "0123456789abcdef0123");
        all.put("approx.peerDeathTimeout", "2 s");
        all.put("approx.connectTimeout", "3 s");
        all.put("approx.serveThreads", "2");
        all.put("approx.faultDropOutgoing", "0.3");
        all.put("approx.faultSeed", "9");
        all.put("approx.startBeforeAccept", "false");
        assertEquals(ApproxOptions.ALL.size(), all.size());
        ApproxConfig c = ApproxConfig.parse(all);
        assertTrue(c.enabled());
        assertEquals(ApproxConfig.Planning.BALANCED, c.planning());
        assertEquals(ApproxConfig.Submit.ALL, c.submit());
        assertEquals(Duration.ofSeconds(5), c.epochTimeout());
        assertEquals(Duration.ofMillis(400), c.epochDeadline());
        assertEquals(Duration.ofMillis(250), c.flushInterval());
        assertEquals(64L << 20, c.sendBufferBytes());
        assertEquals(1L << 20, c.transport().receiveWindowBytes());
        assertEquals(2, c.concurrentPulls());
        assertFalse(c.pushTail());
        assertEquals(Duration.ofMillis(500), c.pushWait());
        assertEquals(4, c.transport().maxPushedJobs());
        assertEquals(4096, c.transport().maxPushedMessages());
        assertEquals("0123456789abcdef0123", c.authSecret());
        assertFalse(c.authSecretGenerated());
        assertEquals(8, c.transport().dscp()[7]);
        assertEquals(DataPlaneMode.ATP, c.transport().dataPlane());
        assertEquals(TcpSendPolicy.SAMPLE_SEND, c.transport().tcpSendPolicy());
        assertEquals(Duration.ofSeconds(1), c.transport().udpProbeTimeout());
        assertFalse(c.transport().startBeforeAccept());
        var t = TaskManagerExchange.transportConfig(c, "127.0.0.1", "e");
        assertEquals(1_000_000_000L, t.atp().lineRateBps());
        assertEquals(io.netapprox.core.engine.AtpMode.RC_MRDF, t.atp().mode());
        assertEquals(Duration.ofSeconds(2), t.atp().peerDeathTimeout());
        assertEquals(Duration.ofSeconds(3), t.control().connectTimeout());
        assertEquals(Duration.ofSeconds(8), t.control().requestTimeout(), "epochTimeout + connect");
        assertEquals(7337, t.control().port());
        assertEquals(2, t.serveThreads());
        assertEquals(0.3, t.atp().faultDropOutgoing());
        assertFalse(t.startBeforeAccept());
    }

    /**
     * The Flink options of the transport keys are generated from approx-core's definition: one per
     * transport option, of the same key, default and description, and every Flink value of theirs
     * is what the definition parses.
     */
    @Test
    void theTransportConfigOptionsAreApproxCoresOptions() {
        assertEquals(TransportOptions.ALL.size(), ApproxOptions.TRANSPORT.size());
        for (int i = 0; i < TransportOptions.ALL.size(); i++) {
            TransportOptions.Option o = TransportOptions.ALL.get(i);
            ConfigOption<?> f = ApproxOptions.TRANSPORT.get(i);
            assertEquals(TransportOptions.Style.FLINK.key(o), f.key());
            assertEquals(1, f.description().getBlocks().size(), f.key());
            assertEquals(
                    o.description(TransportOptions.Style.FLINK),
                    ((org.apache.flink.configuration.description.TextElement)
                                    f.description().getBlocks().get(0))
                            .getFormat(),
                    f.key());
            assertTrue(ApproxOptions.ALL.contains(f), f.key());
            if (o.defaultValue() == null) {
                assertFalse(f.hasDefaultValue(), f.key());
            } else {
                // Flink's default, written as Flink writes it, parses to the definition's default
                Configuration conf = new Configuration();
                @SuppressWarnings("unchecked")
                ConfigOption<Object> typed = (ConfigOption<Object>) f;
                conf.set(typed, f.defaultValue());
                TransportOptions parsed =
                        TransportOptions.parse(TransportOptions.Style.FLINK, conf.toMap());
                assertTrue(parsed.isSet(o), f.key());
                assertEquals(o.defaultValue(), parsed.value(o), f.key());
            }
        }
        // a typed value set through the Flink option reaches the transport
        Configuration conf = new Configuration();
        @SuppressWarnings("unchecked")
        ConfigOption<Duration> probe =
                (ConfigOption<Duration>)
                        ApproxOptions.TRANSPORT.get(
                                TransportOptions.ALL.indexOf(TransportOptions.UDP_PROBE_TIMEOUT));
        conf.set(probe, Duration.ofMillis(750));
        assertEquals(
                Duration.ofMillis(750),
                ApproxConfig.parse(conf, "x".repeat(32)).transport().udpProbeTimeout());
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "approx.enabled|yes",
                "approx.errorBound|0",
                "approx.errorBound|1.5",
                "approx.errorBound|five",
                "approx.confidence|1",
                "approx.recordsPerMessage|0",
                "approx.recordsPerMessage|100000",
                "approx.planning|optimistic",
                "approx.submit|some",
                "approx.epochDeadline|0 ms",
                "approx.epochDeadline|31 s",
                "approx.epochDeadline|soon",
                "approx.epochTimeout|0 ms",
                "approx.epochTimeout|soon",
                "approx.epochMaxRecords|0",
                "approx.flushInterval|1 us",
                "approx.flushInterval|25 h",
                "approx.flushInterval|often",
                "approx.sendBuffer|1 kb",
                "approx.receiveWindow|1 kb",
                "approx.concurrentPulls|0",
                "approx.pushTail|sometimes",
                "approx.pushWait|0 ms",
                "approx.pushWait|1 min",
                "approx.pushWait|later",
                "approx.maxPushedJobs|-1",
                "approx.maxPushedJobs|1025",
                "approx.maxPushedJobs|many",
                "approx.maxPushedMessages|0",
                "approx.maxPushedMessages|3000000000",
                "approx.bindAddress|taskmanager-1",
                "approx.controlPort|70000",
                "approx.dataPlane|udp",
                "approx.tcpSendPolicy|lateSend",
                "approx.udpProbeTimeout|2 min",
                "approx.lineRateBps|10",
                "approx.mode|FAST",
                "approx.dscp|1,2,3",
                "approx.dscp|1,2,3,4,5,6,7,64",
                "approx.authSecret|short",
                "approx.peerDeathTimeout|1 ms",
                "approx.connectTimeout|2 h",
                "approx.serveThreads|0",
                "approx.faultDropOutgoing|1.0",
                "approx.faultSeed|x",
                "approx.startBeforeAccept|soon",
                "approx.receiveWindow|1.5 mb",
                "approx.enable|true"
            })
    void badValueFailsWhenTheQueryIsBuiltNamingTheKey(String key, String value) {
        Configuration conf = new Configuration();
        conf.setString(key, value);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                Approx.of(new Rides(1, 10, 1, 2).stream(env))
                                        .stratifyBy(Ride::getGroup)
                                        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                                        .aggregate(Aggregate.count()));
        assertTrue(e.getMessage().contains(key), e.getMessage());
        if (key.equals("approx.authSecret")) {
            assertFalse(
                    e.getMessage().contains(value),
                    "the secret must not appear: " + e.getMessage());
        }
    }

    @Test
    void queriesOfOneJobShareTheGeneratedSecretAndJobsDoNot() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        Rides rides = new Rides(1, 10, 1, 2);
        String a = Approx.of(rides.stream(env)).config().authSecret();
        String b = Approx.of(rides.stream(env)).config().authSecret();
        assertEquals(a, b);
        StreamExecutionEnvironment other = StreamExecutionEnvironment.getExecutionEnvironment();
        assertNotEquals(a, Approx.of(rides.stream(other)).config().authSecret());
    }

    @Test
    void queryErrorsAreCaughtWhenBuilt() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        var q = Approx.of(new Rides(1, 10, 1, 2).stream(env)).stratifyBy(Ride::getGroup);
        assertThrows(
                IllegalArgumentException.class,
                () -> q.window(EventTimeSessionWindows.withGap(Duration.ofMinutes(1))));
        assertThrows(
                IllegalArgumentException.class,
                () -> q.window(TumblingProcessingTimeWindows.of(Duration.ofMinutes(1))));
        var w = q.window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)));
        assertThrows(IllegalArgumentException.class, () -> w.errorBound(0));
        assertThrows(IllegalArgumentException.class, () -> w.errorBound(1, 1.0));
        assertThrows(IllegalArgumentException.class, () -> w.confidence(1.0));
        assertThrows(IllegalArgumentException.class, w::aggregate);
        assertThrows(
                IllegalArgumentException.class,
                () -> w.aggregate(Aggregate.count(), Aggregate.count()));
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        w.aggregate(
                                Aggregate.topK("a", 3, Ride::getKey),
                                Aggregate.topK("b", 3, Ride::getKey)));
        assertThrows(
                IllegalArgumentException.class, () -> Aggregate.quantile("v", 1.0, Ride::getValue));
        assertThrows(IllegalArgumentException.class, () -> Aggregate.topK("k", 0, Ride::getKey));
    }
}
