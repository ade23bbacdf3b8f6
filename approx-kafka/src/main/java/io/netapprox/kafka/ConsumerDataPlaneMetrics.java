package io.netapprox.kafka;

import io.netapprox.core.transport.DataPlaneMetrics;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;

/**
 * The approximate consumer's own metrics, beside its shadow consumer's in {@code metrics()}: the
 * data planes of the transport its relay streams use (group {@value #GROUP}, tag {@code
 * client-id}). The transport is shared by the JVM's approximate consumers with the same transport
 * options, so the counts are that transport's. 0 before the first relay stream opened.
 */
final class ConsumerDataPlaneMetrics {
    static final String GROUP = "netapprox-consumer-metrics";

    private final Map<MetricName, Metric> metrics;

    ConsumerDataPlaneMetrics(String clientId, Supplier<DataPlaneMetrics> planes) {
        Map<String, String> tags = Map.of("client-id", clientId);
        Map<MetricName, Metric> m = new LinkedHashMap<>();
        gauge(
                m,
                new MetricName(
                        "udp-probe-fallbacks",
                        GROUP,
                        "relays that did not answer the UDP probe and serve this consumer over TCP"
                                + " (approx.data.plane=auto)",
                        tags),
                planes,
                DataPlaneMetrics::udpProbeFallbacks);
        gauge(
                m,
                new MetricName(
                        "native-fallbacks",
                        GROUP,
                        "1 when the native library could not load here and every relay is read over"
                                + " TCP",
                        tags),
                planes,
                DataPlaneMetrics::nativeFallbacks);
        gauge(
                m,
                new MetricName("atp-peers", GROUP, "relays connected over ATP", tags),
                planes,
                DataPlaneMetrics::atpPeers);
        gauge(
                m,
                new MetricName("tcp-peers", GROUP, "relays connected over TCP", tags),
                planes,
                DataPlaneMetrics::tcpPeers);
        gauge(
                m,
                new MetricName(
                        "tcp-messages-received",
                        GROUP,
                        "sampled messages received over the TCP data plane",
                        tags),
                planes,
                DataPlaneMetrics::tcpMessagesReceived);
        this.metrics = Collections.unmodifiableMap(m);
    }

    private static void gauge(
            Map<MetricName, Metric> into,
            MetricName name,
            Supplier<DataPlaneMetrics> planes,
            ToLongFunction<DataPlaneMetrics> value) {
        into.put(
                name,
                new Metric() {
                    @Override
                    public MetricName metricName() {
                        return name;
                    }

                    @Override
                    public Object metricValue() {
                        DataPlaneMetrics p = planes.get();
                        return p == null ? 0.0 : (double) value.applyAsLong(p);
                    }
                });
    }

    Map<MetricName, Metric> metrics() {
        return metrics;
    }
}
