package io.netapprox.kafka.relay;

/** How a consumer reaches the relay at an address. */
public interface RelayLink extends AutoCloseable {
    /**
     * Opens a stream with {@code spec} at the relay listening at {@code address} ({@code
     * host:port}).
     */
    RelayStream open(String address, StreamSpec spec);

    @Override
    void close();

    /** Relays started in this JVM ({@link KafkaRelay#local}). */
    static RelayLink inProcess() {
        return new RelayLink() {
            @Override
            public RelayStream open(String address, StreamSpec spec) {
                KafkaRelay r = KafkaRelay.local(address);
                if (r == null) {
                    throw new RelayException(
                            RelayException.Reason.UNAVAILABLE, "no relay listens at " + address);
                }
                return r.openSession(spec);
            }

            @Override
            public void close() {}
        };
    }
}
