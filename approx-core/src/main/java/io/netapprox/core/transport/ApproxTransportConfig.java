package io.netapprox.core.transport;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * Everything an {@link ApproxTransport} needs, validated in {@link Builder#build()}: the engine's
 * {@link AtpConfig}, the control plane's {@link ControlConfig} (used by both the server and the
 * client factory; the client ignores bind address and port) and the transport's own settings.
 * Invalid values throw {@link IllegalArgumentException} naming the setting.
 */
public final class ApproxTransportConfig {
    /**
     * The default engine config's data-plane idle timeout. The engine ends a session that has had
     * no job and no traffic for {@code idleTimeout}; a transport's peers live as long as their
     * control connection (which the control plane keeps alive with PINGs and closes after its own
     * {@code idleTimeout}), so the default is effectively "never" (AtpConfig does not accept 0).
     */
    public static final Duration DEFAULT_ATP_IDLE_TIMEOUT = Duration.ofDays(365);

    private final AtpConfig atp;
    private final ControlConfig control;
    private final boolean serverEnabled;
    private final int maxPeers;
    private final int serveThreads;
    private final int maxQueuedRequests;
    private final Duration reportTimeout;
    private final InetAddress advertisedDataAddress;
    private final int maxPushedJobs;
    private final long maxPushedMessages;
    private final boolean startBeforeAccept;
    private final DataPlaneMode dataPlane;
    private final TcpSendPolicy tcpSendPolicy;
    private final Duration udpProbeTimeout;

    /** The default {@link #udpProbeTimeout()}. */
    public static final Duration DEFAULT_UDP_PROBE_TIMEOUT = Duration.ofSeconds(2);

    private ApproxTransportConfig(Builder b, AtpConfig atp, ControlConfig control, int maxPeers) {
        this.atp = atp;
        this.control = control;
        this.serverEnabled = b.serverEnabled;
        this.maxPeers = maxPeers;
        this.serveThreads = b.serveThreads;
        this.maxQueuedRequests = b.maxQueuedRequests;
        this.reportTimeout = b.reportTimeout;
        this.advertisedDataAddress = b.advertisedDataAddress;
        this.maxPushedJobs = b.maxPushedJobs;
        this.maxPushedMessages = b.maxPushedMessages;
        this.startBeforeAccept = b.startBeforeAccept;
        this.dataPlane = b.dataPlane;
        this.tcpSendPolicy = b.tcpSendPolicy;
        this.udpProbeTimeout = b.udpProbeTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The default engine config of a transport: AtpConfig defaults with {@link
     * #DEFAULT_ATP_IDLE_TIMEOUT}.
     */
    public static AtpConfig.Builder defaultAtp() {
        return AtpConfig.builder().idleTimeout(DEFAULT_ATP_IDLE_TIMEOUT);
    }

    /**
     * The engine config. With the TCP data plane its limits still apply (jobs per session, groups
     * and messages per job, message size, send timeout, receive buffer): a job runs alike on both
     * planes.
     */
    public AtpConfig atp() {
        return atp;
    }

    /**
     * Which data plane the jobs run on: {@link DataPlaneMode#AUTO} (default: ATP, with a TCP
     * fallback), {@link DataPlaneMode#ATP} or {@link DataPlaneMode#TCP}. Both sides of a peer agree
     * on one in the control handshake.
     */
    public DataPlaneMode dataPlane() {
        return dataPlane;
    }

    /** What the TCP data plane sends of a job (default {@link TcpSendPolicy#EARLY_SEND}). */
    public TcpSendPolicy tcpSendPolicy() {
        return tcpSendPolicy;
    }

    /**
     * How long a connecting side waits for a one-message ATP job (the UDP probe) to complete before
     * it decides that the peer is not reachable over UDP (default 2 s): {@code auto} then runs the
     * peer on TCP, {@code atp} fails the connection. 0 skips the probe (UDP is taken on trust).
     */
    public Duration udpProbeTimeout() {
        return udpProbeTimeout;
    }

    public ControlConfig control() {
        return control;
    }

    /**
     * Whether this transport accepts control connections (serves requests); clients can always
     * connect out.
     */
    public boolean serverEnabled() {
        return serverEnabled;
    }

    /** The most peers (control connections with a data-plane session, both directions) at once. */
    public int maxPeers() {
        return maxPeers;
    }

    /** Threads running {@link DataRequestHandler#serve} (one per transfer being served). */
    public int serveThreads() {
        return serveThreads;
    }

    /** Data requests waiting for a serving thread; more are answered OVERLOADED. */
    public int maxQueuedRequests() {
        return maxQueuedRequests;
    }

    /**
     * How long the serving side waits for the receiver's JOB_REPORT after its ATP job ended
     * successfully; then the transfer's report future fails with {@link
     * TransportException.Reason#TIMEOUT}.
     */
    public Duration reportTimeout() {
        return reportTimeout;
    }

    /** The UDP address advertised to peers, or null for the engine's bind address. */
    public InetAddress advertisedDataAddress() {
        return advertisedDataAddress;
    }

    /**
     * Pushed jobs (a peer sends without a request, {@link ApproxPeer#push}) this transport receives
     * at once, over all peers; one more is refused (the pusher keeps its data for a pull). 0
     * refuses every push.
     */
    public int maxPushedJobs() {
        return maxPushedJobs;
    }

    /**
     * Messages (the sum of the announced N) of the pushed jobs this transport receives at once; a
     * push that would exceed it is refused. With the engine's message size limit this bounds the
     * bytes a peer may send unasked.
     */
    public long maxPushedMessages() {
        return maxPushedMessages;
    }

    /**
     * Whether the serving side starts a requested job's ATP job as soon as it has sent the job's
     * JOB_ANNOUNCE, without waiting for the requester's JOB_ACCEPT (default true). The requester
     * asked for job J itself and allocated its id, so its acceptance only tells whether it has
     * given the transfer up meanwhile: a refusal then cancels the running job (counted in {@link
     * ApproxTransport#requestedJobsRefused()}). The requester holds data that arrives before the
     * announcement (it needs the announced groups) until the announcement, within the engine's
     * receive buffer, and drops data of jobs it did not ask for or gave up ({@link
     * ApproxTransport#messagesOfUnknownJobs()}). Saves one control round trip per transfer. Pushed
     * jobs always wait for the receiver's acceptance (it may refuse for its push budget).
     */
    public boolean startBeforeAccept() {
        return startBeforeAccept;
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.atp = atp;
        b.control = control;
        b.serverEnabled = serverEnabled;
        b.maxPeers = maxPeers;
        b.serveThreads = serveThreads;
        b.maxQueuedRequests = maxQueuedRequests;
        b.reportTimeout = reportTimeout;
        b.advertisedDataAddress = advertisedDataAddress;
        b.maxPushedJobs = maxPushedJobs;
        b.maxPushedMessages = maxPushedMessages;
        b.startBeforeAccept = startBeforeAccept;
        b.dataPlane = dataPlane;
        b.tcpSendPolicy = tcpSendPolicy;
        b.udpProbeTimeout = udpProbeTimeout;
        return b;
    }

    @Override
    public String toString() {
        return "ApproxTransportConfig{atp="
                + atp
                + ", control="
                + control
                + ", server="
                + serverEnabled
                + ", maxPeers="
                + maxPeers
                + ", serveThreads="
                + serveThreads
                + ", maxQueuedRequests="
                + maxQueuedRequests
                + ", reportTimeout="
                + reportTimeout
                + ", advertisedDataAddress="
                + advertisedDataAddress
                + ", maxPushedJobs="
                + maxPushedJobs
                + ", maxPushedMessages="
                + maxPushedMessages
                + ", startBeforeAccept="
                + startBeforeAccept
                + ", dataPlane="
                + dataPlane.label()
                + ", tcpSendPolicy="
                + tcpSendPolicy.label()
                + ", udpProbeTimeout="
                + udpProbeTimeout
                + "}";
    }

    /** Builder; every setter returns this. */
    public static final class Builder {
        private AtpConfig atp;
        private ControlConfig control;
        private boolean serverEnabled = true;
        private int maxPeers = -1;
        private int serveThreads = 4;
        private int maxQueuedRequests = 256;
        private Duration reportTimeout = Duration.ofSeconds(30);
        private InetAddress advertisedDataAddress;
        private int maxPushedJobs = 16;
        private long maxPushedMessages = 1 << 16;
        private boolean startBeforeAccept = true;
        private DataPlaneMode dataPlane = DataPlaneMode.AUTO;
        private TcpSendPolicy tcpSendPolicy = TcpSendPolicy.EARLY_SEND;
        private Duration udpProbeTimeout = DEFAULT_UDP_PROBE_TIMEOUT;

        private Builder() {}

        /** Default {@link DataPlaneMode#AUTO}; see {@link ApproxTransportConfig#dataPlane()}. */
        public Builder dataPlane(DataPlaneMode mode) {
            this.dataPlane = mode;
            return this;
        }

        /** Default {@link TcpSendPolicy#EARLY_SEND}. */
        public Builder tcpSendPolicy(TcpSendPolicy policy) {
            this.tcpSendPolicy = policy;
            return this;
        }

        /** Default 2 s; 0 = no probe; at most 60 s. */
        public Builder udpProbeTimeout(Duration d) {
            this.udpProbeTimeout = d;
            return this;
        }

        /** Default true; see {@link ApproxTransportConfig#startBeforeAccept()}. */
        public Builder startBeforeAccept(boolean on) {
            this.startBeforeAccept = on;
            return this;
        }

        /** Default 16; 0 refuses every pushed job. */
        public Builder maxPushedJobs(int n) {
            this.maxPushedJobs = n;
            return this;
        }

        /** Default 65536. */
        public Builder maxPushedMessages(long n) {
            this.maxPushedMessages = n;
            return this;
        }

        /** The engine config (default: {@link #defaultAtp()}). */
        public Builder atp(AtpConfig c) {
            this.atp = c;
            return this;
        }

        /** The control-plane config (default: {@link ControlConfig#defaults()}). */
        public Builder control(ControlConfig c) {
            this.control = c;
            return this;
        }

        /**
         * Accept control connections (default true); false for a process that only requests data.
         */
        public Builder serverEnabled(boolean on) {
            this.serverEnabled = on;
            return this;
        }

        /** Default: the engine's {@code maxSessions}. */
        public Builder maxPeers(int n) {
            this.maxPeers = n;
            return this;
        }

        /** Default 4. */
        public Builder serveThreads(int n) {
            this.serveThreads = n;
            return this;
        }

        /** Default 256. */
        public Builder maxQueuedRequests(int n) {
            this.maxQueuedRequests = n;
            return this;
        }

        /** Default 30 s. */
        public Builder reportTimeout(Duration d) {
            this.reportTimeout = d;
            return this;
        }

        /**
         * Default: the engine's bind address (a wildcard makes peers use the control connection's
         * address).
         */
        public Builder advertisedDataAddress(InetAddress a) {
            this.advertisedDataAddress = a;
            return this;
        }

        public ApproxTransportConfig build() {
            AtpConfig a = atp != null ? atp : defaultAtp().build();
            ControlConfig c = control != null ? control : ControlConfig.defaults();
            int peers = maxPeers == -1 ? a.maxSessions() : maxPeers;
            if (peers < 1 || peers > a.maxSessions()) {
                throw new IllegalArgumentException(
                        "transport maxPeers must be in [1, "
                                + a.maxSessions()
                                + "] (AtpConfig.maxSessions), got "
                                + peers);
            }
            if (serveThreads < 1 || serveThreads > 1024) {
                throw new IllegalArgumentException(
                        "transport serveThreads must be in [1, 1024], got " + serveThreads);
            }
            if (maxQueuedRequests < 0 || maxQueuedRequests > 1 << 20) {
                throw new IllegalArgumentException(
                        "transport maxQueuedRequests must be in [0, 1048576], got "
                                + maxQueuedRequests);
            }
            if (maxPushedJobs < 0
                    || maxPushedJobs > (long) a.maxJobsPerSession() * a.maxSessions()) {
                throw new IllegalArgumentException(
                        "transport maxPushedJobs must be in [0, "
                                + (long) a.maxJobsPerSession() * a.maxSessions()
                                + "] (AtpConfig.maxJobsPerSession x maxSessions), got "
                                + maxPushedJobs);
            }
            if (maxPushedMessages < 1 || maxPushedMessages > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "transport maxPushedMessages must be in [1, 2147483647], got "
                                + maxPushedMessages);
            }
            if (reportTimeout == null
                    || reportTimeout.isNegative()
                    || reportTimeout.isZero()
                    || reportTimeout.compareTo(Duration.ofDays(1)) > 0) {
                throw new IllegalArgumentException(
                        "transport reportTimeout must be in (0, 1 day], got " + reportTimeout);
            }
            if (dataPlane == null) {
                throw new IllegalArgumentException(
                        "transport dataPlane must be one of atp, tcp, auto, got null");
            }
            if (tcpSendPolicy == null) {
                throw new IllegalArgumentException(
                        "transport tcpSendPolicy must be one of earlySend, sampleSend, got null");
            }
            if (udpProbeTimeout == null
                    || udpProbeTimeout.isNegative()
                    || udpProbeTimeout.compareTo(Duration.ofSeconds(60)) > 0) {
                throw new IllegalArgumentException(
                        "transport udpProbeTimeout must be in [0, 60 s] (0 = no probe), got "
                                + udpProbeTimeout);
            }
            InetAddress atpBind;
            try {
                atpBind =
                        InetAddress.getByName(
                                a.bindAddress()); // numeric (validated by AtpConfig): no lookup
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(
                        "AtpConfig bindAddress '" + a.bindAddress() + "' is not an address", e);
            }
            if (advertisedDataAddress != null
                    && !advertisedDataAddress.isAnyLocalAddress()
                    && !atpBind.isAnyLocalAddress()
                    && !advertisedDataAddress.equals(atpBind)) {
                throw new IllegalArgumentException(
                        "transport advertisedDataAddress "
                                + advertisedDataAddress.getHostAddress()
                                + " differs from the engine's bind address "
                                + a.bindAddress()
                                + ": peers could not reach the data plane");
            }
            InetAddress ctlBind = c.bindAddress();
            if (serverEnabled
                    && ctlBind != null
                    && !ctlBind.isAnyLocalAddress()
                    && !atpBind.isAnyLocalAddress()
                    && (ctlBind instanceof Inet4Address) != (atpBind instanceof Inet4Address)) {
                throw new IllegalArgumentException(
                        "control bindAddress "
                                + ctlBind.getHostAddress()
                                + " and AtpConfig bindAddress "
                                + a.bindAddress()
                                + " are of different IP families: peers "
                                + "reach the data plane at the control connection's address family");
            }
            return new ApproxTransportConfig(this, a, c, peers);
        }
    }
}
