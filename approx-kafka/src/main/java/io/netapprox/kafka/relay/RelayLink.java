package io.netapprox.kafka.relay;

/** How a consumer reaches the relay at an address ({@link RelayClient}). */
public interface RelayLink extends AutoCloseable {
    /**
     * Opens a stream with {@code spec} at the relay listening at {@code address} ({@code
     * host:port}). Never blocks: a relay that cannot be reached fails the stream's pulls.
     */
    RelayStream open(String address, StreamSpec spec);

    @Override
    void close();
}
