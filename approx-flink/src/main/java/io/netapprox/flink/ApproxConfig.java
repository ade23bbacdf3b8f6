package io.netapprox.flink;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpMode;
import io.netapprox.core.transport.DataPlaneMode;
import io.netapprox.core.transport.TcpSendPolicy;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;

/**
 * The validated {@code approx.*} settings of one job ({@link ApproxOptions}). Parsed when the query
 * is built, on the client: a bad value or an unknown {@code approx.} key fails there with an {@link
 * IllegalArgumentException} naming the key, the value and what is accepted. Travels to the
 * TaskManagers inside the operators.
 */
public final class ApproxConfig implements Serializable {
    private static final long serialVersionUID = 1L;

    /** What a sender submits of an epoch. */
    public enum Submit {
        ALL,
        TARGET,
        SLACK
    }

    /**
     * How a (window, group)'s share at one sender is planned. A sender knows only its own share, so
     * only {@code CONSERVATIVE} (the default: each share meets e_max on its own) keeps the group's
     * bound for any split; {@code BALANCED} assumes the P shares are equal.
     */
    public enum Planning {
        BALANCED,
        CONSERVATIVE
    }

    private final boolean enabled;
    private final double errorBound;
    private final double confidence;
    private final int recordsPerMessage;
    private final Planning planning;
    private final Submit submit;
    private final Duration epochTimeout;
    private final Duration epochDeadline;
    private final int epochMaxRecords;
    private final Duration flushInterval;
    private final long sendBufferBytes;
    private final long receiveWindowBytes;
    private final int concurrentPulls;
    private final boolean pushTail;
    private final Duration pushWait;
    private final int maxPushedJobs;
    private final int maxPushedMessages;
    private final String bindAddress;
    private final int controlPort;
    private final DataPlaneMode dataPlane;
    private final TcpSendPolicy tcpSendPolicy;
    private final Duration udpProbeTimeout;
    private final long lineRateBps;
    private final AtpMode mode;
    private final int[] dscp;
    private final String authSecret;
    private final boolean authSecretGenerated;
    private final Duration peerDeathTimeout;
    private final Duration connectTimeout;
    private final int serveThreads;
    private final double faultDropOutgoing;
    private final long faultSeed;

    /**
     * Upper bound of {@code approx.maxPushedJobs}: the pushed epochs a TaskManager's exchange parks
     * while they wait for their manifests.
     */
    static final int MAX_PUSHED_JOBS_LIMIT = 1024;

    private ApproxConfig(ReadableConfig c, String generatedSecret) {
        Set<String> known =
                ApproxOptions.ALL.stream().map(ConfigOption::key).collect(Collectors.toSet());
        Set<String> unknown = new TreeSet<>();
        for (String k : c.toMap().keySet()) {
            if (k.startsWith(ApproxOptions.PREFIX) && !known.contains(k)) {
                unknown.add(k);
            }
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                    "unknown NetApprox configuration key(s) "
                            + unknown
                            + "; known keys: "
                            + known.stream().sorted().collect(Collectors.joining(", ")));
        }
        enabled = get(c, ApproxOptions.ENABLED);
        errorBound = get(c, ApproxOptions.ERROR_BOUND);
        check(errorBound > 0 && errorBound < 1, ApproxOptions.ERROR_BOUND, c, "a number in (0, 1)");
        confidence = get(c, ApproxOptions.CONFIDENCE);
        check(confidence > 0 && confidence < 1, ApproxOptions.CONFIDENCE, c, "a number in (0, 1)");
        recordsPerMessage = get(c, ApproxOptions.RECORDS_PER_MESSAGE);
        check(
                recordsPerMessage >= 1 && recordsPerMessage <= 65536,
                ApproxOptions.RECORDS_PER_MESSAGE,
                c,
                "an integer in [1, 65536]");
        planning = parseEnum(Planning.class, c, ApproxOptions.PLANNING, "balanced or conservative");
        submit = parseEnum(Submit.class, c, ApproxOptions.SUBMIT, "slack, target or all");
        epochTimeout = get(c, ApproxOptions.EPOCH_TIMEOUT);
        check(
                epochTimeout.toMillis() >= 1 && epochTimeout.toHours() <= 24,
                ApproxOptions.EPOCH_TIMEOUT,
                c,
                "a duration from 1 ms to 24 h, e.g. 30 s");
        // unset, capped by epochTimeout (the receiver stops waiting then anyway); set, within it
        epochDeadline =
                c.getOptional(ApproxOptions.EPOCH_DEADLINE).isPresent()
                        ? get(c, ApproxOptions.EPOCH_DEADLINE)
                        : min(ApproxOptions.EPOCH_DEADLINE.defaultValue(), epochTimeout);
        check(
                epochDeadline.toMillis() >= 1 && epochDeadline.compareTo(epochTimeout) <= 0,
                ApproxOptions.EPOCH_DEADLINE,
                c,
                "a duration from 1 ms to "
                        + ApproxOptions.EPOCH_TIMEOUT.key()
                        + " ("
                        + epochTimeout.toMillis()
                        + " ms), e.g. 1 s");
        epochMaxRecords = get(c, ApproxOptions.EPOCH_MAX_RECORDS);
        check(
                epochMaxRecords >= 1,
                ApproxOptions.EPOCH_MAX_RECORDS,
                c,
                "a positive number of records");
        flushInterval = get(c, ApproxOptions.FLUSH_INTERVAL);
        check(
                flushInterval.isZero()
                        || (flushInterval.toMillis() >= 1 && flushInterval.toHours() <= 24),
                ApproxOptions.FLUSH_INTERVAL,
                c,
                "0 (off) or a duration from 1 ms to 24 h, e.g. 250 ms");
        MemorySize sb = get(c, ApproxOptions.SEND_BUFFER);
        sendBufferBytes = sb.getBytes();
        check(
                sendBufferBytes >= (1 << 20),
                ApproxOptions.SEND_BUFFER,
                c,
                "a memory size of at least 1 mb, e.g. 128 mb");
        receiveWindowBytes = get(c, ApproxOptions.RECEIVE_WINDOW).getBytes();
        check(
                receiveWindowBytes >= 65536 && receiveWindowBytes <= (1L << 32),
                ApproxOptions.RECEIVE_WINDOW,
                c,
                "a memory size from 64 kb to 4 gb");
        concurrentPulls = get(c, ApproxOptions.CONCURRENT_PULLS);
        pushTail = get(c, ApproxOptions.PUSH_TAIL);
        check(
                concurrentPulls >= 1 && concurrentPulls <= 256,
                ApproxOptions.CONCURRENT_PULLS,
                c,
                "an integer in [1, 256]");
        // unset, the default is capped by the epoch's deadline (a short epochTimeout needs no
        // pushWait of its own); set, it must fit inside it
        pushWait =
                c.getOptional(ApproxOptions.PUSH_WAIT).isPresent()
                        ? get(c, ApproxOptions.PUSH_WAIT)
                        : min(ApproxOptions.PUSH_WAIT.defaultValue(), epochTimeout);
        check(
                pushWait.toMillis() >= 1 && pushWait.compareTo(epochTimeout) <= 0,
                ApproxOptions.PUSH_WAIT,
                c,
                "a duration from 1 ms to "
                        + ApproxOptions.EPOCH_TIMEOUT.key()
                        + " ("
                        + epochTimeout.toMillis()
                        + " ms), e.g. 2 s");
        maxPushedJobs = get(c, ApproxOptions.MAX_PUSHED_JOBS);
        check(
                maxPushedJobs >= 0 && maxPushedJobs <= MAX_PUSHED_JOBS_LIMIT,
                ApproxOptions.MAX_PUSHED_JOBS,
                c,
                "an integer in [0, " + MAX_PUSHED_JOBS_LIMIT + "]");
        maxPushedMessages = get(c, ApproxOptions.MAX_PUSHED_MESSAGES);
        check(
                maxPushedMessages >= 1,
                ApproxOptions.MAX_PUSHED_MESSAGES,
                c,
                "an integer in [1, 2147483647]");
        bindAddress = c.getOptional(ApproxOptions.BIND_ADDRESS).map(String::trim).orElse(null);
        if (bindAddress != null) {
            check(
                    !bindAddress.isEmpty()
                            && (bindAddress.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}")
                                    || bindAddress.contains(":")),
                    ApproxOptions.BIND_ADDRESS,
                    c,
                    "a numeric IPv4 or IPv6 address");
        }
        controlPort = get(c, ApproxOptions.CONTROL_PORT);
        check(
                controlPort >= 0 && controlPort <= 65535,
                ApproxOptions.CONTROL_PORT,
                c,
                "an integer in [0, 65535]");
        // approx-core's parsers: the same values in every integration
        dataPlane =
                parse(
                        c,
                        ApproxOptions.DATA_PLANE,
                        DataPlaneMode::parse,
                        "one of " + labels(DataPlaneMode.values(), DataPlaneMode::label));
        tcpSendPolicy =
                parse(
                        c,
                        ApproxOptions.TCP_SEND_POLICY,
                        TcpSendPolicy::parse,
                        "one of " + labels(TcpSendPolicy.values(), TcpSendPolicy::label));
        udpProbeTimeout = get(c, ApproxOptions.UDP_PROBE_TIMEOUT);
        // ApproxTransportConfig's bound, checked on the client rather than on the TaskManagers
        check(
                !udpProbeTimeout.isNegative()
                        && udpProbeTimeout.compareTo(Duration.ofSeconds(60)) <= 0,
                ApproxOptions.UDP_PROBE_TIMEOUT,
                c,
                "a duration from 0 (no probe) to 60 s, e.g. 2 s");
        lineRateBps = get(c, ApproxOptions.LINE_RATE_BPS);
        check(
                lineRateBps >= 1_000_000L && lineRateBps <= 1_000_000_000_000L,
                ApproxOptions.LINE_RATE_BPS,
                c,
                "an integer in [1000000, 1000000000000]");
        mode =
                parseEnum(
                        AtpMode.class,
                        c,
                        ApproxOptions.MODE,
                        "one of " + Arrays.toString(AtpMode.values()));
        dscp = c.getOptional(ApproxOptions.DSCP).map(v -> parseDscp(c, v)).orElse(null);
        String secret = c.getOptional(ApproxOptions.AUTH_SECRET).orElse(null);
        if (secret != null) {
            if (secret.getBytes(StandardCharsets.UTF_8).length < ControlConfig.MIN_SECRET_BYTES) {
                throw new IllegalArgumentException(
                        "invalid NetApprox configuration "
                                + ApproxOptions.AUTH_SECRET.key()
                                + "=(hidden): expected at least "
                                + ControlConfig.MIN_SECRET_BYTES
                                + " bytes");
            }
            authSecret = secret;
            authSecretGenerated = false;
        } else {
            authSecret = generatedSecret;
            authSecretGenerated = true;
        }
        peerDeathTimeout = get(c, ApproxOptions.PEER_DEATH_TIMEOUT);
        check(
                peerDeathTimeout.toMillis() >= 50 && peerDeathTimeout.toHours() <= 1,
                ApproxOptions.PEER_DEATH_TIMEOUT,
                c,
                "a duration from 50 ms to 1 h");
        connectTimeout = get(c, ApproxOptions.CONNECT_TIMEOUT);
        check(
                connectTimeout.toMillis() >= 50 && connectTimeout.toHours() <= 1,
                ApproxOptions.CONNECT_TIMEOUT,
                c,
                "a duration from 50 ms to 1 h");
        serveThreads = get(c, ApproxOptions.SERVE_THREADS);
        check(
                serveThreads >= 1 && serveThreads <= 256,
                ApproxOptions.SERVE_THREADS,
                c,
                "an integer in [1, 256]");
        faultDropOutgoing = get(c, ApproxOptions.FAULT_DROP_OUTGOING);
        check(
                faultDropOutgoing >= 0 && faultDropOutgoing < 1,
                ApproxOptions.FAULT_DROP_OUTGOING,
                c,
                "a fraction in [0, 1)");
        faultSeed = get(c, ApproxOptions.FAULT_SEED);
    }

    /**
     * Parses and validates the {@code approx.*} entries of {@code config} (other keys are ignored).
     * Without {@code approx.authSecret}, {@code generatedSecret} authenticates the job's sessions.
     */
    public static ApproxConfig parse(ReadableConfig config, String generatedSecret) {
        return new ApproxConfig(config, generatedSecret);
    }

    /** Parses a plain map (tests, tools); a random secret is generated when none is configured. */
    public static ApproxConfig parse(Map<String, String> config) {
        return parse(Configuration.fromMap(config), randomSecret());
    }

    /** 32 random bytes, hex: the per-job secret used when {@code approx.authSecret} is not set. */
    public static String randomSecret() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private static <T> T get(ReadableConfig c, ConfigOption<T> option) {
        try {
            return c.get(option);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "invalid NetApprox configuration "
                            + option.key()
                            + "="
                            + c.toMap().get(option.key())
                            + ": "
                            + rootMessage(e),
                    e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    private static void check(
            boolean ok, ConfigOption<?> option, ReadableConfig c, String expected) {
        if (!ok) {
            throw new IllegalArgumentException(
                    "invalid NetApprox configuration "
                            + option.key()
                            + "="
                            + c.toMap().getOrDefault(option.key(), String.valueOf(c.get(option)))
                            + ": expected "
                            + expected);
        }
    }

    private static <E extends Enum<E>> E parseEnum(
            Class<E> type, ReadableConfig c, ConfigOption<String> option, String expected) {
        String v = get(c, option).trim();
        try {
            return Enum.valueOf(type, v.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "invalid NetApprox configuration "
                            + option.key()
                            + "="
                            + v
                            + ": expected "
                            + expected);
        }
    }

    private static <T> T parse(
            ReadableConfig c,
            ConfigOption<String> option,
            java.util.function.Function<String, T> parser,
            String expected) {
        String v = get(c, option).trim();
        try {
            return parser.apply(v);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "invalid NetApprox configuration "
                            + option.key()
                            + "="
                            + v
                            + ": expected "
                            + expected);
        }
    }

    /** "a, b, c": the configuration values of an enum, from its own labels. */
    private static <E> String labels(E[] values, java.util.function.Function<E, String> label) {
        return Arrays.stream(values).map(label).collect(Collectors.joining(", "));
    }

    private static int[] parseDscp(ReadableConfig c, String v) {
        String expected = "8 comma-separated integers in [0, 63]";
        String[] parts = v.split(",");
        if (parts.length != 8) {
            check(false, ApproxOptions.DSCP, c, expected);
        }
        int[] d = new int[8];
        for (int i = 0; i < 8; i++) {
            try {
                d[i] = Integer.parseInt(parts[i].trim());
            } catch (NumberFormatException e) {
                check(false, ApproxOptions.DSCP, c, expected);
            }
            check(d[i] >= 0 && d[i] <= 63, ApproxOptions.DSCP, c, expected);
        }
        return d;
    }

    public boolean enabled() {
        return enabled;
    }

    public double errorBound() {
        return errorBound;
    }

    public double confidence() {
        return confidence;
    }

    public int recordsPerMessage() {
        return recordsPerMessage;
    }

    public Planning planning() {
        return planning;
    }

    public Submit submit() {
        return submit;
    }

    /** {@code approx.epochDeadline}: the planned sample's deadline under {@code submit=slack}. */
    public Duration epochDeadline() {
        return epochDeadline;
    }

    public Duration epochTimeout() {
        return epochTimeout;
    }

    public int epochMaxRecords() {
        return epochMaxRecords;
    }

    /** Processing-time period of a sender's extra epoch ends; zero when off. */
    public Duration flushInterval() {
        return flushInterval;
    }

    public long sendBufferBytes() {
        return sendBufferBytes;
    }

    public long receiveWindowBytes() {
        return receiveWindowBytes;
    }

    public int concurrentPulls() {
        return concurrentPulls;
    }

    /** Whether senders push a window's tail epoch behind its manifest ({@code approx.pushTail}). */
    public boolean pushTail() {
        return pushTail;
    }

    /**
     * How long a receiver whose manifest says "pushed" waits for the push before it pulls ({@code
     * approx.pushWait}).
     */
    public Duration pushWait() {
        return pushWait;
    }

    /** Pushed epochs a TaskManager receives at once ({@code approx.maxPushedJobs}). */
    public int maxPushedJobs() {
        return maxPushedJobs;
    }

    /** Messages of the pushed epochs a TaskManager receives at once. */
    public int maxPushedMessages() {
        return maxPushedMessages;
    }

    /** The configured bind address, or null (then the TaskManager's external address). */
    public String bindAddress() {
        return bindAddress;
    }

    public int controlPort() {
        return controlPort;
    }

    /** The data plane between TaskManagers ({@code approx.dataPlane}). */
    public DataPlaneMode dataPlane() {
        return dataPlane;
    }

    /** What the TCP data plane sends of an epoch ({@code approx.tcpSendPolicy}). */
    public TcpSendPolicy tcpSendPolicy() {
        return tcpSendPolicy;
    }

    /**
     * How long {@code auto} waits for a peer's answer over UDP ({@code approx.udpProbeTimeout}).
     */
    public Duration udpProbeTimeout() {
        return udpProbeTimeout;
    }

    public long lineRateBps() {
        return lineRateBps;
    }

    public AtpMode mode() {
        return mode;
    }

    /** DSCP per priority class, or null for the engine's default. */
    public int[] dscp() {
        return dscp == null ? null : dscp.clone();
    }

    public String authSecret() {
        return authSecret;
    }

    /** True when no {@code approx.authSecret} was configured and a per-job secret was generated. */
    public boolean authSecretGenerated() {
        return authSecretGenerated;
    }

    public Duration peerDeathTimeout() {
        return peerDeathTimeout;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public int serveThreads() {
        return serveThreads;
    }

    public double faultDropOutgoing() {
        return faultDropOutgoing;
    }

    public long faultSeed() {
        return faultSeed;
    }
}
