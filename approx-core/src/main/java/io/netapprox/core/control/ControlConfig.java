package io.netapprox.core.control;

import io.netty.handler.ssl.SslContext;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Immutable control-plane configuration, shared by {@link ControlServer} and {@link
 * ControlClientFactory}. Built with {@link #builder()} (validated in {@link Builder#build()}); the
 * string keys of each framework are parsed once, by {@code transport.TransportOptions}. Every
 * invalid value fails with an {@link IllegalArgumentException} naming the setting, the allowed
 * range and the value.
 */
public final class ControlConfig {
    public static final int MIN_FRAME_LENGTH = 4096;
    public static final int MAX_FRAME_LENGTH = 64 << 20;
    public static final int MIN_SECRET_BYTES = 16;

    /**
     * Default per-connection send-queue bound (raised to two largest frames when {@code
     * maxFrameLength} is big).
     */
    public static final long DEFAULT_MAX_QUEUED_BYTES = 16L << 20;

    public static final long MAX_QUEUED_BYTES_LIMIT = 1L << 32;

    private final InetAddress bindAddress;
    private final int port;
    private final int maxFrameLength;
    private final Duration connectTimeout;
    private final Duration handshakeTimeout;
    private final Duration requestTimeout;
    private final Duration idleTimeout;
    private final Duration pingInterval;
    private final Duration shutdownTimeout;
    private final int eventLoopThreads;
    private final int maxPendingRequests;
    private final int maxConnections;
    private final long maxQueuedBytes;
    private final Long
            maxQueuedBytesSet; // as given to the builder (null: derived from maxFrameLength)
    private final String endpointId;
    private final byte[] authSecret;
    private final SslContext sslContext;

    private ControlConfig(Builder b) {
        this.bindAddress = b.bindAddress;
        this.port = b.port;
        this.maxFrameLength = b.maxFrameLength;
        this.connectTimeout = b.connectTimeout;
        this.handshakeTimeout = b.handshakeTimeout;
        this.requestTimeout = b.requestTimeout;
        this.idleTimeout = b.idleTimeout;
        this.pingInterval = b.pingInterval;
        this.shutdownTimeout = b.shutdownTimeout;
        this.eventLoopThreads = b.eventLoopThreads;
        this.maxPendingRequests = b.maxPendingRequests;
        this.maxConnections = b.maxConnections;
        this.maxQueuedBytes = b.effectiveMaxQueuedBytes();
        this.maxQueuedBytesSet = b.maxQueuedBytes;
        this.endpointId =
                b.endpointId != null
                        ? b.endpointId
                        : "netapprox-" + Long.toHexString(ThreadLocalRandom.current().nextLong());
        this.authSecret = b.authSecret == null ? null : b.authSecret.clone();
        this.sslContext = b.sslContext;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Defaults everywhere. */
    public static ControlConfig defaults() {
        return builder().build();
    }

    /** A builder pre-filled with this configuration. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.bindAddress = bindAddress;
        b.port = port;
        b.maxFrameLength = maxFrameLength;
        b.connectTimeout = connectTimeout;
        b.handshakeTimeout = handshakeTimeout;
        b.requestTimeout = requestTimeout;
        b.idleTimeout = idleTimeout;
        b.pingInterval = pingInterval;
        b.shutdownTimeout = shutdownTimeout;
        b.eventLoopThreads = eventLoopThreads;
        b.maxPendingRequests = maxPendingRequests;
        b.maxConnections = maxConnections;
        b.maxQueuedBytes = maxQueuedBytesSet;
        b.endpointId = endpointId;
        b.authSecret = authSecret;
        b.sslContext = sslContext;
        return b;
    }

    /** Server bind address; {@code null} = all interfaces. */
    public InetAddress bindAddress() {
        return bindAddress;
    }

    /** Server TCP port; 0 = ephemeral. */
    public int port() {
        return port;
    }

    /** Largest frame body accepted (and sent) once the session is set up, in bytes. */
    public int maxFrameLength() {
        return maxFrameLength;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** Time allowed for HELLO, authentication and SESSION_SETUP together, from TCP connect. */
    public Duration handshakeTimeout() {
        return handshakeTimeout;
    }

    /** Default per-request timeout. */
    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** A connection that receives nothing for this long is closed with IDLE_TIMEOUT. */
    public Duration idleTimeout() {
        return idleTimeout;
    }

    /** A connection that sends nothing for this long sends a PING. */
    public Duration pingInterval() {
        return pingInterval;
    }

    /** Upper bound on how long {@code close()} waits for event-loop threads to stop. */
    public Duration shutdownTimeout() {
        return shutdownTimeout;
    }

    public int eventLoopThreads() {
        return eventLoopThreads;
    }

    /** Maximum requests in flight per connection and direction. */
    public int maxPendingRequests() {
        return maxPendingRequests;
    }

    /**
     * Server: connections open at once, handshaking or established; one more is answered {@code
     * OVERLOADED} and closed (so a flood of idle or slow connections cannot exhaust descriptors).
     */
    public int maxConnections() {
        return maxConnections;
    }

    /**
     * Bytes a connection may have queued for sending (frames its peer has not taken yet). Beyond it
     * an application request fails with {@code OVERLOADED}, and a connection whose replies or
     * keepalives would exceed it is closed.
     */
    public long maxQueuedBytes() {
        return maxQueuedBytes;
    }

    public String endpointId() {
        return endpointId;
    }

    /** Whether shared-secret authentication is enabled. */
    public boolean authEnabled() {
        return authSecret != null;
    }

    byte[] authSecret() {
        return authSecret;
    }

    /**
     * The TLS context ({@code null}: plain TCP). A server context for servers, a client context for
     * clients.
     */
    public SslContext sslContext() {
        return sslContext;
    }

    @Override
    public String toString() {
        return "ControlConfig{bind="
                + bindAddress
                + ":"
                + port
                + ", maxFrame="
                + maxFrameLength
                + ", connect="
                + connectTimeout
                + ", handshake="
                + handshakeTimeout
                + ", request="
                + requestTimeout
                + ", idle="
                + idleTimeout
                + ", ping="
                + pingInterval
                + ", threads="
                + eventLoopThreads
                + ", maxConnections="
                + maxConnections
                + ", maxQueued="
                + maxQueuedBytes
                + ", endpoint="
                + endpointId
                + ", auth="
                + authEnabled()
                + ", tls="
                + (sslContext != null)
                + "}";
    }

    /** Builder; {@link #build()} validates. */
    public static final class Builder {
        private InetAddress bindAddress;
        private int port = 0;
        private int maxFrameLength = 1 << 20;
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration handshakeTimeout = Duration.ofSeconds(10);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private Duration idleTimeout = Duration.ofSeconds(60);
        private Duration pingInterval = Duration.ofSeconds(15);
        private Duration shutdownTimeout = Duration.ofSeconds(5);
        private int eventLoopThreads = 1;
        private int maxPendingRequests = 1024;
        private int maxConnections = 4096;
        private Long maxQueuedBytes;
        private String endpointId;
        private byte[] authSecret;
        private SslContext sslContext;

        private Builder() {}

        public Builder bindAddress(InetAddress a) {
            this.bindAddress = a;
            return this;
        }

        public Builder port(int p) {
            this.port = p;
            return this;
        }

        public Builder maxFrameLength(int bytes) {
            this.maxFrameLength = bytes;
            return this;
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = d;
            return this;
        }

        public Builder handshakeTimeout(Duration d) {
            this.handshakeTimeout = d;
            return this;
        }

        public Builder requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        public Builder idleTimeout(Duration d) {
            this.idleTimeout = d;
            return this;
        }

        public Builder pingInterval(Duration d) {
            this.pingInterval = d;
            return this;
        }

        public Builder shutdownTimeout(Duration d) {
            this.shutdownTimeout = d;
            return this;
        }

        public Builder eventLoopThreads(int n) {
            this.eventLoopThreads = n;
            return this;
        }

        public Builder maxPendingRequests(int n) {
            this.maxPendingRequests = n;
            return this;
        }

        /** Server: concurrent connections (default 4096). */
        public Builder maxConnections(int n) {
            this.maxConnections = n;
            return this;
        }

        /**
         * Per-connection send-queue bound; default 16 MiB, at least two frames of {@code
         * maxFrameLength}.
         */
        public Builder maxQueuedBytes(long bytes) {
            this.maxQueuedBytes = bytes;
            return this;
        }

        private long effectiveMaxQueuedBytes() {
            return maxQueuedBytes != null
                    ? maxQueuedBytes
                    : Math.max(
                            DEFAULT_MAX_QUEUED_BYTES,
                            2L * (maxFrameLength + WireFormat.HEADER_LENGTH));
        }

        public Builder endpointId(String id) {
            this.endpointId = id;
            return this;
        }

        /** Enables authentication with this shared secret (UTF-8); {@code null} disables it. */
        public Builder authSecret(String secret) {
            this.authSecret = secret == null ? null : secret.getBytes(StandardCharsets.UTF_8);
            return this;
        }

        /**
         * Enables authentication with this shared secret; {@code null} disables it. The array is
         * copied.
         */
        public Builder authSecret(byte[] secret) {
            this.authSecret = secret == null ? null : secret.clone();
            return this;
        }

        public Builder sslContext(SslContext ctx) {
            this.sslContext = ctx;
            return this;
        }

        public ControlConfig build() {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(
                        "control port must be in [0, 65535] (0 = ephemeral), got " + port);
            }
            if (maxFrameLength < MIN_FRAME_LENGTH || maxFrameLength > MAX_FRAME_LENGTH) {
                throw new IllegalArgumentException(
                        "control maxFrameLength must be in ["
                                + MIN_FRAME_LENGTH
                                + ", "
                                + MAX_FRAME_LENGTH
                                + "] bytes, got "
                                + maxFrameLength);
            }
            positive("connectTimeout", connectTimeout);
            positive("handshakeTimeout", handshakeTimeout);
            positive("requestTimeout", requestTimeout);
            positive("idleTimeout", idleTimeout);
            positive("pingInterval", pingInterval);
            positive("shutdownTimeout", shutdownTimeout);
            if (pingInterval.compareTo(idleTimeout) >= 0) {
                throw new IllegalArgumentException(
                        "control pingInterval ("
                                + pingInterval
                                + ") must be shorter than idleTimeout ("
                                + idleTimeout
                                + "), otherwise healthy idle connections time out");
            }
            if (eventLoopThreads < 1 || eventLoopThreads > 256) {
                throw new IllegalArgumentException(
                        "control eventLoopThreads must be in [1, 256], got " + eventLoopThreads);
            }
            if (maxPendingRequests < 1 || maxPendingRequests > 1 << 20) {
                throw new IllegalArgumentException(
                        "control maxPendingRequests must be in [1, 1048576], got "
                                + maxPendingRequests);
            }
            if (maxConnections < 1 || maxConnections > 1 << 20) {
                throw new IllegalArgumentException(
                        "control maxConnections must be in [1, 1048576], got " + maxConnections);
            }
            long queue = effectiveMaxQueuedBytes();
            long minQueue = (long) maxFrameLength + WireFormat.HEADER_LENGTH;
            if (queue < minQueue || queue > MAX_QUEUED_BYTES_LIMIT) {
                throw new IllegalArgumentException(
                        "control maxQueuedBytes must be in ["
                                + minQueue
                                + " (one frame of "
                                + "maxFrameLength), "
                                + MAX_QUEUED_BYTES_LIMIT
                                + "] bytes, got "
                                + queue);
            }
            if (endpointId != null) {
                int n = endpointId.getBytes(StandardCharsets.UTF_8).length;
                if (n == 0 || n > WireFormat.MAX_ENDPOINT_ID_BYTES) {
                    throw new IllegalArgumentException(
                            "control endpointId must be 1.."
                                    + WireFormat.MAX_ENDPOINT_ID_BYTES
                                    + " UTF-8 bytes, got "
                                    + n);
                }
            }
            if (authSecret != null && authSecret.length < MIN_SECRET_BYTES) {
                throw new IllegalArgumentException(
                        "control authSecret must be at least "
                                + MIN_SECRET_BYTES
                                + " bytes, got "
                                + authSecret.length
                                + " (the secret itself is not shown)");
            }
            return new ControlConfig(this);
        }

        private static void positive(String name, Duration d) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(
                        "control " + name + " must be a positive duration, got " + d);
            }
            if (d.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException(
                        "control " + name + " must be at most 1 day, got " + d);
            }
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ControlConfig c
                && c.port == port
                && c.maxFrameLength == maxFrameLength
                && Arrays.equals(c.authSecret, authSecret)
                && c.endpointId.equals(endpointId)
                && java.util.Objects.equals(c.bindAddress, bindAddress)
                && c.connectTimeout.equals(connectTimeout)
                && c.handshakeTimeout.equals(handshakeTimeout)
                && c.requestTimeout.equals(requestTimeout)
                && c.idleTimeout.equals(idleTimeout)
                && c.pingInterval.equals(pingInterval)
                && c.eventLoopThreads == eventLoopThreads
                && c.maxPendingRequests == maxPendingRequests
                && c.maxConnections == maxConnections
                && c.maxQueuedBytes == maxQueuedBytes
                && c.sslContext == sslContext;
    }

    @Override
    public int hashCode() {
        return 31 * port + endpointId.hashCode();
    }
}
