package io.netapprox.core.engine;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Immutable engine configuration, mirroring {@code na_config} (defaults are the C API's, checked by
 * a test against {@code na_config_init}). Build with {@link #builder()}; {@link Builder#build()}
 * validates every field and throws {@link IllegalArgumentException} naming the field.
 */
public final class AtpConfig {
    /** Default DSCP per priority class (class 0 = exact traffic). */
    static final byte[] DEFAULT_DSCP = {46, 40, 32, 24, 18, 16, 10, 8};

    /** UDP 8 + IPv4 20 + Ethernet 14: the default {@link #wireOverheadBytes()}. */
    public static final int DEFAULT_WIRE_OVERHEAD_BYTES = 42;

    /** UDP 8 + IPv6 40 + Ethernet 14: {@link #wireOverheadBytes()} for IPv6 paths. */
    public static final int IPV6_WIRE_OVERHEAD_BYTES = 62;

    /** Largest {@link #maxReportRanges()} (the engine's bound: a report stays below 128 MiB). */
    public static final int MAX_REPORT_RANGES_LIMIT = 1 << 24;

    private final long lineRateBps;
    private final int maxDatagram;
    private final double reactionSpeed;
    private final double tlrFloor;
    private final Duration initialRtt;
    private final Duration minEpoch;
    private final Duration ackDelay;
    private final int ackEvery;
    private final Duration idleTimeout;
    private final Duration peerDeathTimeout;
    private final long recvBufferBytes;
    private final long sendBufferBytes;
    private final int maxMessageBytes;
    private final int maxSessions;
    private final int maxJobsPerSession;
    private final int maxMessagesPerJob;
    private final int maxGroupsPerJob;
    private final int maxPendingEvents;
    private final byte[] dscpByClass;
    private final int noPriorityDscp;
    private final AtpMode mode;
    private final double faultDropOutgoing;
    private final double faultDropIncoming;
    private final long faultSeed;
    private final String bindAddress;
    private final int bindPort;
    private final boolean gso;
    private final boolean gro;
    private final int socketBufferBytes;
    private final int eventQueueCapacity;
    private final int maxPeers;
    private final boolean traceEpochs;
    private final boolean payloadAuth;
    private final boolean preferAesGcm;
    private final boolean coalesceMessages;
    private final int wireOverheadBytes;
    private final int maxReportRanges;
    private final double needyClass0Fraction;
    // Java side
    private final int eventBatchSize;
    private final Duration sendTimeout;
    private final Duration closeTimeout;

    private AtpConfig(Builder b) {
        lineRateBps = b.lineRateBps;
        maxDatagram = b.maxDatagram;
        reactionSpeed = b.reactionSpeed;
        tlrFloor = b.tlrFloor;
        initialRtt = b.initialRtt;
        minEpoch = b.minEpoch;
        ackDelay = b.ackDelay;
        ackEvery = b.ackEvery;
        idleTimeout = b.idleTimeout;
        peerDeathTimeout = b.peerDeathTimeout;
        recvBufferBytes = b.recvBufferBytes;
        sendBufferBytes = b.sendBufferBytes;
        maxMessageBytes = b.maxMessageBytes;
        maxSessions = b.maxSessions;
        maxJobsPerSession = b.maxJobsPerSession;
        maxMessagesPerJob = b.maxMessagesPerJob;
        maxGroupsPerJob = b.maxGroupsPerJob;
        maxPendingEvents = b.maxPendingEvents;
        dscpByClass = b.dscpByClass.clone();
        noPriorityDscp = b.noPriorityDscp;
        mode = b.mode;
        faultDropOutgoing = b.faultDropOutgoing;
        faultDropIncoming = b.faultDropIncoming;
        faultSeed = b.faultSeed;
        bindAddress = b.bindAddress;
        bindPort = b.bindPort;
        gso = b.gso;
        gro = b.gro;
        socketBufferBytes = b.socketBufferBytes;
        eventQueueCapacity = b.eventQueueCapacity;
        maxPeers = b.maxPeers;
        traceEpochs = b.traceEpochs;
        payloadAuth = b.payloadAuth;
        preferAesGcm = b.preferAesGcm;
        coalesceMessages = b.coalesceMessages;
        wireOverheadBytes = b.wireOverheadBytes;
        maxReportRanges = b.maxReportRanges;
        needyClass0Fraction = b.needyClass0Fraction;
        eventBatchSize = b.eventBatchSize;
        sendTimeout = b.sendTimeout;
        closeTimeout = b.closeTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder initialised with this config's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.lineRateBps = lineRateBps;
        b.maxDatagram = maxDatagram;
        b.reactionSpeed = reactionSpeed;
        b.tlrFloor = tlrFloor;
        b.initialRtt = initialRtt;
        b.minEpoch = minEpoch;
        b.ackDelay = ackDelay;
        b.ackEvery = ackEvery;
        b.idleTimeout = idleTimeout;
        b.peerDeathTimeout = peerDeathTimeout;
        b.recvBufferBytes = recvBufferBytes;
        b.sendBufferBytes = sendBufferBytes;
        b.maxMessageBytes = maxMessageBytes;
        b.maxSessions = maxSessions;
        b.maxJobsPerSession = maxJobsPerSession;
        b.maxMessagesPerJob = maxMessagesPerJob;
        b.maxGroupsPerJob = maxGroupsPerJob;
        b.maxPendingEvents = maxPendingEvents;
        b.dscpByClass = dscpByClass.clone();
        b.noPriorityDscp = noPriorityDscp;
        b.mode = mode;
        b.faultDropOutgoing = faultDropOutgoing;
        b.faultDropIncoming = faultDropIncoming;
        b.faultSeed = faultSeed;
        b.bindAddress = bindAddress;
        b.bindPort = bindPort;
        b.gso = gso;
        b.gro = gro;
        b.socketBufferBytes = socketBufferBytes;
        b.eventQueueCapacity = eventQueueCapacity;
        b.maxPeers = maxPeers;
        b.traceEpochs = traceEpochs;
        b.payloadAuth = payloadAuth;
        b.preferAesGcm = preferAesGcm;
        b.coalesceMessages = coalesceMessages;
        b.wireOverheadBytes = wireOverheadBytes;
        b.maxReportRanges = maxReportRanges;
        b.needyClass0Fraction = needyClass0Fraction;
        b.eventBatchSize = eventBatchSize;
        b.sendTimeout = sendTimeout;
        b.closeTimeout = closeTimeout;
        return b;
    }

    public long lineRateBps() {
        return lineRateBps;
    }

    public int maxDatagram() {
        return maxDatagram;
    }

    public double reactionSpeed() {
        return reactionSpeed;
    }

    public double tlrFloor() {
        return tlrFloor;
    }

    public Duration initialRtt() {
        return initialRtt;
    }

    public Duration minEpoch() {
        return minEpoch;
    }

    public Duration ackDelay() {
        return ackDelay;
    }

    public int ackEvery() {
        return ackEvery;
    }

    public Duration idleTimeout() {
        return idleTimeout;
    }

    public Duration peerDeathTimeout() {
        return peerDeathTimeout;
    }

    public long recvBufferBytes() {
        return recvBufferBytes;
    }

    public long sendBufferBytes() {
        return sendBufferBytes;
    }

    public int maxMessageBytes() {
        return maxMessageBytes;
    }

    public int maxSessions() {
        return maxSessions;
    }

    public int maxJobsPerSession() {
        return maxJobsPerSession;
    }

    public int maxMessagesPerJob() {
        return maxMessagesPerJob;
    }

    public int maxGroupsPerJob() {
        return maxGroupsPerJob;
    }

    public int maxPendingEvents() {
        return maxPendingEvents;
    }

    /** DSCP per priority class 0..7 (a copy). */
    public byte[] dscpByClass() {
        return dscpByClass.clone();
    }

    public int noPriorityDscp() {
        return noPriorityDscp;
    }

    public AtpMode mode() {
        return mode;
    }

    public double faultDropOutgoing() {
        return faultDropOutgoing;
    }

    public double faultDropIncoming() {
        return faultDropIncoming;
    }

    public long faultSeed() {
        return faultSeed;
    }

    public String bindAddress() {
        return bindAddress;
    }

    public int bindPort() {
        return bindPort;
    }

    public boolean gso() {
        return gso;
    }

    public boolean gro() {
        return gro;
    }

    public int socketBufferBytes() {
        return socketBufferBytes;
    }

    public int eventQueueCapacity() {
        return eventQueueCapacity;
    }

    public int maxPeers() {
        return maxPeers;
    }

    public boolean traceEpochs() {
        return traceEpochs;
    }

    /**
     * Whether datagram tags cover data payloads (true) or only headers (false; see
     * docs/protocol.md).
     */
    public boolean payloadAuth() {
        return payloadAuth;
    }

    /**
     * Whether AES-256-GCM is used where AES-NI exists (true) or always ChaCha20-Poly1305 (false).
     */
    public boolean preferAesGcm() {
        return preferAesGcm;
    }

    /**
     * Whether several small whole messages of one job travel in one datagram (DATA bundles,
     * docs/protocol.md section 1; true) or one message per datagram (false: what peers built before
     * bundles speak).
     */
    public boolean coalesceMessages() {
        return coalesceMessages;
    }

    /**
     * Bytes per datagram beyond its UDP payload that the pacer spends at the line rate: 42 (UDP +
     * IPv4 + Ethernet) by default; 62 on IPv6 paths.
     */
    public int wireOverheadBytes() {
        return wireOverheadBytes;
    }

    /** Id ranges a receiver report lists (all groups together); beyond it counts only. */
    public int maxReportRanges() {
        return maxReportRanges;
    }

    /**
     * Full mode: a job whose loss allowance is spent sends in class 0 (the exact queue) once it
     * needs at most this fraction of its target; 0 keeps every approximate job in its slack class.
     */
    public double needyClass0Fraction() {
        return needyClass0Fraction;
    }

    /** Events drained per JNI crossing by the event thread. */
    public int eventBatchSize() {
        return eventBatchSize;
    }

    /** How long {@link OutgoingJob#send} blocks for send-buffer space by default. */
    public Duration sendTimeout() {
        return sendTimeout;
    }

    /**
     * How long {@link AtpEndpoint#close()} waits for delivered messages to be released before
     * deferring.
     */
    public Duration closeTimeout() {
        return closeTimeout;
    }

    /**
     * The engine part as it crosses JNI ({@code NativeEngine.engineOpen}): one slot per {@code
     * na_config} field, named as in the C header, in the order of the library's table (checked when
     * the library loads).
     */
    static final NativeRecord<AtpConfig> NATIVE =
            new NativeRecord<>(
                    NativeEngine.RECORD_CONFIG,
                    "configuration (na_config)",
                    List.of(
                            NativeRecord.out("line_rate_bps", c -> c.lineRateBps),
                            NativeRecord.out("max_datagram", c -> c.maxDatagram),
                            NativeRecord.out(
                                    "reaction_speed",
                                    c -> Double.doubleToRawLongBits(c.reactionSpeed)),
                            NativeRecord.out(
                                    "tlr_floor", c -> Double.doubleToRawLongBits(c.tlrFloor)),
                            NativeRecord.out("initial_rtt_ns", c -> c.initialRtt.toNanos()),
                            NativeRecord.out("min_epoch_ns", c -> c.minEpoch.toNanos()),
                            NativeRecord.out("ack_delay_ns", c -> c.ackDelay.toNanos()),
                            NativeRecord.out("ack_every", c -> c.ackEvery),
                            NativeRecord.out("idle_timeout_ns", c -> c.idleTimeout.toNanos()),
                            NativeRecord.out(
                                    "peer_death_timeout_ns", c -> c.peerDeathTimeout.toNanos()),
                            NativeRecord.out("recv_buffer_bytes", c -> c.recvBufferBytes),
                            NativeRecord.out("send_buffer_bytes", c -> c.sendBufferBytes),
                            NativeRecord.out("max_message_bytes", c -> c.maxMessageBytes),
                            NativeRecord.out("max_sessions", c -> c.maxSessions),
                            NativeRecord.out("max_jobs_per_session", c -> c.maxJobsPerSession),
                            NativeRecord.out("max_messages_per_job", c -> c.maxMessagesPerJob),
                            NativeRecord.out("max_groups_per_job", c -> c.maxGroupsPerJob),
                            NativeRecord.out("max_pending_events", c -> c.maxPendingEvents),
                            NativeRecord.out("dscp_by_class[0]", c -> c.dscpByClass[0]),
                            NativeRecord.out("dscp_by_class[1]", c -> c.dscpByClass[1]),
                            NativeRecord.out("dscp_by_class[2]", c -> c.dscpByClass[2]),
                            NativeRecord.out("dscp_by_class[3]", c -> c.dscpByClass[3]),
                            NativeRecord.out("dscp_by_class[4]", c -> c.dscpByClass[4]),
                            NativeRecord.out("dscp_by_class[5]", c -> c.dscpByClass[5]),
                            NativeRecord.out("dscp_by_class[6]", c -> c.dscpByClass[6]),
                            NativeRecord.out("dscp_by_class[7]", c -> c.dscpByClass[7]),
                            NativeRecord.out("no_priority_dscp", c -> c.noPriorityDscp),
                            NativeRecord.out("mode", c -> c.mode.nativeValue()),
                            NativeRecord.out(
                                    "fault_drop_outgoing",
                                    c -> Double.doubleToRawLongBits(c.faultDropOutgoing)),
                            NativeRecord.out(
                                    "fault_drop_incoming",
                                    c -> Double.doubleToRawLongBits(c.faultDropIncoming)),
                            NativeRecord.out("fault_seed", c -> c.faultSeed),
                            NativeRecord.out("bind_port", c -> c.bindPort),
                            NativeRecord.out("enable_gso", c -> c.gso ? 1 : 0),
                            NativeRecord.out("enable_gro", c -> c.gro ? 1 : 0),
                            NativeRecord.out("socket_buffer_bytes", c -> c.socketBufferBytes),
                            NativeRecord.out("event_queue_capacity", c -> c.eventQueueCapacity),
                            NativeRecord.out("max_peers", c -> c.maxPeers),
                            NativeRecord.out("trace_epochs", c -> c.traceEpochs ? 1 : 0),
                            NativeRecord.out("payload_auth", c -> c.payloadAuth ? 1 : 0),
                            NativeRecord.out("prefer_aes_gcm", c -> c.preferAesGcm ? 1 : 0),
                            NativeRecord.out("coalesce_messages", c -> c.coalesceMessages ? 1 : 0),
                            NativeRecord.out("wire_overhead_bytes", c -> c.wireOverheadBytes),
                            NativeRecord.out("max_report_ranges", c -> c.maxReportRanges),
                            NativeRecord.out(
                                    "needy_class0_fraction",
                                    c -> Double.doubleToRawLongBits(c.needyClass0Fraction))));

    /** The engine part for {@code NativeEngine.engineOpen}, slot by slot ({@link #NATIVE}). */
    long[] toNative() {
        return NATIVE.write(this);
    }

    @Override
    public String toString() {
        return "AtpConfig{lineRateBps="
                + lineRateBps
                + ", maxDatagram="
                + maxDatagram
                + ", mode="
                + mode
                + ", bind="
                + bindAddress
                + ":"
                + bindPort
                + ", recvBuffer="
                + recvBufferBytes
                + ", sendBuffer="
                + sendBufferBytes
                + ", peerDeathTimeout="
                + peerDeathTimeout
                + ", idleTimeout="
                + idleTimeout
                + ", dscp="
                + Arrays.toString(dscpByClass)
                + ", faults="
                + faultDropOutgoing
                + "/"
                + faultDropIncoming
                + "}";
    }

    /** Builder; every setter returns this. */
    public static final class Builder {
        private long lineRateBps = 10_000_000_000L;
        private int maxDatagram = 1472;
        private double reactionSpeed = 0.125;
        private double tlrFloor = 0.01;
        private Duration initialRtt = Duration.ofMillis(1);
        private Duration minEpoch = Duration.ofNanos(100_000);
        private Duration ackDelay = Duration.ofNanos(200_000);
        private int ackEvery = 8;
        private Duration idleTimeout = Duration.ofSeconds(30);
        private Duration peerDeathTimeout = Duration.ofSeconds(5);
        private long recvBufferBytes = 64L << 20;
        private long sendBufferBytes = 64L << 20;
        private int maxMessageBytes = 64 << 20;
        private int maxSessions = 1024;
        private int maxJobsPerSession = 256;
        private int maxMessagesPerJob = 1 << 26;
        private int maxGroupsPerJob = 1 << 20;
        private int maxPendingEvents = 65536;
        private byte[] dscpByClass = DEFAULT_DSCP.clone();
        private int noPriorityDscp = 0;
        private AtpMode mode = AtpMode.FULL;
        private double faultDropOutgoing = 0;
        private double faultDropIncoming = 0;
        private long faultSeed = 1;
        private String bindAddress = "0.0.0.0";
        private int bindPort = 0;
        private boolean gso = true;
        private boolean gro = true;
        private int socketBufferBytes = 8 << 20;
        private int eventQueueCapacity = 16384;
        private int maxPeers = 4096;
        private boolean traceEpochs = false;
        private boolean payloadAuth = true;
        private boolean preferAesGcm = true;
        private boolean coalesceMessages = true;
        private int wireOverheadBytes = DEFAULT_WIRE_OVERHEAD_BYTES;
        private int maxReportRanges = 1 << 16;
        private double needyClass0Fraction = 0.75;
        private int eventBatchSize = 256;
        private Duration sendTimeout = Duration.ofSeconds(30);
        private Duration closeTimeout = Duration.ofSeconds(5);

        private Builder() {}

        /** R_max: the host's line rate in bit/s (at least 1 Mbit/s). */
        public Builder lineRateBps(long v) {
            lineRateBps = v;
            return this;
        }

        /** UDP payload bytes per datagram, [256, 65507] (1472 for a 1500-byte IPv4 MTU). */
        public Builder maxDatagram(int v) {
            maxDatagram = v;
            return this;
        }

        /** m in eq. 2, (0, 1]. */
        public Builder reactionSpeed(double v) {
            reactionSpeed = v;
            return this;
        }

        public Builder tlrFloor(double v) {
            tlrFloor = v;
            return this;
        }

        public Builder initialRtt(Duration v) {
            initialRtt = v;
            return this;
        }

        public Builder minEpoch(Duration v) {
            minEpoch = v;
            return this;
        }

        public Builder ackDelay(Duration v) {
            ackDelay = v;
            return this;
        }

        public Builder ackEvery(int v) {
            ackEvery = v;
            return this;
        }

        /** No traffic at all on a session without jobs for this long ends it. */
        public Builder idleTimeout(Duration v) {
            idleTimeout = v;
            return this;
        }

        /** Nothing heard from the peer while a job is active for this long: PEER_DEAD. */
        public Builder peerDeathTimeout(Duration v) {
            peerDeathTimeout = v;
            return this;
        }

        /** Per session: reassembly + delivered-but-unreleased messages (flow control window). */
        public Builder recvBufferBytes(long v) {
            recvBufferBytes = v;
            return this;
        }

        /** Per session: submitted, unacknowledged bytes (send backpressure). */
        public Builder sendBufferBytes(long v) {
            sendBufferBytes = v;
            return this;
        }

        public Builder maxMessageBytes(int v) {
            maxMessageBytes = v;
            return this;
        }

        public Builder maxSessions(int v) {
            maxSessions = v;
            return this;
        }

        public Builder maxJobsPerSession(int v) {
            maxJobsPerSession = v;
            return this;
        }

        public Builder maxMessagesPerJob(int v) {
            maxMessagesPerJob = v;
            return this;
        }

        public Builder maxGroupsPerJob(int v) {
            maxGroupsPerJob = v;
            return this;
        }

        public Builder maxPendingEvents(int v) {
            maxPendingEvents = v;
            return this;
        }

        /** DSCP for priority classes 0..7 (8 values in [0, 63]; class 0 = exact traffic). */
        public Builder dscpByClass(int... v) {
            if (v == null || v.length != 8) {
                throw new IllegalArgumentException(
                        "dscpByClass needs exactly 8 values (classes 0..7), got "
                                + (v == null ? "null" : v.length));
            }
            byte[] b = new byte[8];
            for (int i = 0; i < 8; i++) {
                if (v[i] < 0 || v[i] > 63) {
                    throw new IllegalArgumentException(
                            "dscpByClass[" + i + "] must be in [0, 63], got " + v[i]);
                }
                b[i] = (byte) v[i];
            }
            dscpByClass = b;
            return this;
        }

        public Builder noPriorityDscp(int v) {
            noPriorityDscp = v;
            return this;
        }

        public Builder mode(AtpMode v) {
            mode = v;
            return this;
        }

        /** Fault injection: fraction of outgoing / incoming datagrams dropped, in [0, 1). */
        public Builder faultInjection(double dropOutgoing, double dropIncoming, long seed) {
            faultDropOutgoing = dropOutgoing;
            faultDropIncoming = dropIncoming;
            faultSeed = seed;
            return this;
        }

        /** Numeric IPv4/IPv6 address ("::" = dual stack). */
        public Builder bindAddress(String v) {
            bindAddress = v;
            return this;
        }

        /** 0 = ephemeral (see {@link AtpEndpoint#localPort()}). */
        public Builder bindPort(int v) {
            bindPort = v;
            return this;
        }

        public Builder gso(boolean v) {
            gso = v;
            return this;
        }

        public Builder gro(boolean v) {
            gro = v;
            return this;
        }

        public Builder socketBufferBytes(int v) {
            socketBufferBytes = v;
            return this;
        }

        public Builder eventQueueCapacity(int v) {
            eventQueueCapacity = v;
            return this;
        }

        public Builder maxPeers(int v) {
            maxPeers = v;
            return this;
        }

        public Builder traceEpochs(boolean v) {
            traceEpochs = v;
            return this;
        }

        /**
         * {@code false}: tags cover headers only, payload bytes are not authenticated (faster; only
         * for trusted networks). Both ends must agree (a receiver that requires payload tags drops
         * header-only datagrams).
         */
        public Builder payloadAuth(boolean v) {
            payloadAuth = v;
            return this;
        }

        /**
         * {@code false}: always ChaCha20-Poly1305, e.g. for a fleet where some hosts lack AES-NI.
         */
        public Builder preferAesGcm(boolean v) {
            preferAesGcm = v;
            return this;
        }

        /**
         * {@code false}: one message per datagram (no DATA bundles), e.g. toward peers built before
         * bundles. Default true.
         */
        public Builder coalesceMessages(boolean v) {
            coalesceMessages = v;
            return this;
        }

        /**
         * Bytes per datagram beyond its UDP payload that the pacer counts, [0, 1024]: 42 (UDP 8 +
         * IPv4 20 + Ethernet 14, the default); IPv6 paths need 62 ({@link
         * #IPV6_WIRE_OVERHEAD_BYTES}), or the host overruns its own uplink with small messages.
         */
        public Builder wireOverheadBytes(int v) {
            wireOverheadBytes = v;
            return this;
        }

        /**
         * Id ranges a receiver report lists (8 bytes each, all groups together), [0, 16777216];
         * beyond it the report lists counts only. Default 65536.
         */
        public Builder maxReportRanges(int v) {
            maxReportRanges = v;
            return this;
        }

        /**
         * Full mode: a job whose loss allowance is spent sends in class 0 once it needs at most
         * this fraction of its target, [0, 1]. Default 0.75: approximate jobs are not parked behind
         * class-0 bursts, at some cost to co-running exact jobs; 0 = never (the paper's classes).
         */
        public Builder needyClass0Fraction(double v) {
            needyClass0Fraction = v;
            return this;
        }

        /** Events drained per JNI crossing, [1, 1024]. */
        public Builder eventBatchSize(int v) {
            eventBatchSize = v;
            return this;
        }

        public Builder sendTimeout(Duration v) {
            sendTimeout = v;
            return this;
        }

        public Builder closeTimeout(Duration v) {
            closeTimeout = v;
            return this;
        }

        private static void require(boolean ok, String msg) {
            if (!ok) {
                throw new IllegalArgumentException(msg);
            }
        }

        private static void positive(Duration d, String name) {
            require(
                    d != null && !d.isNegative() && !d.isZero(),
                    name + " must be positive, got " + d);
            require(
                    d.compareTo(Duration.ofDays(365)) <= 0,
                    name + " must be at most a year, got " + d);
        }

        /** Validates and builds. */
        public AtpConfig build() {
            require(
                    lineRateBps >= 1_000_000,
                    "lineRateBps must be at least 1 Mbit/s (1000000), got " + lineRateBps);
            require(
                    maxDatagram >= 256 && maxDatagram <= 65507,
                    "maxDatagram must be in [256, 65507], got " + maxDatagram);
            require(
                    reactionSpeed > 0 && reactionSpeed <= 1,
                    "reactionSpeed must be in (0, 1], got " + reactionSpeed);
            require(tlrFloor >= 0 && tlrFloor < 1, "tlrFloor must be in [0, 1), got " + tlrFloor);
            positive(initialRtt, "initialRtt");
            positive(minEpoch, "minEpoch");
            require(
                    ackDelay != null
                            && !ackDelay.isNegative()
                            && ackDelay.compareTo(Duration.ofDays(1)) <= 0,
                    "ackDelay must be >= 0, got " + ackDelay);
            require(ackEvery > 0, "ackEvery must be positive, got " + ackEvery);
            positive(idleTimeout, "idleTimeout");
            positive(peerDeathTimeout, "peerDeathTimeout");
            require(
                    recvBufferBytes >= 65536,
                    "recvBufferBytes must be at least 64 KiB (65536), got " + recvBufferBytes);
            require(
                    sendBufferBytes >= 65536,
                    "sendBufferBytes must be at least 64 KiB (65536), got " + sendBufferBytes);
            require(
                    maxMessageBytes > 0,
                    "maxMessageBytes must be positive, got " + maxMessageBytes);
            require(maxSessions > 0, "maxSessions must be positive, got " + maxSessions);
            require(
                    maxJobsPerSession > 0,
                    "maxJobsPerSession must be positive, got " + maxJobsPerSession);
            require(
                    maxMessagesPerJob > 0,
                    "maxMessagesPerJob must be positive, got " + maxMessagesPerJob);
            require(
                    maxGroupsPerJob > 0,
                    "maxGroupsPerJob must be positive, got " + maxGroupsPerJob);
            require(
                    maxPendingEvents >= 16,
                    "maxPendingEvents must be at least 16, got " + maxPendingEvents);
            require(
                    noPriorityDscp >= 0 && noPriorityDscp <= 63,
                    "noPriorityDscp must be in [0, 63], got " + noPriorityDscp);
            require(mode != null, "mode must not be null");
            require(
                    Double.isFinite(faultDropOutgoing)
                            && faultDropOutgoing >= 0
                            && faultDropOutgoing < 1,
                    "fault drop fraction (outgoing) must be in [0, 1), got " + faultDropOutgoing);
            require(
                    Double.isFinite(faultDropIncoming)
                            && faultDropIncoming >= 0
                            && faultDropIncoming < 1,
                    "fault drop fraction (incoming) must be in [0, 1), got " + faultDropIncoming);
            Objects.requireNonNull(bindAddress, "bindAddress");
            require(
                    !bindAddress.isEmpty()
                            && bindAddress.length() < 64
                            && bindAddress.matches("[0-9A-Fa-f:.%a-z]+"),
                    "bindAddress must be a numeric IPv4/IPv6 address, got '" + bindAddress + "'");
            require(
                    bindPort >= 0 && bindPort <= 65535,
                    "bindPort must be in [0, 65535], got " + bindPort);
            require(
                    socketBufferBytes > 0,
                    "socketBufferBytes must be positive, got " + socketBufferBytes);
            require(
                    eventQueueCapacity > 0,
                    "eventQueueCapacity must be positive, got " + eventQueueCapacity);
            require(maxPeers > 0, "maxPeers must be positive, got " + maxPeers);
            require(
                    wireOverheadBytes >= 0 && wireOverheadBytes <= 1024,
                    "wireOverheadBytes must be in [0, 1024] (42 for IPv4, 62 for IPv6), got "
                            + wireOverheadBytes);
            require(
                    maxReportRanges >= 0 && maxReportRanges <= MAX_REPORT_RANGES_LIMIT,
                    "maxReportRanges must be in [0, "
                            + MAX_REPORT_RANGES_LIMIT
                            + "], got "
                            + maxReportRanges);
            require(
                    needyClass0Fraction >= 0 && needyClass0Fraction <= 1,
                    "needyClass0Fraction must be in [0, 1], got " + needyClass0Fraction);
            require(
                    eventBatchSize >= 1 && eventBatchSize <= 1024,
                    "eventBatchSize must be in [1, 1024], got " + eventBatchSize);
            positive(sendTimeout, "sendTimeout");
            require(
                    sendTimeout.toMillis() <= Integer.MAX_VALUE,
                    "sendTimeout too large: " + sendTimeout);
            require(
                    closeTimeout != null && !closeTimeout.isNegative(),
                    "closeTimeout must be >= 0, got " + closeTimeout);
            return new AtpConfig(this);
        }
    }
}
