package io.netapprox.kafka;

import io.netapprox.core.transport.InvalidOptionException;
import io.netapprox.core.transport.OptionValues;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import io.netapprox.kafka.relay.SecretFile;
import io.netapprox.kafka.relay.Stratification;
import io.netapprox.kafka.relay.StreamSpec;
import io.netapprox.kafka.relay.ValueSource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.common.config.ConfigException;

/**
 * The {@code approx.*} keys of an {@link ApproxKafkaConsumer}, parsed and validated: an unknown
 * {@code approx.} key or a bad value is a {@link ConfigException} naming it. Every other key is the
 * Kafka consumer's own. The table in {@code approx-kafka/README.md} documents each key.
 */
public final class ApproxConsumerConfig {
    public static final String PREFIX = "approx.";
    public static final String ENABLE = "approx.enable";
    public static final String EMAX = "approx.emax";
    public static final String CONFIDENCE = "approx.confidence";
    public static final String WINDOW_MS = "approx.window.ms";
    public static final String WINDOW_GRACE_MS = "approx.window.grace.ms";
    public static final String STRATUM = "approx.stratum";
    public static final String CV = "approx.cv";
    public static final String VALUE = "approx.value";
    public static final String SEED = "approx.seed";
    public static final String RELAY_PORT = "approx.relay.port";
    public static final String RELAY_FALLBACK = "approx.relay.fallback";
    public static final String RELAY_PULL_WAIT_MS = "approx.relay.pull.wait.ms";
    public static final String HEADROOM = "approx.headroom";
    public static final String AUTH_SECRET = "approx.auth.secret";
    public static final String AUTH_SECRET_FILE = "approx.auth.secret.file";
    public static final String RELAY_DELEGATION = "approx.relay.delegation";

    private static final Pattern GROUP_EMAX = Pattern.compile("approx\\.group\\.(.+)\\.emax");
    private static final Pattern RELAY_ADDRESS =
            Pattern.compile("approx\\.relay\\.address\\.(\\d+)");

    /** Which Kafka identity the consumer hands its relays. */
    public enum Delegation {
        /** none: a relay with authorization=kafka refuses the stream */
        NONE,
        /**
         * a delegation token of the consumer's own principal (its login token, or one created with
         * its credentials): the relays read as that principal
         */
        TOKEN
    }

    /** What a consumer does when the relay of a partition cannot be reached or dies. */
    public enum Fallback {
        /** poll() throws a {@link io.netapprox.kafka.relay.RelayException}: no silent change */
        ERROR,
        /**
         * the partition is read exactly by a plain fetch (weight 1) until the consumer is
         * reassigned
         */
        FETCH
    }

    private final boolean enabled;
    private final double emax;
    private final Map<String, Double> groupEmax;
    private final double confidence;
    private final long windowMs;
    private final long graceMs;
    private final Stratification stratification;
    private final double cv;
    private final ValueSource value;
    private final long seed;
    private final int relayPort;
    private final Map<Integer, String> relayAddresses;
    private final Delegation delegation;
    private final Fallback fallback;
    private final long pullWaitMs;
    private final double headroom;
    private final byte[] authSecret;
    private final TransportOptions transport;
    private final Map<String, Object> kafkaProps;

    private ApproxConsumerConfig(Map<String, ?> props) {
        Map<String, Object> approx = new LinkedHashMap<>();
        Map<String, Object> kafka = new HashMap<>();
        props.forEach(
                (k, v) -> {
                    if (k.startsWith(PREFIX)) {
                        approx.put(k, v);
                    } else {
                        kafka.put(k, v);
                    }
                });
        this.kafkaProps = kafka;
        Map<String, Double> groups = new HashMap<>();
        Map<Integer, String> relays = new HashMap<>();
        for (Map.Entry<String, Object> e : approx.entrySet()) {
            String k = e.getKey();
            Matcher g = GROUP_EMAX.matcher(k);
            Matcher a = RELAY_ADDRESS.matcher(k);
            if (g.matches()) {
                groups.put(g.group(1), bound(k, e.getValue()));
            } else if (a.matches()) {
                relays.put(Integer.parseInt(a.group(1)), address(k, e.getValue()));
            } else if (TransportOptions.isKey(Style.KAFKA, k)) {
                if (servingSide(k)) {
                    throw new ConfigException(
                            k,
                            e.getValue(),
                            "a consumer only requests data: this transport option acts on the"
                                    + " sending side, the relay's (see its options in"
                                    + " docs/kafka.md)");
                }
            } else if (!known(k)) {
                throw new ConfigException(
                        k,
                        e.getValue(),
                        "unknown NetApprox key (see approx-kafka/README.md for the keys)");
            }
        }
        // every transport key: approx-core's one definition
        Map<String, String> strings = new HashMap<>();
        approx.forEach((k, v) -> strings.put(k, String.valueOf(v)));
        this.transport = TransportOptions.parse(Style.KAFKA, strings);
        this.enabled = bool(ENABLE, approx.getOrDefault(ENABLE, "false"));
        this.emax = bound(EMAX, approx.getOrDefault(EMAX, "0.05"));
        this.groupEmax = Map.copyOf(groups);
        this.confidence = bound(CONFIDENCE, approx.getOrDefault(CONFIDENCE, "0.95"));
        this.windowMs =
                longIn(WINDOW_MS, approx.getOrDefault(WINDOW_MS, "60000"), 1, Long.MAX_VALUE / 4);
        this.graceMs =
                longIn(
                        WINDOW_GRACE_MS,
                        approx.getOrDefault(WINDOW_GRACE_MS, "1000"),
                        0,
                        86_400_000);
        this.stratification =
                Stratification.parse(STRATUM, string(approx.getOrDefault(STRATUM, "partition")));
        this.cv = positive(CV, approx.getOrDefault(CV, "1.5"));
        this.value = ValueSource.parse(VALUE, string(approx.getOrDefault(VALUE, "value")));
        Object s = approx.get(SEED);
        this.seed =
                s == null
                        ? new SecureRandom().nextLong()
                        : longIn(SEED, s, Long.MIN_VALUE, Long.MAX_VALUE);
        this.relayPort =
                (int) longIn(RELAY_PORT, approx.getOrDefault(RELAY_PORT, "7390"), 1, 65535);
        this.relayAddresses = Map.copyOf(relays);
        this.fallback = fallback(string(approx.getOrDefault(RELAY_FALLBACK, "error")));
        this.pullWaitMs =
                longIn(
                        RELAY_PULL_WAIT_MS,
                        approx.getOrDefault(RELAY_PULL_WAIT_MS, "5000"),
                        10,
                        600_000);
        this.headroom =
                OptionValues.number(
                        HEADROOM, string(approx.getOrDefault(HEADROOM, "1.0")), 1, false, 4, false);
        this.authSecret = secret(transport.authSecret(), approx.get(AUTH_SECRET_FILE));
        this.delegation = delegation(string(approx.getOrDefault(RELAY_DELEGATION, "none")), kafka);
    }

    private static Delegation delegation(String s, Map<String, Object> kafka) {
        Delegation d = OptionValues.choice(RELAY_DELEGATION, s, Delegation.class);
        if (d == Delegation.TOKEN) {
            // Kafka creates and accepts delegation tokens only over SASL
            String protocol = string(kafka.getOrDefault("security.protocol", "PLAINTEXT"));
            if (!protocol.equalsIgnoreCase("SASL_PLAINTEXT")
                    && !protocol.equalsIgnoreCase("SASL_SSL")) {
                throw new ConfigException(
                        RELAY_DELEGATION,
                        s,
                        "a delegation token needs security.protocol SASL_PLAINTEXT or SASL_SSL"
                                + " (got "
                                + protocol
                                + ")");
            }
        }
        return d;
    }

    /**
     * The shared secret of the relays' control plane, from the key or the file; null if neither.
     */
    private static byte[] secret(String literal, Object file) {
        if (literal != null && file != null) {
            throw new ConfigException(
                    AUTH_SECRET_FILE,
                    file,
                    "set " + AUTH_SECRET + " or " + AUTH_SECRET_FILE + ", not both");
        }
        byte[] s;
        String key;
        if (literal != null) {
            key = AUTH_SECRET;
            // at least 16 bytes: checked by TransportOptions
            s = literal.getBytes(StandardCharsets.UTF_8);
        } else if (file != null) {
            key = AUTH_SECRET_FILE;
            try {
                s = SecretFile.read(Path.of(string(file)));
            } catch (IOException | IllegalArgumentException e) {
                throw new ConfigException(AUTH_SECRET_FILE, file, e.getMessage());
            }
        } else {
            return null;
        }
        if (s.length < 16) {
            // never echo the secret itself
            throw new ConfigException(
                    key + " must be at least 16 bytes long (got " + s.length + ")");
        }
        return s;
    }

    private static boolean known(String k) {
        return switch (k) {
            case ENABLE,
                    EMAX,
                    CONFIDENCE,
                    WINDOW_MS,
                    WINDOW_GRACE_MS,
                    STRATUM,
                    CV,
                    VALUE,
                    SEED,
                    RELAY_PORT,
                    RELAY_FALLBACK,
                    RELAY_PULL_WAIT_MS,
                    HEADROOM,
                    AUTH_SECRET,
                    AUTH_SECRET_FILE,
                    RELAY_DELEGATION ->
                    true;
            default -> false;
        };
    }

    private static boolean servingSide(String key) {
        return TransportOptions.ALL.stream()
                .anyMatch(o -> o.servingSide() && Style.KAFKA.key(o).equals(key));
    }

    public static ApproxConsumerConfig parse(Map<String, ?> props) {
        try {
            return new ApproxConsumerConfig(props);
        } catch (InvalidOptionException e) {
            // Kafka's own exception type, with approx-core's wording of the accepted range
            throw new ConfigException(e.key(), e.value(), "expected " + e.expected());
        }
    }

    public static ApproxConsumerConfig parse(Properties props) {
        Map<String, Object> m = new HashMap<>();
        props.stringPropertyNames().forEach(k -> m.put(k, props.getProperty(k)));
        props.forEach((k, v) -> m.put(String.valueOf(k), v));
        return parse(m);
    }

    public boolean enabled() {
        return enabled;
    }

    /** The consumer's properties without the {@code approx.*} keys (for the Kafka consumers). */
    public Map<String, Object> kafkaProperties() {
        return new HashMap<>(kafkaProps);
    }

    /** The sampling the relay applies, with the consumer's isolation level. */
    public StreamSpec streamSpec(boolean readCommitted) {
        return new StreamSpec(
                emax,
                groupEmax,
                confidence,
                cv,
                headroom,
                windowMs,
                graceMs,
                stratification,
                readCommitted,
                seed,
                value);
    }

    public double confidence() {
        return confidence;
    }

    public long windowMs() {
        return windowMs;
    }

    public int relayPort() {
        return relayPort;
    }

    /** The relay beside broker {@code nodeId}: the configured address, else the broker's host. */
    public String relayAddress(int nodeId, String brokerHost) {
        String a = relayAddresses.get(nodeId);
        return a != null ? a : brokerHost + ":" + relayPort;
    }

    public Fallback fallback() {
        return fallback;
    }

    public long pullWaitMs() {
        return pullWaitMs;
    }

    /** Which Kafka identity the consumer's relay streams carry. */
    public Delegation delegation() {
        return delegation;
    }

    /**
     * The transport options of the consumer's relay connections ({@code approx.data.plane}, {@code
     * approx.udp.probe.timeout.ms}, {@code approx.dscp}, {@code approx.line.rate.bps}, ...;
     * approx-core's {@link TransportOptions}; the relay's own {@code --data-plane} must allow the
     * data plane).
     */
    public TransportOptions transport() {
        return transport;
    }

    /** The relays' shared secret (a copy), or null when the relays do not authenticate. */
    public byte[] authSecret() {
        return authSecret == null ? null : authSecret.clone();
    }

    private static String string(Object v) {
        return String.valueOf(v).trim();
    }

    // the consumer's own keys, parsed by approx-core's one value parser

    private static boolean bool(String k, Object v) {
        return OptionValues.bool(k, string(v));
    }

    /** A number in (0, 1): an error bound, a confidence. */
    private static double bound(String k, Object v) {
        return OptionValues.number(k, string(v), 0, true, 1, true);
    }

    private static double positive(String k, Object v) {
        return OptionValues.number(k, string(v), 0, true, Double.POSITIVE_INFINITY, true);
    }

    private static long longIn(String k, Object v, long min, long max) {
        return OptionValues.integer(k, string(v), min, max);
    }

    private static String address(String k, Object v) {
        String s = string(v);
        int colon = s.lastIndexOf(':');
        if (colon <= 0) {
            throw new ConfigException(k, v, "expected host:port");
        }
        longIn(k, s.substring(colon + 1), 1, 65535);
        return s;
    }

    private static Fallback fallback(String s) {
        return OptionValues.choice(RELAY_FALLBACK, s, Fallback.class);
    }
}
