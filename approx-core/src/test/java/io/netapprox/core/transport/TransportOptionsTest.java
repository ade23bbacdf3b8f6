package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpMode;
import io.netapprox.core.transport.TransportOptions.Context;
import io.netapprox.core.transport.TransportOptions.Option;
import io.netapprox.core.transport.TransportOptions.Style;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The one definition of the transport options: keys in each framework's style, every option set to
 * a non-default value reaches the transport configuration, defaults are the configuration's, bad
 * values name the full key, and the docs' tables hold the generated rows.
 */
class TransportOptionsTest {

    /** A non-default value of every option, as each style writes it. */
    private static Map<String, String> everyOption(Style s) {
        boolean flink = s == Style.FLINK;
        Map<String, String> m = new HashMap<>();
        put(m, s, TransportOptions.BIND_ADDRESS, "127.0.0.1");
        put(m, s, TransportOptions.CONTROL_PORT, "7337");
        put(m, s, TransportOptions.DATA_PLANE, "tcp");
        put(m, s, TransportOptions.TCP_SEND_POLICY, "sampleSend");
        put(m, s, TransportOptions.UDP_PROBE_TIMEOUT, flink ? "250 ms" : "250");
        put(m, s, TransportOptions.LINE_RATE_BPS, "1000000000");
        put(m, s, TransportOptions.MODE, "rc_mrdf");
        put(m, s, TransportOptions.DSCP, "10, 12, 14, 18, 20, 22, 26, 28");
        put(m, s, TransportOptions.PEER_DEATH_TIMEOUT, flink ? "2 s" : "2000");
        put(m, s, TransportOptions.CONNECT_TIMEOUT, flink ? "3 s" : "3000");
        put(m, s, TransportOptions.AUTH_SECRET, "0123456789abcdef0123");
        put(m, s, TransportOptions.SERVE_THREADS, "2");
        put(m, s, TransportOptions.START_BEFORE_ACCEPT, "false");
        put(m, s, TransportOptions.MAX_PUSHED_JOBS, "3");
        put(m, s, TransportOptions.MAX_PUSHED_MESSAGES, "1000");
        put(m, s, TransportOptions.RECEIVE_WINDOW, flink ? "1 mb" : "1048576");
        put(m, s, TransportOptions.FAULT_DROP_OUTGOING, "0.3");
        put(m, s, TransportOptions.FAULT_SEED, "9");
        assertEquals(TransportOptions.ALL.size(), m.size(), "a value for every option");
        return m;
    }

    private static void put(Map<String, String> m, Style s, Option o, String v) {
        m.put(s.key(o), v);
    }

    @Test
    void keysFollowEachFrameworksNaming() {
        assertEquals(
                "spark.approx.udpProbeTimeoutMs",
                Style.SPARK.key(TransportOptions.UDP_PROBE_TIMEOUT));
        assertEquals("approx.udpProbeTimeout", Style.FLINK.key(TransportOptions.UDP_PROBE_TIMEOUT));
        assertEquals(
                "approx.udp.probe.timeout.ms", Style.KAFKA.key(TransportOptions.UDP_PROBE_TIMEOUT));
        assertEquals("spark.approx.lineRateBps", Style.SPARK.key(TransportOptions.LINE_RATE_BPS));
        assertEquals("approx.line.rate.bps", Style.KAFKA.key(TransportOptions.LINE_RATE_BPS));
        assertEquals("approx.data.plane", Style.KAFKA.key(TransportOptions.DATA_PLANE));
        assertEquals("approx.auth.secret", Style.KAFKA.key(TransportOptions.AUTH_SECRET));
        assertEquals("approx.dscp", Style.KAFKA.key(TransportOptions.DSCP));
        assertEquals("approx.receiveWindow", Style.FLINK.key(TransportOptions.RECEIVE_WINDOW));
        assertEquals(
                "spark.approx.receiveWindowBytes",
                Style.SPARK.key(TransportOptions.RECEIVE_WINDOW));
        assertEquals(
                "approx.receive.window.bytes", Style.KAFKA.key(TransportOptions.RECEIVE_WINDOW));
        // every key that existed before the one definition, per framework, is still a key
        Set<String> spark = TransportOptions.keys(Style.SPARK);
        for (String k :
                List.of(
                        "bindAddress",
                        "controlPort",
                        "dataPlane",
                        "tcpSendPolicy",
                        "udpProbeTimeoutMs",
                        "lineRateBps",
                        "mode",
                        "dscp",
                        "peerDeathTimeoutMs",
                        "connectTimeoutMs",
                        "authSecret",
                        "serveThreads",
                        "startBeforeAccept",
                        "faultDropOutgoing",
                        "faultSeed")) {
            assertTrue(spark.contains("spark.approx." + k), k);
        }
        Set<String> flink = TransportOptions.keys(Style.FLINK);
        for (String k :
                List.of(
                        "bindAddress",
                        "controlPort",
                        "dataPlane",
                        "tcpSendPolicy",
                        "udpProbeTimeout",
                        "lineRateBps",
                        "mode",
                        "dscp",
                        "authSecret",
                        "peerDeathTimeout",
                        "connectTimeout",
                        "serveThreads",
                        "maxPushedJobs",
                        "maxPushedMessages",
                        "receiveWindow",
                        "faultDropOutgoing",
                        "faultSeed")) {
            assertTrue(flink.contains("approx." + k), k);
        }
        Set<String> kafka = TransportOptions.keys(Style.KAFKA);
        for (String k : List.of("data.plane", "udp.probe.timeout.ms", "auth.secret")) {
            assertTrue(kafka.contains("approx." + k), k);
        }
        assertTrue(TransportOptions.isKey(Style.KAFKA, "approx.line.rate.bps"));
        assertFalse(TransportOptions.isKey(Style.KAFKA, "approx.lineRateBps"));
        assertFalse(TransportOptions.isKey(Style.FLINK, "approx.line.rate.bps"));
        assertFalse(TransportOptions.isKey(Style.SPARK, "spark.approx.confidence"));
    }

    @ParameterizedTest
    @EnumSource(Style.class)
    void defaultsAreTheTransportConfigurationsDefaults(Style s) {
        TransportOptions o = TransportOptions.parse(s, Map.of());
        assertEquals(TransportOptions.defaults(s), o);
        ApproxTransportConfig t = o.toConfig(new Context().defaultHost("127.0.0.1"));
        ApproxTransportConfig d = ApproxTransportConfig.builder().build();
        AtpConfig atp = t.atp();
        AtpConfig defAtp = d.atp();
        assertEquals("127.0.0.1", atp.bindAddress());
        assertEquals(0, atp.bindPort());
        assertEquals(defAtp.lineRateBps(), atp.lineRateBps());
        assertEquals(defAtp.mode(), atp.mode());
        assertArrayEquals(defAtp.dscpByClass(), atp.dscpByClass());
        assertEquals(defAtp.peerDeathTimeout(), atp.peerDeathTimeout());
        assertEquals(defAtp.recvBufferBytes(), atp.recvBufferBytes());
        assertEquals(defAtp.faultDropOutgoing(), atp.faultDropOutgoing());
        assertEquals(defAtp.idleTimeout(), atp.idleTimeout());
        ControlConfig c = t.control();
        ControlConfig defC = d.control();
        assertEquals(0, c.port());
        assertEquals(defC.connectTimeout(), c.connectTimeout());
        assertEquals(defC.requestTimeout(), c.requestTimeout());
        assertFalse(c.authEnabled());
        assertEquals(d.dataPlane(), t.dataPlane());
        assertEquals(d.tcpSendPolicy(), t.tcpSendPolicy());
        assertEquals(d.udpProbeTimeout(), t.udpProbeTimeout());
        assertEquals(d.serveThreads(), t.serveThreads());
        assertEquals(d.startBeforeAccept(), t.startBeforeAccept());
        assertEquals(d.maxPushedJobs(), t.maxPushedJobs());
        assertEquals(d.maxPushedMessages(), t.maxPushedMessages());
        assertEquals(d.reportTimeout(), t.reportTimeout());
        assertTrue(t.serverEnabled());
    }

    @ParameterizedTest
    @EnumSource(Style.class)
    void everyOptionReachesTheTransportConfiguration(Style s) {
        TransportOptions o = TransportOptions.parse(s, everyOption(s));
        for (Option opt : TransportOptions.ALL) {
            assertTrue(o.isSet(opt), opt.name());
            assertFalse(
                    java.util.Objects.deepEquals(opt.defaultValue(), o.value(opt)),
                    opt.name() + " is set to a non-default value");
        }
        ApproxTransportConfig t = o.toConfig(new Context().defaultHost("10.9.9.9"));
        assertEquals("127.0.0.1", t.atp().bindAddress());
        assertEquals("127.0.0.1", t.control().bindAddress().getHostAddress());
        assertEquals(7337, t.control().port());
        assertEquals(DataPlaneMode.TCP, t.dataPlane());
        assertEquals(TcpSendPolicy.SAMPLE_SEND, t.tcpSendPolicy());
        assertEquals(Duration.ofMillis(250), t.udpProbeTimeout());
        assertEquals(1_000_000_000L, t.atp().lineRateBps());
        assertEquals(AtpMode.RC_MRDF, t.atp().mode());
        assertArrayEquals(new byte[] {10, 12, 14, 18, 20, 22, 26, 28}, t.atp().dscpByClass());
        assertEquals(Duration.ofSeconds(2), t.atp().peerDeathTimeout());
        assertEquals(Duration.ofSeconds(3), t.control().connectTimeout());
        assertTrue(t.control().authEnabled());
        assertEquals("0123456789abcdef0123", o.authSecret());
        assertEquals(2, t.serveThreads());
        assertFalse(t.startBeforeAccept());
        assertEquals(3, t.maxPushedJobs());
        assertEquals(1000, t.maxPushedMessages());
        assertEquals(1L << 20, t.atp().recvBufferBytes());
        assertEquals(0.3, t.atp().faultDropOutgoing());
        assertEquals(9, t.atp().faultSeed());
    }

    @Test
    void theContextSuppliesWhatTheFrameworkKnows() {
        byte[] jobSecret = "a-generated-secret-of-the-job".getBytes();
        ApproxTransportConfig t =
                TransportOptions.defaults(Style.FLINK)
                        .toConfig(
                                new Context()
                                        .defaultHost("127.0.0.1")
                                        .requestTimeout(Duration.ofSeconds(40))
                                        .reportTimeout(Duration.ofSeconds(41))
                                        .endpointId("netapprox-test")
                                        .serverEnabled(false)
                                        .defaultSecret(jobSecret));
        assertEquals("127.0.0.1", t.atp().bindAddress());
        assertEquals(Duration.ofSeconds(40), t.control().requestTimeout());
        assertEquals(Duration.ofSeconds(41), t.reportTimeout());
        assertEquals("netapprox-test", t.control().endpointId());
        assertFalse(t.serverEnabled());
        assertTrue(t.control().authEnabled());
        // a configured secret wins over the framework's
        ApproxTransportConfig configured =
                TransportOptions.parse(
                                Style.FLINK, Map.of("approx.authSecret", "0123456789abcdef0123"))
                        .toConfig(new Context().defaultSecret(jobSecret));
        assertTrue(configured.control().authEnabled());
        // without bindAddress or a host: every interface
        assertEquals(
                "0.0.0.0",
                TransportOptions.defaults(Style.KAFKA).toConfig(new Context()).atp().bindAddress());
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class,
                        () ->
                                TransportOptions.defaults(Style.SPARK)
                                        .toConfig(
                                                new Context().defaultHost("no-such-host.invalid")));
        assertTrue(e.getMessage().contains("spark.approx.bindAddress"), e.getMessage());
    }

    @Test
    void eachStyleWritesDurationsAndSizesItsOwnWay() {
        Map<String, Duration> flink =
                Map.of(
                        "2 s", Duration.ofSeconds(2),
                        "500 ms", Duration.ofMillis(500),
                        "750", Duration.ofMillis(750),
                        "1min", Duration.ofMinutes(1),
                        "PT1.5S", Duration.ofMillis(1500),
                        "3 SECONDS", Duration.ofSeconds(3),
                        "0 ms", Duration.ZERO);
        flink.forEach(
                (v, d) ->
                        assertEquals(
                                d,
                                TransportOptions.parse(
                                                Style.FLINK, Map.of("approx.udpProbeTimeout", v))
                                        .udpProbeTimeout(),
                                v));
        assertEquals(
                Duration.ofMillis(1500),
                TransportOptions.parse(
                                Style.SPARK, Map.of("spark.approx.udpProbeTimeoutMs", "1500"))
                        .udpProbeTimeout());
        assertEquals(
                Duration.ofMillis(1500),
                TransportOptions.parse(Style.KAFKA, Map.of("approx.udp.probe.timeout.ms", " 1500 "))
                        .udpProbeTimeout());
        assertEquals(
                64L << 20,
                TransportOptions.parse(Style.FLINK, Map.of("approx.receiveWindow", "64m"))
                        .receiveWindowBytes());
        assertEquals(
                1L << 30,
                TransportOptions.parse(Style.FLINK, Map.of("approx.receiveWindow", "1 GB"))
                        .receiveWindowBytes());
        assertEquals(
                65536,
                TransportOptions.parse(Style.FLINK, Map.of("approx.receiveWindow", "65536"))
                        .receiveWindowBytes());
        assertEquals(
                10_000_000_000L,
                TransportOptions.parse(
                                Style.SPARK, Map.of("spark.approx.lineRateBps", "10_000_000_000"))
                        .lineRateBps());
        // choices in any case
        assertEquals(
                DataPlaneMode.ATP,
                TransportOptions.parse(Style.KAFKA, Map.of("approx.data.plane", "ATP"))
                        .dataPlane());
        assertEquals(
                TcpSendPolicy.EARLY_SEND,
                TransportOptions.parse(
                                Style.SPARK, Map.of("spark.approx.tcpSendPolicy", "earlysend"))
                        .tcpSendPolicy());
        // a key of another style is not this style's
        assertEquals(
                TransportOptions.defaults(Style.KAFKA),
                TransportOptions.parse(Style.KAFKA, Map.of("approx.lineRateBps", "1000000")));
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "SPARK|spark.approx.bindAddress|executor-1|a numeric IPv4 or IPv6 address",
                "FLINK|approx.bindAddress|taskmanager-1|a numeric IPv4 or IPv6 address",
                "KAFKA|approx.bind.address|1.2.3|a numeric IPv4 or IPv6 address",
                "SPARK|spark.approx.controlPort|70000|an integer in [0, 65535]",
                "KAFKA|approx.control.port|x|an integer in [0, 65535]",
                "SPARK|spark.approx.dataPlane|udp|one of atp, tcp, auto",
                "KAFKA|approx.data.plane|udp|one of atp, tcp, auto",
                "FLINK|approx.tcpSendPolicy|lateSend|one of earlySend, sampleSend",
                "SPARK|spark.approx.udpProbeTimeoutMs|60001|an integer in [0, 60000] (milliseconds; 0 = no probe)",
                "SPARK|spark.approx.udpProbeTimeoutMs|2s|an integer in [0, 60000]",
                "KAFKA|approx.udp.probe.timeout.ms|-1|an integer in [0, 60000]",
                "FLINK|approx.udpProbeTimeout|61 s|a duration from 0 (no probe) to 1 min, e.g. 2 s",
                "FLINK|approx.udpProbeTimeout|-1 s|a duration from 0",
                "FLINK|approx.udpProbeTimeout|soon|a duration from 0",
                "FLINK|approx.udpProbeTimeout|1 us|a duration from 0",
                "KAFKA|approx.line.rate.bps|10|an integer in [1000000, 1000000000000]",
                "SPARK|spark.approx.mode|FAST|one of BASE, RC, RC_MRDF",
                "KAFKA|approx.mode|FAST|one of BASE, RC, RC_MRDF",
                "FLINK|approx.dscp|1,2,3|8 comma-separated integers in [0, 63]",
                "KAFKA|approx.dscp|1,2,3,4,5,6,7,64|8 comma-separated integers in [0, 63]",
                "SPARK|spark.approx.dscp|1,2,3,4,5,6,7,x|8 comma-separated integers in [0, 63]",
                "FLINK|approx.peerDeathTimeout|1 ms|a duration from 50 ms to 1 h, e.g. 5 s",
                "SPARK|spark.approx.peerDeathTimeoutMs|49|an integer in [50, 3600000]",
                "FLINK|approx.connectTimeout|2 h|a duration from 50 ms to 1 h",
                "KAFKA|approx.connect.timeout.ms|0|an integer in [50, 3600000]",
                "SPARK|spark.approx.serveThreads|0|an integer in [1, 256]",
                "KAFKA|approx.start.before.accept|maybe|true or false",
                "FLINK|approx.maxPushedJobs|1025|an integer in [0, 1024]",
                "KAFKA|approx.max.pushed.messages|3000000000|an integer in [1, 2147483647]",
                "FLINK|approx.receiveWindow|1 kb|a memory size from 64 kb to 4 gb, e.g. 64 mb",
                "FLINK|approx.receiveWindow|1.5 mb|a memory size from 64 kb",
                "KAFKA|approx.receive.window.bytes|1024|an integer in [65536, 4294967296] (bytes)",
                "SPARK|spark.approx.faultDropOutgoing|1.0|a fraction in [0, 1)",
                "FLINK|approx.faultDropOutgoing|lots|a fraction in [0, 1)",
                "KAFKA|approx.fault.seed|x|an integer in",
            })
    void aBadValueNamesTheFullKeyTheValueAndWhatIsAccepted(
            Style s, String key, String value, String expected) {
        InvalidOptionException e =
                assertThrows(
                        InvalidOptionException.class,
                        () -> TransportOptions.parse(s, Map.of(key, value)));
        assertTrue(
                e.getMessage().startsWith("invalid NetApprox configuration " + key + "=" + value),
                e.getMessage());
        assertTrue(e.getMessage().contains(": expected " + expected), e.getMessage());
        assertEquals(key, e.key());
        assertEquals(value, e.value());
        assertTrue(e.expected().startsWith(expected), e.expected());
    }

    @ParameterizedTest
    @EnumSource(Style.class)
    void aShortSecretIsRefusedWithoutShowingIt(Style s) {
        String key = s.key(TransportOptions.AUTH_SECRET);
        InvalidOptionException e =
                assertThrows(
                        InvalidOptionException.class,
                        () -> TransportOptions.parse(s, Map.of(key, "short-secret")));
        assertTrue(e.getMessage().contains(key + "=(hidden)"), e.getMessage());
        assertTrue(e.getMessage().contains("at least 16 bytes"), e.getMessage());
        assertFalse(e.getMessage().contains("short-secret"), e.getMessage());
        assertFalse(
                TransportOptions.parse(s, Map.of(key, "0123456789abcdef"))
                        .canonical()
                        .contains("0123456789abcdef"),
                "canonical() hides the secret");
    }

    @Test
    void equalOptionsAreEqualAndSurviveSerialization() throws Exception {
        TransportOptions a = TransportOptions.parse(Style.FLINK, everyOption(Style.FLINK));
        TransportOptions b = TransportOptions.parse(Style.FLINK, everyOption(Style.FLINK));
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertEquals(a.canonical(), b.canonical());
        assertNotEquals(a, TransportOptions.defaults(Style.FLINK));
        // the default value written out is equal to the default
        assertEquals(
                TransportOptions.defaults(Style.SPARK),
                TransportOptions.parse(
                        Style.SPARK, Map.of("spark.approx.lineRateBps", "10000000000")));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(a);
        }
        try (ObjectInputStream in =
                new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            assertEquals(a, in.readObject());
        }
        assertNull(TransportOptions.defaults(Style.SPARK).dscp());
    }

    @ParameterizedTest
    @EnumSource(Style.class)
    void everyOptionHasADefaultTextADescriptionAndADistinctKey(Style s) {
        Set<String> keys = TransportOptions.keys(s);
        assertEquals(TransportOptions.ALL.size(), keys.size());
        for (Option o : TransportOptions.ALL) {
            assertFalse(o.description(s).isBlank(), o.name());
            assertFalse(o.description(s).contains("{"), o.name());
            assertFalse(o.defaultText(s).isBlank(), o.name());
            assertTrue(s.key(o).startsWith(s.prefix()), o.name());
        }
        assertEquals(TransportOptions.ALL.size(), TransportOptions.markdownRows(s).size());
    }

    /**
     * The configuration tables list every transport option of their framework, row for row as
     * {@link TransportOptions#markdownRows} writes it (regenerate with {@code java -cp
     * approx-core/target/classes io.netapprox.core.transport.TransportOptions spark|flink|kafka}).
     */
    @ParameterizedTest
    @CsvSource({
        "SPARK, README.md, Spark",
        "SPARK, docs/spark.md, ",
        "FLINK, README.md, Flink",
        "FLINK, docs/flink.md, ",
        "KAFKA, README.md, Kafka",
        "KAFKA, approx-kafka/README.md, "
    })
    void theConfigurationTablesHoldEveryTransportOption(Style s, String doc, String section)
            throws IOException {
        tables(s, doc, section);
    }

    @Test
    void theServingSideOptionsAreThoseAClientHasNoUseFor() {
        assertEquals(
                Set.of(
                        "controlPort",
                        "tcpSendPolicy",
                        "serveThreads",
                        "startBeforeAccept",
                        "maxPushedJobs",
                        "maxPushedMessages"),
                TransportOptions.ALL.stream()
                        .filter(Option::servingSide)
                        .map(Option::name)
                        .collect(Collectors.toSet()));
        assertEquals(
                TransportOptions.ALL.size() - 6,
                TransportOptions.markdownRows(Style.KAFKA, true).size());
    }

    private static void tables(Style s, String doc, String section) throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<String> lines = Files.readAllLines(root.resolve(doc));
        Set<String> present = lines.stream().map(String::strip).collect(Collectors.toSet());
        List<String> missing =
                TransportOptions.markdownRows(s, s == Style.KAFKA).stream()
                        .filter(r -> !present.contains(r))
                        .toList();
        assertTrue(
                missing.isEmpty(),
                doc
                        + (section == null ? "" : " (" + section + " table)")
                        + " lacks or differs in the rows:\n"
                        + String.join("\n", missing));
    }
}
