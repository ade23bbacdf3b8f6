package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The data-plane keys of {@link ApproxConf}: parsed with approx-core's parsers, handed to the
 * executor's transport configuration, bad values refused naming the key and the allowed values.
 */
class ApproxConfTest {
    private static ApproxTransportConfig transport(Map<String, String> conf) {
        return ApproxConf.parse(conf).transportConfig("127.0.0.1");
    }

    @Test
    void dataPlaneDefaultsToAutoWithEarlySendAndTheCoreProbeTimeout() {
        ApproxTransportConfig t = transport(Map.of());
        assertEquals(DataPlaneMode.AUTO, t.dataPlane());
        assertEquals(TcpSendPolicy.EARLY_SEND, t.tcpSendPolicy());
        assertEquals(ApproxTransportConfig.DEFAULT_UDP_PROBE_TIMEOUT, t.udpProbeTimeout());
    }

    @Test
    void dataPlaneKeysReachTheTransportConfiguration() {
        ApproxTransportConfig t =
                transport(
                        Map.of(
                                "spark.approx.dataPlane", "tcp",
                                "spark.approx.tcpSendPolicy", "sampleSend",
                                "spark.approx.udpProbeTimeoutMs", "250"));
        assertEquals(DataPlaneMode.TCP, t.dataPlane());
        assertEquals(TcpSendPolicy.SAMPLE_SEND, t.tcpSendPolicy());
        assertEquals(Duration.ofMillis(250), t.udpProbeTimeout());
        // any case, as the other enum keys
        assertEquals(
                DataPlaneMode.ATP, transport(Map.of("spark.approx.dataPlane", "ATP")).dataPlane());
        assertEquals(
                TcpSendPolicy.EARLY_SEND,
                transport(Map.of("spark.approx.tcpSendPolicy", "earlysend")).tcpSendPolicy());
        // the bounds: 0 (no probe) and 60 s
        assertEquals(
                Duration.ZERO,
                transport(Map.of("spark.approx.udpProbeTimeoutMs", "0")).udpProbeTimeout());
        assertEquals(
                Duration.ofSeconds(60),
                transport(Map.of("spark.approx.udpProbeTimeoutMs", "60000")).udpProbeTimeout());
    }

    @Test
    void badDataPlaneValuesFailNamingTheKeyAndTheAllowedValues() {
        assertBad("spark.approx.dataPlane", "udp", "one of atp, tcp, auto");
        assertBad("spark.approx.dataPlane", "", "one of atp, tcp, auto");
        assertBad("spark.approx.tcpSendPolicy", "lateSend", "one of earlySend, sampleSend");
        assertBad("spark.approx.udpProbeTimeoutMs", "-1", "an integer in [0, 60000]");
        assertBad("spark.approx.udpProbeTimeoutMs", "60001", "an integer in [0, 60000]");
        assertBad("spark.approx.udpProbeTimeoutMs", "2s", "an integer in [0, 60000]");
    }

    @Test
    void everyTransportKeyOfApproxCoreIsASparkKeyAndTheRestAreStillRefused() {
        ApproxTransportConfig t =
                transport(
                        Map.of(
                                "spark.approx.lineRateBps", "1000000000",
                                "spark.approx.dscp", "10,12,14,18,20,22,26,28",
                                "spark.approx.receiveWindowBytes", "1048576",
                                "spark.approx.maxPushedJobs", "3",
                                "spark.approx.fetchTimeoutMs", "20000"));
        assertEquals(1_000_000_000L, t.atp().lineRateBps());
        assertEquals(28, t.atp().dscpByClass()[7]);
        assertEquals(1L << 20, t.atp().recvBufferBytes());
        assertEquals(3, t.maxPushedJobs());
        // Spark's own glue: a pull's requests and report wait as long as the pull may take
        assertEquals(Duration.ofSeconds(20), t.control().requestTimeout());
        assertEquals(Duration.ofSeconds(20), t.reportTimeout());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> ApproxConf.parse(Map.of("spark.approx.lineRate", "1")));
        assertTrue(e.getMessage().contains("[spark.approx.lineRate]"), e.getMessage());
        assertTrue(e.getMessage().contains("lineRateBps"), e.getMessage());
        assertTrue(e.getMessage().contains("confidence"), e.getMessage());
        // another framework's spelling is not a Spark key
        assertThrows(
                IllegalArgumentException.class,
                () -> ApproxConf.parse(Map.of("spark.approx.udpProbeTimeout", "2 s")));
    }

    private static void assertBad(String key, String value, String expected) {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> ApproxConf.parse(Map.of(key, value)));
        assertTrue(e.getMessage().contains(key + "=" + value), e.getMessage());
        assertTrue(e.getMessage().contains("expected " + expected), e.getMessage());
    }
}
