package io.netapprox.flink;

import io.netapprox.core.transport.InvalidOptionException;
import io.netapprox.core.transport.OptionValues;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.io.Serializable;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
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
 * IllegalArgumentException} naming the key, the value and what is accepted (a bad value:
 * approx-core's {@link InvalidOptionException}, as in Spark and Kafka). Travels to the TaskManagers
 * inside the operators.
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
    private final int concurrentPulls;
    private final boolean pushTail;
    private final Duration pushWait;
    private final String authSecret;
    private final boolean authSecretGenerated;
    private final TransportOptions transport;

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
        // every transport key: approx-core's one definition, from the strings Flink holds
        // (a typed value set through ApproxOptions.TRANSPORT is written back in Flink's syntax)
        transport = TransportOptions.parse(Style.FLINK, c.toMap());
        String secret = transport.authSecret();
        if (secret != null) {
            authSecret = secret;
            authSecretGenerated = false;
        } else {
            authSecret = generatedSecret;
            authSecretGenerated = true;
        }
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

    /** Flink's typed parse of the value, its failure named as approx-core names bad values. */
    private static <T> T get(ReadableConfig c, ConfigOption<T> option) {
        try {
            return c.get(option);
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException(
                    option.key(),
                    c.toMap().get(option.key()),
                    "a valid " + typeName(option) + " (" + rootMessage(e) + ")",
                    e);
        }
    }

    private static String typeName(ConfigOption<?> option) {
        Object d = option.defaultValue();
        if (d instanceof Duration) {
            return "duration";
        }
        if (d instanceof MemorySize) {
            return "memory size";
        }
        if (d instanceof Boolean) {
            return "boolean";
        }
        return d instanceof Number ? "number" : "value";
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
        OptionValues.check(
                ok,
                option.key(),
                c.toMap().getOrDefault(option.key(), String.valueOf(c.get(option))),
                expected);
    }

    private static <E extends Enum<E>> E parseEnum(
            Class<E> type, ReadableConfig c, ConfigOption<String> option, String expected) {
        return OptionValues.choice(option.key(), get(c, option), type, expected);
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

    /**
     * The transport options ({@code approx.dataPlane}, {@code approx.lineRateBps}, ...;
     * approx-core's {@link TransportOptions}).
     */
    public TransportOptions transport() {
        return transport;
    }

    /** The secret of the job's control sessions: {@code approx.authSecret}, else the job's own. */
    public String authSecret() {
        return authSecret;
    }

    /** True when no {@code approx.authSecret} was configured and a per-job secret was generated. */
    public boolean authSecretGenerated() {
        return authSecretGenerated;
    }
}
