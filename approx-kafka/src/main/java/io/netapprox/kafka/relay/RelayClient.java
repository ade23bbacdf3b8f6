package io.netapprox.kafka.relay;

import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.DataPlaneMetrics;
import io.netapprox.core.transport.ExchangeRegistry;
import io.netapprox.core.transport.TransportException;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * A consumer's side of the relays: a lease on the JVM's shared client transport ({@link
 * #sharedTransport}: ATP engine and control client, taken on the first {@link #open}) and one
 * {@link RemoteStream} (its own connection) per relay.
 */
public final class RelayClient implements RelayLink {
    /**
     * One client-only {@link ApproxTransport} per JVM and setting, shared by every approximate
     * consumer of the JVM: many consumers (a Flink TaskManager's source readers, a Streams
     * instance's threads) cost one UDP socket and one engine thread, not one each. Consumers with a
     * different secret, request timeout or transport options (data plane, DSCP, line rate, ...) get
     * their own (a transport has one of each); each consumer's relay connections stay its own (one
     * control connection and data-plane session per consumer and relay), so closing one consumer
     * never touches another's streams.
     */
    private static final ExchangeRegistry<TransportKey, ApproxTransport> TRANSPORTS =
            new ExchangeRegistry<>("Kafka consumers' client transport");

    /** What makes two consumers' transports interchangeable. */
    private record TransportKey(String secret, long requestTimeoutMs, TransportOptions options) {}

    private final byte[] secret;
    private final long pullWaitMs;
    private final TokenDelegation delegation;
    private final TransportOptions options;
    private final List<RemoteStream> streams = new ArrayList<>();
    private ExchangeRegistry.Lease<ApproxTransport> transport;
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
        if (transport == null) {
            try {
                transport =
                        sharedTransport(secret, Duration.ofMillis(pullWaitMs + 30_000), options);
            } catch (TransportException e) {
                // e.g. approx.data.plane=atp where the engine cannot load: a KafkaException from
                // poll, as every other relay failure, naming the cause
                throw new RelayException(
                        RelayException.Reason.UNAVAILABLE,
                        "the consumer's transport cannot start: " + e.getMessage(),
                        -1,
                        e);
            }
        }
        streams.removeIf(
                old -> {
                    if (old.isClosed()) {
                        old.close(); // its connection, if any is left
                        return true;
                    }
                    return false;
                });
        RemoteStream s = new RemoteStream(transport.get(), address, parse(address), spec, token);
        streams.add(s);
        return s;
    }

    /**
     * The JVM-shared client transport's data planes (it serves every consumer with these options).
     */
    @Override
    public synchronized DataPlaneMetrics dataPlaneMetrics() {
        return transport == null ? null : transport.get().dataPlaneMetrics();
    }

    /**
     * A lease on the JVM's client transport for this secret (null: relays without authentication),
     * request timeout and transport options ({@code approx.data.plane}, {@code approx.dscp}, ...),
     * started if none is open.
     */
    public static ExchangeRegistry.Lease<ApproxTransport> sharedTransport(
            byte[] secret, Duration requestTimeout, TransportOptions options) {
        TransportKey key =
                new TransportKey(
                        secret == null ? null : Arrays.toString(secret),
                        requestTimeout.toMillis(),
                        Objects.requireNonNull(options, "options"));
        // a consumer only requests: no server, its serving-side options are the relay's
        return TRANSPORTS.acquire(
                key,
                k ->
                        ApproxTransport.start(
                                k.options()
                                        .toConfig(
                                                new TransportOptions.Context()
                                                        .serverEnabled(false)
                                                        .requestTimeout(requestTimeout)
                                                        .defaultSecret(secret))));
    }

    /** Shared client transports open in this JVM (tests and metrics). */
    public static int sharedTransports() {
        return TRANSPORTS.size();
    }

    private static InetSocketAddress parse(String address) {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InetSocketAddress(host, Integer.parseInt(address.substring(colon + 1)));
    }

    /** Closes this consumer's relay connections and releases the JVM's shared transport. */
    @Override
    public synchronized void close() {
        closed = true;
        for (RemoteStream s : streams) {
            s.close();
        }
        streams.clear();
        if (transport != null) {
            transport.close();
            transport = null;
        }
        if (delegation != null) {
            delegation.close(); // after the streams: the relays stop reading with the token first
        }
    }
}
