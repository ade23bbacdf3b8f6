package io.netapprox.kafka.relay;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.common.config.SaslConfigs;

/**
 * Configuration of a {@link KafkaRelay}, validated by {@link Builder#build()} (an {@link
 * IllegalArgumentException} names the setting).
 *
 * <pre>{@code
 * RelayConfig c = RelayConfig.builder("127.0.0.1:9092")        // the broker beside the relay
 *     .brokerId(1).listen("0.0.0.0:7390").secret(secretBytes)
 *     .consumerOverrides(Map.of("security.protocol", "SASL_PLAINTEXT"))   // authorization=kafka
 *     .build();
 * }</pre>
 */
public final class RelayConfig {
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 16L << 20;
    public static final int DEFAULT_MAX_SESSIONS = 64;
    public static final int DEFAULT_SERVE_THREADS = 64;
    public static final int DEFAULT_READ_THREADS = 1;
    public static final String DEFAULT_LISTEN = "0.0.0.0:7390";
    public static final int DEFAULT_MAX_PULL_WAIT_MS = 30_000;
    public static final int DEFAULT_SEGMENT_DEADLINE_MS = 1_000;
    public static final String DEFAULT_SASL_MECHANISM = "SCRAM-SHA-256";

    /** Under which Kafka identity the relay reads a consumer's partitions. */
    public enum Authorization {
        /**
         * As the consumer's own principal: every stream must bring a delegation token ({@link
         * DelegatedToken}); the stream's log readers authenticate with it (SCRAM), so the broker's
         * authorizer decides each of the stream's metadata and fetch requests. A stream without a
         * token, or whose token the broker refuses, is refused ({@code NOT_AUTHORIZED}).
         */
        KAFKA,
        /**
         * As the relay's own identity ({@link #consumerOverrides()}): anyone who has the shared
         * secret reads whatever that identity may read. Only for clusters without ACLs, where every
         * client may read every topic anyway.
         */
        NONE
    }

    private final String bootstrap;
    private final int brokerId;
    private final String listenHost;
    private final int listenPort;
    private final int dataPort;
    private final byte[] secret;
    private final long maxSegmentBytes;
    private final int maxSessions;
    private final int serveThreads;
    private final int readThreads;
    private final Map<String, Object> consumerOverrides;
    private final AtpConfig atp;
    private final TransportOptions transport;
    private final DataPlaneMode dataPlane;
    private final TcpSendPolicy tcpSendPolicy;
    private final Authorization authorization;
    private final int maxPullWaitMs;
    private final int segmentDeadlineMs;
    private final int maxStreamsPerClient;
    private final int maxPullsPerClient;

    private RelayConfig(Builder b, String host, int port) {
        this.bootstrap = b.bootstrap;
        this.brokerId = b.brokerId;
        this.listenHost = host;
        this.listenPort = port;
        this.dataPort = b.dataPort < 0 ? port : b.dataPort;
        this.secret = b.secret == null ? null : b.secret.clone();
        this.maxSegmentBytes = b.maxSegmentBytes;
        this.maxSessions = b.maxSessions;
        this.serveThreads = b.serveThreads;
        this.readThreads = b.readThreads;
        this.consumerOverrides = Map.copyOf(b.consumerOverrides);
        this.atp = b.atp;
        this.transport = b.transport;
        this.dataPlane = b.dataPlane;
        this.tcpSendPolicy = b.tcpSendPolicy;
        this.authorization = b.authorization;
        this.maxPullWaitMs = b.maxPullWaitMs;
        this.segmentDeadlineMs = b.segmentDeadlineMs;
        this.maxStreamsPerClient =
                b.maxStreamsPerClient != null
                        ? b.maxStreamsPerClient
                        : defaultMaxStreamsPerClient(b.maxSessions);
        this.maxPullsPerClient =
                b.maxPullsPerClient != null
                        ? b.maxPullsPerClient
                        : defaultMaxPullsPerClient(b.serveThreads);
    }

    /** A quarter of the relay's streams. */
    public static int defaultMaxStreamsPerClient(int maxSessions) {
        return Math.max(1, maxSessions / 4);
    }

    /** Half of the relay's serving threads. */
    public static int defaultMaxPullsPerClient(int serveThreads) {
        return Math.max(1, serveThreads / 2);
    }

    public static Builder builder(String bootstrap) {
        return new Builder(bootstrap);
    }

    /** The broker beside the relay (loopback, e.g. {@code 127.0.0.1:9092}). */
    public String bootstrap() {
        return bootstrap;
    }

    /**
     * The broker's node id: the relay serves only partitions that node leads. -1: serve any
     * partition (a single-broker cluster, tests).
     */
    public int brokerId() {
        return brokerId;
    }

    /** Host (address) consumers reach the relay's control plane at; also the ATP bind address. */
    public String listenHost() {
        return listenHost;
    }

    /** TCP port of the control plane (0: ephemeral, see {@link KafkaRelay#address()}). */
    public int listenPort() {
        return listenPort;
    }

    /** UDP port of the ATP data plane (default: the listen port; 0: ephemeral). */
    public int dataPort() {
        return dataPort;
    }

    /** The consumers' shared secret (a copy), or null: no authentication. */
    public byte[] secret() {
        return secret == null ? null : secret.clone();
    }

    /** A segment closes early once its reservoirs hold this many bytes. */
    public long maxSegmentBytes() {
        return maxSegmentBytes;
    }

    /** Consumer streams served at once. */
    public int maxSessions() {
        return maxSessions;
    }

    /**
     * Pulls served at once (each holds a thread while it waits for its segment and sends it); more
     * wait in a queue.
     */
    public int serveThreads() {
        return serveThreads;
    }

    /**
     * Log readers per consumer stream: each reads its share of the stream's partitions with its own
     * Kafka consumer and thread, so a stream of several partitions is read and sampled in parallel.
     */
    public int readThreads() {
        return readThreads;
    }

    /** Extra properties of the relay's own Kafka consumers (security settings). */
    public Map<String, Object> consumerOverrides() {
        return consumerOverrides;
    }

    /**
     * The engine settings set with {@link Builder#atp} (bind address and port are set from listen),
     * or null: the engine is configured by {@link #transport()}.
     */
    public AtpConfig atp() {
        return atp;
    }

    /**
     * The relay's transport options ({@code --transport approx.dscp=...}; approx-core's {@link
     * TransportOptions} in Kafka's naming), only those of {@link #RELAY_TRANSPORT_OPTIONS}: the
     * relay's own settings own the others.
     */
    public TransportOptions transport() {
        return transport;
    }

    /**
     * The transport options a relay takes from {@code --transport}: those acting on a process that
     * serves and never connects out. The others are the relay's own options ({@code --listen},
     * {@code --data-plane}, {@code --tcp-send-policy}, {@code --serve-threads}, {@code
     * --secret-file}) or only act on the connecting side (the consumer's).
     */
    public static final Set<TransportOptions.Option> RELAY_TRANSPORT_OPTIONS =
            Set.of(
                    TransportOptions.LINE_RATE_BPS,
                    TransportOptions.MODE,
                    TransportOptions.DSCP,
                    TransportOptions.PEER_DEATH_TIMEOUT,
                    TransportOptions.RECEIVE_WINDOW,
                    TransportOptions.START_BEFORE_ACCEPT,
                    TransportOptions.FAULT_DROP_OUTGOING,
                    TransportOptions.FAULT_SEED);

    private static String owner(TransportOptions.Option o) {
        if (o == TransportOptions.BIND_ADDRESS || o == TransportOptions.CONTROL_PORT) {
            return "--listen";
        }
        if (o == TransportOptions.DATA_PLANE) {
            return "--data-plane";
        }
        if (o == TransportOptions.TCP_SEND_POLICY) {
            return "--tcp-send-policy";
        }
        if (o == TransportOptions.SERVE_THREADS) {
            return "--serve-threads";
        }
        if (o == TransportOptions.AUTH_SECRET) {
            return "--secret-file";
        }
        return null;
    }

    /**
     * The data plane the relay serves consumers on (default {@link DataPlaneMode#AUTO}: ATP, and
     * TCP for a consumer that runs TCP only or cannot reach the relay over UDP; {@link
     * DataPlaneMode#TCP}: no ATP engine, every consumer over TCP).
     */
    public DataPlaneMode dataPlane() {
        return dataPlane;
    }

    /** What the TCP data plane sends of a segment (default {@link TcpSendPolicy#EARLY_SEND}). */
    public TcpSendPolicy tcpSendPolicy() {
        return tcpSendPolicy;
    }

    /** Under which Kafka identity a consumer's partitions are read (default {@code KAFKA}). */
    public Authorization authorization() {
        return authorization;
    }

    /**
     * The longest the relay holds a pull with nothing new: a pull asking longer is answered (with
     * an empty segment, as any pull whose wait ends) after this.
     */
    public int maxPullWaitMs() {
        return maxPullWaitMs;
    }

    /**
     * The sending policy of a segment over ATP (default {@value #DEFAULT_SEGMENT_DEADLINE_MS}):
     * &gt; 0 is the streaming-epoch policy ({@code slack}, docs/protocol.md section 11,
     * "deadlines") - each cell's planned sample goes first, in the class its slack allows,
     * escalating towards class 0 as the cell falls behind delivering it within this many ms from
     * the segment's start (a cell that delivered nothing is in class 0 after 7/8 of it), the rest
     * of the candidates only in the lowest class; 0 is the previous {@code all} policy: every
     * candidate in the segment's slack class, which strict priority serves only when class 0 is
     * idle.
     */
    public int segmentDeadlineMs() {
        return segmentDeadlineMs;
    }

    /**
     * Streams one client may have open at once (a client: the IP address its connection comes
     * from); beyond it an OPEN is refused {@code UNAVAILABLE}.
     */
    public int maxStreamsPerClient() {
        return maxStreamsPerClient;
    }

    /**
     * Requests (PULLs and OPENs) one client may have on serving threads at once; beyond it a
     * request is answered {@code THROTTLED} at once and the consumer retries after a pause.
     */
    public int maxPullsPerClient() {
        return maxPullsPerClient;
    }

    /**
     * The properties of a stream's log readers: {@link #consumerOverrides()} and, with {@link
     * Authorization#KAFKA}, the SCRAM login of the stream's delegation token (replacing any login
     * of the relay's own).
     */
    Map<String, Object> readerProperties(DelegatedToken token) {
        Map<String, Object> p = new HashMap<>(consumerOverrides);
        if (authorization == Authorization.KAFKA) {
            Objects.requireNonNull(token, "token");
            p.put(SaslConfigs.SASL_MECHANISM, saslMechanism(consumerOverrides));
            p.put(SaslConfigs.SASL_JAAS_CONFIG, token.jaasConfig());
        }
        return p;
    }

    private static String saslMechanism(Map<String, Object> overrides) {
        Object m = overrides.get(SaslConfigs.SASL_MECHANISM);
        return m == null ? DEFAULT_SASL_MECHANISM : String.valueOf(m).trim();
    }

    @Override
    public String toString() {
        return "RelayConfig{bootstrap="
                + bootstrap
                + ", brokerId="
                + brokerId
                + ", listen="
                + listenHost
                + ":"
                + listenPort
                + ", dataPort="
                + dataPort
                + ", dataPlane="
                + dataPlane.label()
                + ", tcpSendPolicy="
                + tcpSendPolicy.label()
                + ", transport="
                + transport.canonical()
                + ", auth="
                + (secret != null)
                + ", maxSegmentBytes="
                + maxSegmentBytes
                + ", maxSessions="
                + maxSessions
                + ", serveThreads="
                + serveThreads
                + ", readThreads="
                + readThreads
                + ", authorization="
                + authorization
                + ", maxPullWaitMs="
                + maxPullWaitMs
                + ", segmentDeadlineMs="
                + segmentDeadlineMs
                + ", maxStreamsPerClient="
                + maxStreamsPerClient
                + ", maxPullsPerClient="
                + maxPullsPerClient
                + "}";
    }

    /** Builder; every setter returns this. */
    public static final class Builder {
        private final String bootstrap;
        private int brokerId = -1;
        private String listen = DEFAULT_LISTEN;
        private int dataPort = -1;
        private byte[] secret;
        private long maxSegmentBytes = DEFAULT_MAX_SEGMENT_BYTES;
        private int maxSessions = DEFAULT_MAX_SESSIONS;
        private int serveThreads = DEFAULT_SERVE_THREADS;
        private int readThreads = DEFAULT_READ_THREADS;
        private final Map<String, Object> consumerOverrides = new HashMap<>();
        private AtpConfig atp;
        private TransportOptions transport = TransportOptions.defaults(Style.KAFKA);
        private DataPlaneMode dataPlane = DataPlaneMode.AUTO;
        private TcpSendPolicy tcpSendPolicy = TcpSendPolicy.EARLY_SEND;
        private Authorization authorization = Authorization.KAFKA;
        private int maxPullWaitMs = DEFAULT_MAX_PULL_WAIT_MS;
        private int segmentDeadlineMs = DEFAULT_SEGMENT_DEADLINE_MS;
        private Integer maxStreamsPerClient;
        private Integer maxPullsPerClient;

        private Builder(String bootstrap) {
            this.bootstrap = Objects.requireNonNull(bootstrap, "bootstrap");
        }

        /** Default -1 (serve any partition). */
        public Builder brokerId(int id) {
            this.brokerId = id;
            return this;
        }

        /** {@code host:port} of the control plane; default {@value #DEFAULT_LISTEN}. */
        public Builder listen(String hostPort) {
            this.listen = Objects.requireNonNull(hostPort, "listen");
            return this;
        }

        /** Default: the listen port. */
        public Builder dataPort(int port) {
            this.dataPort = port;
            return this;
        }

        /** Shared secret (>= 16 bytes) consumers must prove; null (default): no authentication. */
        public Builder secret(byte[] secret) {
            this.secret = secret == null ? null : secret.clone();
            return this;
        }

        public Builder maxSegmentBytes(long bytes) {
            this.maxSegmentBytes = bytes;
            return this;
        }

        public Builder maxSessions(int n) {
            this.maxSessions = n;
            return this;
        }

        public Builder readThreads(int n) {
            this.readThreads = n;
            return this;
        }

        public Builder serveThreads(int n) {
            this.serveThreads = n;
            return this;
        }

        public Builder consumerOverrides(Map<String, ?> props) {
            this.consumerOverrides.putAll(props);
            return this;
        }

        /** Default {@code KAFKA}: each consumer's partitions are read as its own principal. */
        public Builder authorization(Authorization a) {
            this.authorization = Objects.requireNonNull(a, "authorization");
            return this;
        }

        /** In [10, 600000]; default {@value #DEFAULT_MAX_PULL_WAIT_MS}. */
        /** Default {@value #DEFAULT_SEGMENT_DEADLINE_MS}; see {@link #segmentDeadlineMs()}. */
        public Builder segmentDeadlineMs(int ms) {
            this.segmentDeadlineMs = ms;
            return this;
        }

        public Builder maxPullWaitMs(int ms) {
            this.maxPullWaitMs = ms;
            return this;
        }

        /** In [1, maxSessions]; default a quarter of maxSessions. */
        public Builder maxStreamsPerClient(int n) {
            this.maxStreamsPerClient = n;
            return this;
        }

        /** In [1, serveThreads]; default half of serveThreads. */
        public Builder maxPullsPerClient(int n) {
            this.maxPullsPerClient = n;
            return this;
        }

        /**
         * Engine settings (e.g. fault injection in tests) instead of those of {@link #transport};
         * default: {@link #transport}'s.
         */
        public Builder atp(AtpConfig c) {
            this.atp = Objects.requireNonNull(c, "atp");
            return this;
        }

        /**
         * Transport options (Kafka naming, e.g. {@code approx.dscp}); only those of {@link
         * #RELAY_TRANSPORT_OPTIONS} may be set (build() names the option that owns another).
         */
        public Builder transport(TransportOptions options) {
            this.transport = Objects.requireNonNull(options, "transport");
            return this;
        }

        /** Default {@code AUTO}; see {@link RelayConfig#dataPlane()}. */
        public Builder dataPlane(DataPlaneMode mode) {
            this.dataPlane = Objects.requireNonNull(mode, "dataPlane");
            return this;
        }

        /** Default {@code EARLY_SEND}; see {@link RelayConfig#tcpSendPolicy()}. */
        public Builder tcpSendPolicy(TcpSendPolicy policy) {
            this.tcpSendPolicy = Objects.requireNonNull(policy, "tcpSendPolicy");
            return this;
        }

        public RelayConfig build() {
            if (bootstrap.isBlank()) {
                throw new IllegalArgumentException("relay bootstrap must not be empty");
            }
            int colon = listen.lastIndexOf(':');
            if (colon <= 0) {
                throw new IllegalArgumentException("relay listen must be host:port, got " + listen);
            }
            String host = listen.substring(0, colon);
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            int port;
            try {
                port = Integer.parseInt(listen.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("relay listen port is not a number: " + listen);
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException(
                        "relay listen port must be in [0, 65535]: " + listen);
            }
            if (dataPort < -1 || dataPort > 65535) {
                throw new IllegalArgumentException(
                        "relay dataPort must be in [0, 65535]: " + dataPort);
            }
            if (secret != null && secret.length < 16) {
                throw new IllegalArgumentException(
                        "relay secret must be at least 16 bytes long (got " + secret.length + ")");
            }
            if (maxSegmentBytes < 1024) {
                throw new IllegalArgumentException(
                        "relay maxSegmentBytes must be >= 1024: " + maxSegmentBytes);
            }
            if (maxSessions < 1) {
                throw new IllegalArgumentException(
                        "relay maxSessions must be >= 1: " + maxSessions);
            }
            if (serveThreads < 1 || serveThreads > 1024) {
                throw new IllegalArgumentException(
                        "relay serveThreads must be in [1, 1024]: " + serveThreads);
            }
            if (readThreads < 1 || readThreads > 64) {
                throw new IllegalArgumentException(
                        "relay readThreads must be in [1, 64]: " + readThreads);
            }
            if (maxPullWaitMs < 10 || maxPullWaitMs > 600_000) {
                throw new IllegalArgumentException(
                        "relay maxPullWaitMs must be in [10, 600000]: " + maxPullWaitMs);
            }
            if (segmentDeadlineMs < 0 || segmentDeadlineMs > 600_000) {
                throw new IllegalArgumentException(
                        "relay segmentDeadlineMs must be in [0, 600000] (0: no deadline): "
                                + segmentDeadlineMs);
            }
            if (maxStreamsPerClient != null
                    && (maxStreamsPerClient < 1 || maxStreamsPerClient > maxSessions)) {
                throw new IllegalArgumentException(
                        "relay maxStreamsPerClient must be in [1, maxSessions = "
                                + maxSessions
                                + "]: "
                                + maxStreamsPerClient);
            }
            if (maxPullsPerClient != null
                    && (maxPullsPerClient < 1 || maxPullsPerClient > serveThreads)) {
                throw new IllegalArgumentException(
                        "relay maxPullsPerClient must be in [1, serveThreads = "
                                + serveThreads
                                + "]: "
                                + maxPullsPerClient);
            }
            if (authorization == Authorization.KAFKA) {
                checkDelegationSettings(consumerOverrides);
            }
            if (transport.style() != Style.KAFKA) {
                throw new IllegalArgumentException(
                        "relay transport options must be in Kafka's naming (approx.dscp, ...)");
            }
            for (TransportOptions.Option o : TransportOptions.ALL) {
                if (transport.isSet(o) && !RELAY_TRANSPORT_OPTIONS.contains(o)) {
                    String own = owner(o);
                    throw new IllegalArgumentException(
                            "relay transport option "
                                    + Style.KAFKA.key(o)
                                    + (own != null
                                            ? " is the relay's " + own
                                            : " acts on the connecting side (the consumer's)")
                                    + "; a relay takes "
                                    + RELAY_TRANSPORT_OPTIONS.stream()
                                            .map(Style.KAFKA::key)
                                            .sorted()
                                            .collect(Collectors.joining(", ")));
                }
            }
            return new RelayConfig(this, host, port);
        }

        /**
         * Reading as a consumer's principal takes its delegation token, which Kafka accepts only
         * over SASL with a SCRAM mechanism.
         */
        private static void checkDelegationSettings(Map<String, Object> overrides) {
            Object protocol = overrides.get(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG);
            String pr = protocol == null ? "PLAINTEXT" : String.valueOf(protocol).trim();
            String up = pr.toUpperCase(Locale.ROOT);
            if (!up.equals("SASL_PLAINTEXT") && !up.equals("SASL_SSL")) {
                throw new IllegalArgumentException(
                        "relay authorization=kafka reads as each consumer with its delegation token,"
                                + " which needs a SASL listener: consumer override "
                                + CommonClientConfigs.SECURITY_PROTOCOL_CONFIG
                                + " must be SASL_PLAINTEXT or SASL_SSL, got "
                                + pr
                                + " (authorization=none only on a cluster without ACLs)");
            }
            String m = saslMechanism(overrides);
            if (!m.equals("SCRAM-SHA-256") && !m.equals("SCRAM-SHA-512")) {
                throw new IllegalArgumentException(
                        "relay authorization=kafka: delegation tokens authenticate with SCRAM, so"
                                + " consumer override "
                                + SaslConfigs.SASL_MECHANISM
                                + " must be SCRAM-SHA-256 or SCRAM-SHA-512, got "
                                + m);
            }
        }
    }
}
