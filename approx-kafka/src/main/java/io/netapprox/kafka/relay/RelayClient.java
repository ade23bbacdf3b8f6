package io.netapprox.kafka.relay;

import io.netapprox.core.transport.DataPlaneMetrics;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A consumer's side of the relays: a hold on the JVM's shared client endpoint ({@link
 * SharedClientEndpoint}: ATP engine and control client, taken on the first {@link #open}) and one
 * {@link RemoteStream} (its own connection) per relay.
 */
public final class RelayClient implements RelayLink {
    private final byte[] secret;
    private final long pullWaitMs;
    private final TokenDelegation delegation;
    private final TransportOptions options;
    private final List<RemoteStream> streams = new ArrayList<>();
    private SharedClientEndpoint.Lease endpoint;
    private boolean closed;

    /**
     * @param secret the relays' shared secret, or null when they do not authenticate
     * @param pullWaitMs the longest a relay holds a pull (requests time out this plus 30 s later)
     */
    public RelayClient(byte[] secret, long pullWaitMs) {
        this(secret, pullWaitMs, null);
    }

    /**
     * @param delegation the Kafka identity the consumer's streams delegate to the relays (closed
     *     with this client), or null: none
     */
    public RelayClient(byte[] secret, long pullWaitMs, TokenDelegation delegation) {
        this(secret, pullWaitMs, delegation, TransportOptions.defaults(Style.KAFKA));
    }

    /**
     * @param options the consumer's transport options (data plane, UDP probe timeout, DSCP, line
     *     rate, ...: {@code approx.*} keys of approx-core's {@link TransportOptions})
     */
    public RelayClient(
            byte[] secret, long pullWaitMs, TokenDelegation delegation, TransportOptions options) {
        this.secret = secret == null ? null : secret.clone();
        this.pullWaitMs = pullWaitMs;
        this.delegation = delegation;
        this.options = Objects.requireNonNull(options, "options");
    }

    @Override
    public synchronized RelayStream open(String address, StreamSpec spec) {
        if (closed) {
            throw new RelayException(RelayException.Reason.UNAVAILABLE, "consumer closed");
        }
        DelegatedToken token = delegation == null ? null : delegation.token();
        if (endpoint == null) {
            endpoint =
                    SharedClientEndpoint.acquire(
                            secret, Duration.ofMillis(pullWaitMs + 30_000), options);
        }
        streams.removeIf(
                old -> {
                    if (old.isClosed()) {
                        old.close(); // its connection, if any is left
                        return true;
                    }
                    return false;
                });
        RemoteStream s =
                new RemoteStream(endpoint.transport(), address, parse(address), spec, token);
        streams.add(s);
        return s;
    }

    /**
     * The JVM-shared client transport's data planes (it serves every consumer with these options).
     */
    @Override
    public synchronized DataPlaneMetrics dataPlaneMetrics() {
        return endpoint == null ? null : endpoint.transport().dataPlaneMetrics();
    }

    private static InetSocketAddress parse(String address) {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InetSocketAddress(host, Integer.parseInt(address.substring(colon + 1)));
    }

    /** Closes this consumer's relay connections and releases the JVM's shared endpoint. */
    @Override
    public synchronized void close() {
        closed = true;
        for (RemoteStream s : streams) {
            s.close();
        }
        streams.clear();
        if (endpoint != null) {
            endpoint.close();
            endpoint = null;
        }
        if (delegation != null) {
            delegation.close(); // after the streams: the relays stop reading with the token first
        }
    }
}
