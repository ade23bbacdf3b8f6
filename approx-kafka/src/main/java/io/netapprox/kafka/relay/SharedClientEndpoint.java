package io.netapprox.kafka.relay;

import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One client-only {@link ApproxTransport} (ATP engine + control client) per JVM and setting, shared
 * by every approximate consumer of the JVM: many consumers (a Flink TaskManager's source readers, a
 * Streams instance's threads) cost one UDP socket and one engine thread, not one each.
 * Reference-counted: the first {@link #acquire} starts it, the last {@link Lease#close} closes it.
 * Consumers with a different secret, request timeout or transport options (data plane, DSCP, line
 * rate, ...) get their own (a transport has one of each); each consumer's relay connections stay
 * its own (one control connection and ATP session per consumer and relay), so closing one consumer
 * never touches another's streams.
 */
public final class SharedClientEndpoint {
    private static final Map<Key, Shared> SHARED = new HashMap<>();

    private SharedClientEndpoint() {}

    /** What makes two consumers' transports interchangeable. */
    private record Key(String secret, long requestTimeoutMs, TransportOptions options) {}

    private static final class Shared {
        final ApproxTransport transport;
        int users;

        Shared(ApproxTransport transport) {
            this.transport = transport;
        }
    }

    /** One user's hold on the shared transport. */
    public static final class Lease implements AutoCloseable {
        private final Key key;
        private final Shared shared;
        private boolean closed;

        private Lease(Key key, Shared shared) {
            this.key = key;
            this.shared = shared;
        }

        public ApproxTransport transport() {
            return shared.transport;
        }

        /** Releases this hold; the last one closes the transport. Idempotent. */
        @Override
        public void close() {
            ApproxTransport last = null;
            synchronized (SHARED) {
                if (closed) {
                    return;
                }
                closed = true;
                if (--shared.users == 0) {
                    SHARED.remove(key, shared);
                    last = shared.transport;
                }
            }
            if (last != null) {
                last.close();
            }
        }
    }

    /**
     * A hold on the JVM's transport for this secret (null: relays without authentication) and
     * request timeout, started if none is open.
     */
    public static Lease acquire(byte[] secret, Duration requestTimeout) {
        return acquire(secret, requestTimeout, TransportOptions.defaults(Style.KAFKA));
    }

    /**
     * {@link #acquire(byte[], Duration)} with the consumer's transport options ({@code
     * approx.data.plane}, {@code approx.dscp}, ...).
     */
    public static Lease acquire(byte[] secret, Duration requestTimeout, TransportOptions options) {
        Key key =
                new Key(
                        secret == null ? null : Arrays.toString(secret),
                        requestTimeout.toMillis(),
                        Objects.requireNonNull(options, "options"));
        synchronized (SHARED) {
            Shared s = SHARED.get(key);
            if (s == null || !s.transport.isOpen()) {
                s = new Shared(start(key, secret, requestTimeout));
                SHARED.put(key, s);
            }
            s.users++;
            return new Lease(key, s);
        }
    }

    /** Open shared transports in this JVM (tests and metrics). */
    public static int openTransports() {
        synchronized (SHARED) {
            return SHARED.size();
        }
    }

    /** Users of all shared transports in this JVM (tests and metrics). */
    public static int users() {
        synchronized (SHARED) {
            return SHARED.values().stream().mapToInt(s -> s.users).sum();
        }
    }

    private static ApproxTransport start(Key key, byte[] secret, Duration requestTimeout) {
        // a consumer only requests: no server, its serving-side options are the relay's
        return ApproxTransport.start(
                key.options()
                        .toConfig(
                                new TransportOptions.Context()
                                        .serverEnabled(false)
                                        .requestTimeout(requestTimeout)
                                        .defaultSecret(secret)));
    }
}
