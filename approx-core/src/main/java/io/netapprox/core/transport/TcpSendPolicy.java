package io.netapprox.core.transport;

/**
 * What the TCP data plane sends of a job ({@link ApproxTransportConfig#tcpSendPolicy()}), named
 * after the network-oblivious baselines of the NetApprox paper. Both send reliably and in order;
 * neither retransmits anything (TCP does), and the receiver's completion ends both.
 */
public enum TcpSendPolicy {
    /**
     * EarlySend: sends every message in the order it is given ({@link SendScheduler}'s order for
     * the integrations) until the receiver says every group has its target - the receiver's DONE
     * travels back like ATP's completion, and later sends return NOT_NEEDED. The default.
     */
    EARLY_SEND("earlySend"),
    /**
     * SampleSend: sends only the first {@code target_g = ceil(MSR_g * N_g)} messages given for each
     * group (a later one is NOT_NEEDED, like a message of an engine group that has met its target);
     * the job then finishes with the receiver's DONE.
     */
    SAMPLE_SEND("sampleSend");

    private final String label;

    TcpSendPolicy(String label) {
        this.label = label;
    }

    /** The configuration value: "earlySend" or "sampleSend". */
    public String label() {
        return label;
    }

    /**
     * Parses "earlySend" or "sampleSend" (any case).
     *
     * @throws IllegalArgumentException naming the value and the choices
     */
    public static TcpSendPolicy parse(String value) {
        if (value != null) {
            for (TcpSendPolicy p : values()) {
                if (p.label.equalsIgnoreCase(value.trim())) {
                    return p;
                }
            }
        }
        throw new IllegalArgumentException(
                "tcpSendPolicy must be one of earlySend, sampleSend; got '" + value + "'");
    }
}
