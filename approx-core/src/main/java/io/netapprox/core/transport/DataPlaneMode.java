package io.netapprox.core.transport;

import java.util.Locale;

/**
 * Which data plane a transport runs its jobs on ({@link ApproxTransportConfig#dataPlane()}); the
 * jobs, groups, targets, reports and metrics are the same on both.
 */
public enum DataPlaneMode {
    /**
     * ATP over UDP only. A transport fails to start when the native engine cannot load here, and a
     * connection fails when the peer is not reachable over UDP (or runs TCP only); the message
     * names the cause.
     */
    ATP,
    /**
     * TCP only: one TCP connection per peer (the paper's network-oblivious baseline), no native
     * library needed.
     */
    TCP,
    /**
     * ATP, falling back to TCP - for the whole transport when the native engine cannot load, for a
     * peer when it runs TCP only or is not reachable over UDP within {@link
     * ApproxTransportConfig#udpProbeTimeout()} - with one WARN naming the reason and a counter in
     * {@link ApproxTransport#dataPlaneMetrics()}. The default.
     */
    AUTO;

    /** The configuration value: "atp", "tcp" or "auto". */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses "atp", "tcp" or "auto" (any case).
     *
     * @throws IllegalArgumentException naming the value and the choices
     */
    public static DataPlaneMode parse(String value) {
        if (value != null) {
            for (DataPlaneMode m : values()) {
                if (m.label().equalsIgnoreCase(value.trim())) {
                    return m;
                }
            }
        }
        throw new IllegalArgumentException(
                "dataPlane must be one of atp, tcp, auto; got '" + value + "'");
    }
}
