package io.netapprox.kafka.relay;

import io.netapprox.core.transport.DataPlaneMetrics;

/** How a consumer reaches the relay at an address ({@link RelayClient}). */
public interface RelayLink extends AutoCloseable {
    /**
     * Opens a stream with {@code spec} at the relay listening at {@code address} ({@code
     * host:port}). Never blocks: a relay that cannot be reached fails the stream's pulls.
     */
    RelayStream open(String address, StreamSpec spec);

    /** The data planes of the transport the streams use, or null before the first {@link #open}. */
    default DataPlaneMetrics dataPlaneMetrics() {
        return null;
    }

    @Override
    void close();
}
