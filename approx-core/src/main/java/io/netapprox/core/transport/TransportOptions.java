package io.netapprox.core.transport;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpMode;
import java.io.Serializable;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.StringJoiner;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The transport options of every integration, defined once: each option's name, kind, default,
 * bounds and description, its key under each framework's {@link Style} ({@code
 * spark.approx.udpProbeTimeoutMs}, {@code approx.udpProbeTimeout}, {@code
 * approx.udp.probe.timeout.ms}), its parsing and validation, and its translation to an {@link
 * ApproxTransportConfig} ({@link #toConfig(Context)}). The integrations keep only their framework's
 * glue (non-transport options, where the default bind address comes from, the request timeout their
 * own timeouts imply) and hand every transport key to {@link #parse(Style, Map)}.
 *
 * <p>Every bad value fails with an {@link InvalidOptionException} (an {@link
 * IllegalArgumentException}) naming the key as the user wrote it, the value and what is accepted:
 * {@code invalid NetApprox configuration approx.dscp=1,2,3: expected 8 comma-separated integers in
 * [0, 63]}. Keys that are not transport keys are ignored here: each framework reports its unknown
 * keys as it always has, knowing the transport keys from {@link #isKey(Style, String)}.
 *
 * <p>The configuration tables of README.md, docs/spark.md, docs/flink.md and approx-kafka/README.md
 * hold the rows {@link #markdownRows(Style)} generates (a test checks; regenerate with {@code java
 * -cp approx-core/target/classes io.netapprox.core.transport.TransportOptions spark|flink|kafka}).
 */
public final class TransportOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    /** How a framework names the options and writes their values. */
    public enum Style {
        /**
         * {@code spark.approx.} + camelCase name; durations as integer milliseconds under a {@code
         * Ms} suffix, byte sizes as integers under a {@code Bytes} suffix.
         */
        SPARK("spark.approx.", "executor host", "none"),
        /**
         * {@code approx.} + camelCase name; durations as Flink writes them ({@code 2 s}, {@code 500
         * ms}, {@code 1 min}, ISO-8601, a bare number is milliseconds), byte sizes as Flink memory
         * sizes ({@code 64 mb}; binary units).
         */
        FLINK("approx.", "TaskManager's external address", "a random secret per job"),
        /**
         * {@code approx.} + the name in dotted lower case, as Kafka names its configs; durations as
         * integer milliseconds under {@code .ms}, byte sizes as integers under {@code .bytes}.
         */
        KAFKA("approx.", "all interfaces (`0.0.0.0`)", "none");

        private final String prefix;
        private final String bindDefault;
        private final String secretDefault;

        Style(String prefix, String bindDefault, String secretDefault) {
            this.prefix = prefix;
            this.bindDefault = bindDefault;
            this.secretDefault = secretDefault;
        }

        public String prefix() {
            return prefix;
        }

        /** The option's full key in this style, e.g. {@code approx.line.rate.bps}. */
        public String key(Option o) {
            String base = o.name;
            if (this != FLINK) {
                if (o.kind == Kind.DURATION) {
                    base += "Ms";
                } else if (o.kind == Kind.BYTES) {
                    base += "Bytes";
                }
            }
            return prefix + (this == KAFKA ? dotted(base) : base);
        }

        private static String dotted(String camel) {
            StringBuilder b = new StringBuilder();
            for (char ch : camel.toCharArray()) {
                if (Character.isUpperCase(ch)) {
                    b.append('.').append(Character.toLowerCase(ch));
                } else {
                    b.append(ch);
                }
            }
            return b.toString();
        }
    }

    /** What values an option takes. */
    public enum Kind {
        BOOLEAN,
        /** an integer (int or long) in [min, max] */
        INTEGER,
        /** a decimal number */
        DECIMAL,
        /** one of a fixed set of labels, case-insensitive */
        CHOICE,
        /** a duration in [min, max] milliseconds */
        DURATION,
        /** a byte size in [min, max] */
        BYTES,
        /** a numeric IPv4 or IPv6 address */
        ADDRESS,
        /** 8 DSCP values */
        DSCP,
        /** a shared secret of at least {@link ControlConfig#MIN_SECRET_BYTES} bytes */
        SECRET
    }

    /** One transport option: its definition, independent of any framework. */
    public static final class Option {
        private final String name;
        private final Kind kind;
        private final Object defaultValue;
        private final long min;
        private final long max;
        private final String zeroMeans;
        private final List<String> choices;
        private final Function<String, Object> choice;
        private final String description;

        private Option(
                String name,
                Kind kind,
                Object defaultValue,
                long min,
                long max,
                String zeroMeans,
                List<String> choices,
                Function<String, Object> choice,
                String description) {
            this.name = name;
            this.kind = kind;
            this.defaultValue = defaultValue;
            this.min = min;
            this.max = max;
            this.zeroMeans = zeroMeans;
            this.choices = choices;
            this.choice = choice;
            this.description = description;
        }

        /**
         * Whether the option only acts on a process that serves data (answers requests, receives
         * pushes, sends over TCP): a client that only requests (a Kafka consumer) has no use for
         * it.
         */
        public boolean servingSide() {
            return SERVING_SIDE.contains(name);
        }

        /** The camelCase name, without prefix or unit suffix (e.g. {@code udpProbeTimeout}). */
        public String name() {
            return name;
        }

        public Kind kind() {
            return kind;
        }

        /**
         * The value taken when the key is not set (a {@link Duration} for durations, a {@link Long}
         * for integers and byte sizes, an enum for choices), or null: no default here (bind
         * address, DSCP: the engine's, secret).
         */
        public Object defaultValue() {
            return defaultValue;
        }

        /** The lower bound of an integer, a duration (ms) or a byte size. */
        public long min() {
            return min;
        }

        /** The upper bound of an integer, a duration (ms) or a byte size. */
        public long max() {
            return max;
        }

        /**
         * What the option means and does, as the configuration tables of {@code style} say it
         * (other options named by their keys in that style).
         */
        public String description(Style style) {
            String d = description;
            for (Option o : ALL_OPTIONS) {
                d = d.replace("{" + o.name + "}", "`" + style.key(o) + "`");
            }
            return d;
        }

        /** The default as the configuration tables of {@code style} show it. */
        public String defaultText(Style style) {
            if (this == BIND_ADDRESS) {
                return style.bindDefault;
            }
            if (this == AUTH_SECRET) {
                return style.secretDefault;
            }
            if (this == DSCP) {
                return "engine default `46,40,32,24,18,16,10,8`";
            }
            return "`" + format(style, defaultValue) + "`";
        }

        /** {@code value} written as {@code style} writes this option's values. */
        public String format(Style style, Object value) {
            return switch (kind) {
                case DURATION ->
                        style == Style.FLINK
                                ? flinkDuration((Duration) value)
                                : String.valueOf(((Duration) value).toMillis());
                case BYTES ->
                        style == Style.FLINK
                                ? flinkMemory((Long) value)
                                : String.valueOf((long) (Long) value);
                case CHOICE -> label(value);
                case DSCP -> join((int[]) value);
                case SECRET -> "(hidden)";
                case DECIMAL ->
                        java.math.BigDecimal.valueOf((Double) value)
                                .stripTrailingZeros()
                                .toPlainString();
                default -> String.valueOf(value);
            };
        }

        /** What {@code style} accepts, as error messages say it. */
        public String expected(Style style) {
            return switch (kind) {
                case BOOLEAN -> "true or false";
                case INTEGER -> "an integer in [" + min + ", " + max + "]";
                case DECIMAL -> "a fraction in [0, 1)";
                case CHOICE -> "one of " + String.join(", ", choices);
                case DURATION ->
                        style == Style.FLINK
                                ? "a duration from "
                                        + flinkDuration(Duration.ofMillis(min))
                                        + (min == 0 && zeroMeans != null
                                                ? " (" + zeroMeans + ")"
                                                : "")
                                        + " to "
                                        + flinkDuration(Duration.ofMillis(max))
                                        + ", e.g. "
                                        + flinkDuration((Duration) defaultValue)
                                : "an integer in ["
                                        + min
                                        + ", "
                                        + max
                                        + "] (milliseconds"
                                        + (min == 0 && zeroMeans != null
                                                ? "; 0 = " + zeroMeans
                                                : "")
                                        + ")";
                case BYTES ->
                        style == Style.FLINK
                                ? "a memory size from "
                                        + flinkMemory(min)
                                        + " to "
                                        + flinkMemory(max)
                                        + ", e.g. "
                                        + flinkMemory((Long) defaultValue)
                                : "an integer in [" + min + ", " + max + "] (bytes)";
                case ADDRESS -> "a numeric IPv4 or IPv6 address";
                case DSCP -> "8 comma-separated integers in [0, 63]";
                case SECRET -> "at least " + ControlConfig.MIN_SECRET_BYTES + " bytes";
            };
        }

        private String label(Object value) {
            if (value instanceof DataPlaneMode m) {
                return m.label();
            }
            if (value instanceof TcpSendPolicy p) {
                return p.label();
            }
            return String.valueOf(value);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    // ---- the options, in the configuration tables' order ----------------------------------

    private static final List<Option> ALL_OPTIONS = new ArrayList<>();

    private static final Set<String> SERVING_SIDE =
            Set.of(
                    "controlPort",
                    "tcpSendPolicy",
                    "serveThreads",
                    "startBeforeAccept",
                    "maxPushedJobs",
                    "maxPushedMessages");

    public static final Option BIND_ADDRESS =
            add(
                    "bindAddress",
                    Kind.ADDRESS,
                    null,
                    "numeric address this process's ATP engine (and control server, where it"
                            + " serves) binds to");

    public static final Option CONTROL_PORT =
            range(
                    "controlPort",
                    0,
                    0,
                    65535,
                    "TCP control port; 0 = ephemeral (needed when several processes share a host)");

    public static final Option DATA_PLANE =
            choice(
                    "dataPlane",
                    DataPlaneMode.AUTO,
                    Arrays.stream(DataPlaneMode.values()).map(DataPlaneMode::label).toList(),
                    DataPlaneMode::parse,
                    "how peers exchange data: `auto` (ATP, falling back to TCP with one WARN"
                            + " naming the reason when the native library cannot load here, for the"
                            + " whole process, or a peer does not answer over UDP within"
                            + " {udpProbeTimeout}, for that peer), `atp` (ATP only: fails naming"
                            + " the cause instead), `tcp` (one TCP connection per peer: the"
                            + " network-oblivious baseline, no native library)");

    public static final Option TCP_SEND_POLICY =
            choice(
                    "tcpSendPolicy",
                    TcpSendPolicy.EARLY_SEND,
                    Arrays.stream(TcpSendPolicy.values()).map(TcpSendPolicy::label).toList(),
                    TcpSendPolicy::parse,
                    "what the TCP data plane sends of a transfer: `earlySend` (in send order until"
                            + " the receiver has every group's target) or `sampleSend` (only each"
                            + " group's target)");

    public static final Option UDP_PROBE_TIMEOUT =
            duration(
                    "udpProbeTimeout",
                    ApproxTransportConfig.DEFAULT_UDP_PROBE_TIMEOUT,
                    0,
                    60_000,
                    "no probe",
                    "{dataPlane} `auto`: a peer that does not answer a UDP probe within this long"
                            + " uses TCP; 0 = no probe");

    public static final Option LINE_RATE_BPS =
            range(
                    "lineRateBps",
                    10_000_000_000L,
                    1_000_000L,
                    1_000_000_000_000L,
                    "R_max of ATP rate control, bits/s (ATP only)");

    public static final Option MODE =
            choice(
                    "mode",
                    AtpMode.FULL,
                    Arrays.stream(AtpMode.values()).map(Enum::name).toList(),
                    v -> AtpMode.valueOf(v.trim().toUpperCase(Locale.ROOT)),
                    "ATP variant: `FULL` (the product), the paper's ablations "
                            + Arrays.stream(AtpMode.values())
                                    .filter(m -> m != AtpMode.FULL && m != AtpMode.PAPER)
                                    .map(m -> "`" + m.name() + "`")
                                    .collect(java.util.stream.Collectors.joining(", "))
                            + ", or `PAPER` (FULL with the paper's rate law exactly); any case (ATP"
                            + " only)");

    public static final Option DSCP =
            add(
                    "dscp",
                    Kind.DSCP,
                    null,
                    "8 comma-separated DSCP values of priority classes 0..7 (class 0 = exact"
                            + " traffic; ATP only)");

    public static final Option PEER_DEATH_TIMEOUT =
            duration(
                    "peerDeathTimeout",
                    Duration.ofSeconds(5),
                    50,
                    3_600_000,
                    null,
                    "ATP peer-death timeout: nothing heard from a peer with an active job for this"
                            + " long fails its jobs (ATP only)");

    public static final Option CONNECT_TIMEOUT =
            duration(
                    "connectTimeout",
                    Duration.ofSeconds(10),
                    50,
                    3_600_000,
                    null,
                    "control-plane connect timeout");

    public static final Option AUTH_SECRET =
            add(
                    "authSecret",
                    Kind.SECRET,
                    null,
                    "shared secret (>= 16 bytes, UTF-8) authenticating the control connections"
                            + " between peers");

    public static final Option SERVE_THREADS =
            range(
                    "serveThreads",
                    4,
                    1,
                    256,
                    "threads serving data requests (one per transfer being sent)");

    public static final Option START_BEFORE_ACCEPT =
            add(
                    "startBeforeAccept",
                    Kind.BOOLEAN,
                    true,
                    "true: a requested transfer starts as soon as it is announced, without"
                            + " waiting for the requester's acceptance (one control round trip"
                            + " less; a refusal cancels it); false: waits for the acceptance");

    public static final Option MAX_PUSHED_JOBS =
            range(
                    "maxPushedJobs",
                    16,
                    0,
                    1024,
                    "pushed transfers (sent without a request) received at once; one more is"
                            + " refused and pulled instead; 0 refuses every push");

    public static final Option MAX_PUSHED_MESSAGES =
            range(
                    "maxPushedMessages",
                    65536,
                    1,
                    Integer.MAX_VALUE,
                    "messages (announced N) of the pushed transfers received at once; a push that"
                            + " would exceed it is refused and pulled instead");

    public static final Option RECEIVE_WINDOW =
            add(
                    "receiveWindow",
                    Kind.BYTES,
                    64L << 20,
                    65536,
                    1L << 32,
                    null,
                    "per ATP session: messages delivered but not yet consumed by the application;"
                            + " the window a sender may fill (credit), so a slow receiver slows its"
                            + " senders");

    public static final Option FAULT_DROP_OUTGOING =
            add(
                    "faultDropOutgoing",
                    Kind.DECIMAL,
                    0.0,
                    "testing/benchmarks: engine fault injection, fraction of outgoing ATP datagrams"
                            + " dropped, in [0, 1) (ATP only)");

    public static final Option FAULT_SEED =
            range("faultSeed", 1, Long.MIN_VALUE, Long.MAX_VALUE, "seed of the fault injection");

    /** Every option, in the configuration tables' order. */
    public static final List<Option> ALL = Collections.unmodifiableList(ALL_OPTIONS);

    private static Option add(String name, Kind kind, Object def, String description) {
        return add(name, kind, def, 0, 0, null, description);
    }

    private static Option add(
            String name,
            Kind kind,
            Object def,
            long min,
            long max,
            String zeroMeans,
            String description) {
        Option o = new Option(name, kind, def, min, max, zeroMeans, null, null, description);
        ALL_OPTIONS.add(o);
        return o;
    }

    private static Option range(String name, long def, long min, long max, String description) {
        return add(name, Kind.INTEGER, def, min, max, null, description);
    }

    private static Option duration(
            String name, Duration def, long minMs, long maxMs, String zeroMeans, String d) {
        return add(name, Kind.DURATION, def, minMs, maxMs, zeroMeans, d);
    }

    private static Option choice(
            String name,
            Object def,
            List<String> labels,
            Function<String, Object> parser,
            String description) {
        Option o =
                new Option(
                        name,
                        Kind.CHOICE,
                        def,
                        0,
                        0,
                        null,
                        List.copyOf(labels),
                        parser,
                        description);
        ALL_OPTIONS.add(o);
        return o;
    }

    // ---- parsed values ------------------------------------------------------------------------

    private final Style style;

    /** option name -> value, for the options that were set. */
    private final Map<String, Object> set;

    private TransportOptions(Style style, Map<String, Object> set) {
        this.style = style;
        this.set = set;
    }

    /** Every option at its default. */
    public static TransportOptions defaults(Style style) {
        return new TransportOptions(style, new LinkedHashMap<>());
    }

    /**
     * Parses and validates the transport keys of {@code style} in {@code conf} (values are trimmed;
     * every other key is ignored).
     *
     * @throws InvalidOptionException naming the key, the value and what is accepted
     */
    public static TransportOptions parse(Style style, Map<String, String> conf) {
        Map<String, Object> set = new LinkedHashMap<>();
        for (Option o : ALL) {
            String key = style.key(o);
            String raw = conf.get(key);
            if (raw != null) {
                set.put(o.name, parseValue(style, o, key, raw.trim()));
            }
        }
        return new TransportOptions(style, set);
    }

    /** Whether {@code key} is a transport key of {@code style}. */
    public static boolean isKey(Style style, String key) {
        return keys(style).contains(key);
    }

    /** The transport keys of {@code style}, in the tables' order. */
    public static Set<String> keys(Style style) {
        Set<String> k = new LinkedHashSet<>();
        for (Option o : ALL) {
            k.add(style.key(o));
        }
        return k;
    }

    public Style style() {
        return style;
    }

    /** Whether the option's key was set. */
    public boolean isSet(Option o) {
        return set.containsKey(o.name);
    }

    /** The option's value: as set, else its default (null where there is none). */
    public Object value(Option o) {
        return set.containsKey(o.name) ? set.get(o.name) : o.defaultValue;
    }

    /** The configured bind address, or null: the framework's default host. */
    public String bindAddress() {
        return (String) value(BIND_ADDRESS);
    }

    public int controlPort() {
        return (int) (long) (Long) value(CONTROL_PORT);
    }

    public DataPlaneMode dataPlane() {
        return (DataPlaneMode) value(DATA_PLANE);
    }

    public TcpSendPolicy tcpSendPolicy() {
        return (TcpSendPolicy) value(TCP_SEND_POLICY);
    }

    public Duration udpProbeTimeout() {
        return (Duration) value(UDP_PROBE_TIMEOUT);
    }

    public long lineRateBps() {
        return (Long) value(LINE_RATE_BPS);
    }

    public AtpMode mode() {
        return (AtpMode) value(MODE);
    }

    /** DSCP of priority classes 0..7 (a copy), or null: the engine's default. */
    public int[] dscp() {
        int[] d = (int[]) value(DSCP);
        return d == null ? null : d.clone();
    }

    public Duration peerDeathTimeout() {
        return (Duration) value(PEER_DEATH_TIMEOUT);
    }

    public Duration connectTimeout() {
        return (Duration) value(CONNECT_TIMEOUT);
    }

    /** The configured secret, or null. */
    public String authSecret() {
        return (String) value(AUTH_SECRET);
    }

    public int serveThreads() {
        return (int) (long) (Long) value(SERVE_THREADS);
    }

    public boolean startBeforeAccept() {
        return (Boolean) value(START_BEFORE_ACCEPT);
    }

    public int maxPushedJobs() {
        return (int) (long) (Long) value(MAX_PUSHED_JOBS);
    }

    public int maxPushedMessages() {
        return (int) (long) (Long) value(MAX_PUSHED_MESSAGES);
    }

    public long receiveWindowBytes() {
        return (Long) value(RECEIVE_WINDOW);
    }

    public double faultDropOutgoing() {
        return (Double) value(FAULT_DROP_OUTGOING);
    }

    public long faultSeed() {
        return (Long) value(FAULT_SEED);
    }

    // ---- translation ------------------------------------------------------------------------

    /**
     * What the framework adds to the options: where the default bind address comes from, the
     * timeouts its own settings imply, the endpoint id, and whether the process serves.
     */
    public static final class Context {
        private String defaultHost = "0.0.0.0";
        private Duration requestTimeout;
        private Duration reportTimeout;
        private String endpointId;
        private boolean serverEnabled = true;
        private byte[] defaultSecret;

        /** The host (name or address) to bind to when bindAddress is not set; default 0.0.0.0. */
        public Context defaultHost(String host) {
            this.defaultHost = Objects.requireNonNull(host, "host");
            return this;
        }

        /** The control plane's request timeout (default: {@link ControlConfig}'s). */
        public Context requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        /** {@link ApproxTransportConfig#reportTimeout()} (default: the transport's). */
        public Context reportTimeout(Duration d) {
            this.reportTimeout = d;
            return this;
        }

        public Context endpointId(String id) {
            this.endpointId = id;
            return this;
        }

        /** False for a process that only requests data (default true). */
        public Context serverEnabled(boolean on) {
            this.serverEnabled = on;
            return this;
        }

        /**
         * The secret used when authSecret is not set (a per-job secret, one read from a file), or
         * null: no authentication then.
         */
        public Context defaultSecret(byte[] secret) {
            this.defaultSecret = secret == null ? null : secret.clone();
            return this;
        }
    }

    /** The transport configuration these options describe, in the framework's {@code context}. */
    public ApproxTransportConfig toConfig(Context context) {
        String host = bindAddress() != null ? bindAddress() : context.defaultHost;
        InetAddress bind;
        try {
            bind = InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(
                    "NetApprox: cannot resolve "
                            + host
                            + " (set "
                            + style.key(BIND_ADDRESS)
                            + " to a numeric address)",
                    e);
        }
        AtpConfig.Builder atp =
                ApproxTransportConfig.defaultAtp()
                        .bindAddress(bind.getHostAddress())
                        .bindPort(0)
                        .lineRateBps(lineRateBps())
                        .mode(mode())
                        .peerDeathTimeout(peerDeathTimeout())
                        .recvBufferBytes(receiveWindowBytes());
        int[] dscp = dscp();
        if (dscp != null) {
            atp.dscpByClass(dscp);
        }
        if (faultDropOutgoing() > 0) {
            atp.faultInjection(faultDropOutgoing(), 0.0, faultSeed());
        }
        ControlConfig.Builder ctl =
                ControlConfig.builder()
                        .bindAddress(bind)
                        .port(controlPort())
                        .connectTimeout(connectTimeout());
        if (context.requestTimeout != null) {
            ctl.requestTimeout(context.requestTimeout);
        }
        if (context.endpointId != null) {
            ctl.endpointId(context.endpointId);
        }
        if (authSecret() != null) {
            ctl.authSecret(authSecret());
        } else if (context.defaultSecret != null) {
            ctl.authSecret(context.defaultSecret);
        }
        ApproxTransportConfig.Builder t =
                ApproxTransportConfig.builder()
                        .atp(atp.build())
                        .control(ctl.build())
                        .serverEnabled(context.serverEnabled)
                        .dataPlane(dataPlane())
                        .tcpSendPolicy(tcpSendPolicy())
                        .udpProbeTimeout(udpProbeTimeout())
                        .serveThreads(serveThreads())
                        .startBeforeAccept(startBeforeAccept())
                        .maxPushedJobs(maxPushedJobs())
                        .maxPushedMessages(maxPushedMessages());
        if (context.reportTimeout != null) {
            t.reportTimeout(context.reportTimeout);
        }
        return t.build();
    }

    /**
     * Every option's value as {@code key=value} in the tables' order (the secret hidden): equal for
     * equal options, for logs and for telling whether two configurations can share a transport.
     */
    public String canonical() {
        StringJoiner j = new StringJoiner(", ", "{", "}");
        for (Option o : ALL) {
            Object v = value(o);
            j.add(style.key(o) + "=" + (v == null ? "(unset)" : o.format(style, v)));
        }
        return j.toString();
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof TransportOptions t) || t.style != style) {
            return false;
        }
        for (Option o : ALL) {
            if (!Objects.deepEquals(value(o), t.value(o))) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = style.hashCode();
        for (Option o : ALL) {
            Object v = value(o);
            h = 31 * h + (v instanceof int[] a ? Arrays.hashCode(a) : Objects.hashCode(v));
        }
        return h;
    }

    @Override
    public String toString() {
        return "TransportOptions" + canonical();
    }

    // ---- parsing ----------------------------------------------------------------------------

    private static final Pattern IPV4 = Pattern.compile("[0-9]{1,3}(\\.[0-9]{1,3}){3}");

    private static Object parseValue(Style style, Option o, String key, String v) {
        Function<Throwable, InvalidOptionException> bad =
                cause ->
                        new InvalidOptionException(
                                key,
                                o.kind == Kind.SECRET ? "(hidden)" : v,
                                o.expected(style),
                                cause);
        switch (o.kind) {
            case BOOLEAN -> {
                return OptionValues.bool(key, v);
            }
            case INTEGER -> {
                return OptionValues.integer(key, v, o.min, o.max);
            }
            case DECIMAL -> {
                double d;
                try {
                    d = Double.parseDouble(v);
                } catch (NumberFormatException e) {
                    throw bad.apply(e);
                }
                if (!(d >= 0 && d < 1)) {
                    throw bad.apply(null);
                }
                return d;
            }
            case CHOICE -> {
                try {
                    return o.choice.apply(v);
                } catch (IllegalArgumentException e) {
                    throw bad.apply(e);
                }
            }
            case DURATION -> {
                Duration d =
                        style == Style.FLINK
                                ? flinkDuration(v, bad)
                                : Duration.ofMillis(integer(v, bad));
                if (d.isNegative()
                        || d.compareTo(Duration.ofMillis(o.min)) < 0
                        || d.compareTo(Duration.ofMillis(o.max)) > 0) {
                    throw bad.apply(null);
                }
                return d;
            }
            case BYTES -> {
                long b = style == Style.FLINK ? flinkMemory(v, bad) : integer(v, bad);
                if (b < o.min || b > o.max) {
                    throw bad.apply(null);
                }
                return b;
            }
            case ADDRESS -> {
                if (v.isEmpty() || !(IPV4.matcher(v).matches() || v.contains(":"))) {
                    throw bad.apply(null);
                }
                try {
                    // numeric: no lookup
                    return InetAddress.getByName(v).getHostAddress();
                } catch (UnknownHostException | SecurityException e) {
                    throw bad.apply(e);
                }
            }
            case DSCP -> {
                String[] parts = v.split(",", -1);
                if (parts.length != 8) {
                    throw bad.apply(null);
                }
                int[] d = new int[8];
                for (int i = 0; i < 8; i++) {
                    try {
                        d[i] = Integer.parseInt(parts[i].trim());
                    } catch (NumberFormatException e) {
                        throw bad.apply(e);
                    }
                    if (d[i] < 0 || d[i] > 63) {
                        throw bad.apply(null);
                    }
                }
                return d;
            }
            case SECRET -> {
                if (v.getBytes(StandardCharsets.UTF_8).length < ControlConfig.MIN_SECRET_BYTES) {
                    throw bad.apply(null);
                }
                return v;
            }
            default -> throw new AssertionError(o.kind);
        }
    }

    private static long integer(String v, Function<Throwable, InvalidOptionException> bad) {
        try {
            return Long.parseLong(v.replace("_", ""));
        } catch (NumberFormatException e) {
            throw bad.apply(e);
        }
    }

    private static final Pattern NUMBER_UNIT = Pattern.compile("([0-9]+)\\s*([^0-9\\s].*)?");

    /**
     * Flink's duration syntax ({@code TimeUtils.parseDuration}): an ISO-8601 duration, or a
     * non-negative integer with an optional unit (none: milliseconds).
     */
    private static Duration flinkDuration(
            String v, Function<Throwable, InvalidOptionException> bad) {
        if (v.startsWith("P") || v.startsWith("p")) {
            try {
                return Duration.parse(v);
            } catch (DateTimeParseException e) {
                throw bad.apply(e);
            }
        }
        Matcher m = NUMBER_UNIT.matcher(v);
        if (!m.matches()) {
            throw bad.apply(null);
        }
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw bad.apply(e);
        }
        String unit = m.group(2) == null ? "ms" : m.group(2).trim().toLowerCase(Locale.ROOT);
        try {
            return switch (unit) {
                case "d", "day", "days" -> Duration.ofDays(n);
                case "h", "hour", "hours" -> Duration.ofHours(n);
                case "min", "m", "minute", "minutes" -> Duration.ofMinutes(n);
                case "s", "sec", "secs", "second", "seconds" -> Duration.ofSeconds(n);
                case "ms", "milli", "millis", "millisecond", "milliseconds" -> Duration.ofMillis(n);
                case "µs", "micro", "micros", "microsecond", "microseconds" ->
                        Duration.ofNanos(Math.multiplyExact(n, 1000L));
                case "ns", "nano", "nanos", "nanosecond", "nanoseconds" -> Duration.ofNanos(n);
                default -> throw bad.apply(null);
            };
        } catch (ArithmeticException e) {
            throw bad.apply(e);
        }
    }

    /** Flink's memory size syntax ({@code MemorySize.parse}): an integer, binary units. */
    private static long flinkMemory(String v, Function<Throwable, InvalidOptionException> bad) {
        Matcher m = NUMBER_UNIT.matcher(v);
        if (!m.matches()) {
            throw bad.apply(null);
        }
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw bad.apply(e);
        }
        String unit = m.group(2) == null ? "b" : m.group(2).trim().toLowerCase(Locale.ROOT);
        int shift =
                switch (unit) {
                    case "b", "bytes" -> 0;
                    case "k", "kb", "kibibytes" -> 10;
                    case "m", "mb", "mebibytes" -> 20;
                    case "g", "gb", "gibibytes" -> 30;
                    case "t", "tb", "tebibytes" -> 40;
                    default -> throw bad.apply(null);
                };
        if (n > (Long.MAX_VALUE >> shift)) {
            throw bad.apply(null);
        }
        return n << shift;
    }

    /** A duration as Flink writes it: its largest exact unit ({@code 2 s}, {@code 500 ms}). */
    static String flinkDuration(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0";
        }
        long[] sizes = {86_400_000L, 3_600_000L, 60_000L, 1000L, 1L};
        String[] units = {"d", "h", "min", "s", "ms"};
        for (int i = 0; i < sizes.length; i++) {
            if (ms % sizes[i] == 0) {
                return (ms / sizes[i]) + " " + units[i];
            }
        }
        throw new AssertionError(ms);
    }

    /** A byte size as Flink writes it: its largest exact binary unit ({@code 64 mb}). */
    static String flinkMemory(long bytes) {
        String[] units = {"tb", "gb", "mb", "kb"};
        int[] shifts = {40, 30, 20, 10};
        for (int i = 0; i < units.length; i++) {
            if (bytes != 0 && bytes % (1L << shifts[i]) == 0) {
                return (bytes >> shifts[i]) + " " + units[i];
            }
        }
        return bytes + " bytes";
    }

    private static String join(int[] values) {
        StringJoiner j = new StringJoiner(",");
        for (int v : values) {
            j.add(String.valueOf(v));
        }
        return j.toString();
    }

    // ---- documentation ----------------------------------------------------------------------

    /**
     * The configuration-table rows of {@code style} ({@code | `key` | default | description |}),
     * one per option, as README.md and the framework docs hold them.
     */
    public static List<String> markdownRows(Style style) {
        return markdownRows(style, false);
    }

    /**
     * {@link #markdownRows(Style)}, without the {@link Option#servingSide()} options when {@code
     * clientOnly} (the table of a process that only requests data).
     */
    public static List<String> markdownRows(Style style, boolean clientOnly) {
        List<String> rows = new ArrayList<>();
        for (Option o : ALL) {
            if (clientOnly && o.servingSide()) {
                continue;
            }
            rows.add(
                    "| `"
                            + style.key(o)
                            + "` | "
                            + o.defaultText(style)
                            + " | "
                            + o.description(style)
                            + accepts(style, o)
                            + " |");
        }
        return rows;
    }

    /** The accepted values as the tables add them to the description. */
    private static String accepts(Style style, Option o) {
        boolean flink = style == Style.FLINK;
        return switch (o.kind) {
            case DURATION ->
                    flink
                            ? "; "
                                    + flinkDuration(Duration.ofMillis(o.min))
                                    + " to "
                                    + flinkDuration(Duration.ofMillis(o.max))
                            : "; milliseconds, [" + o.min + ", " + o.max + "]";
            case BYTES ->
                    flink
                            ? "; " + flinkMemory(o.min) + " to " + flinkMemory(o.max)
                            : "; bytes, [" + o.min + ", " + o.max + "]";
            case INTEGER -> o.min == Long.MIN_VALUE ? "" : "; [" + o.min + ", " + o.max + "]";
            default -> "";
        };
    }

    /**
     * Prints {@link #markdownRows} of the style named by the argument (spark, flink, kafka: the
     * Kafka consumer's table, without the serving-side options).
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: TransportOptions spark|flink|kafka");
            System.exit(2);
        }
        Style s = Style.valueOf(args[0].toUpperCase(Locale.ROOT));
        markdownRows(s, s == Style.KAFKA).forEach(System.out::println);
    }
}
