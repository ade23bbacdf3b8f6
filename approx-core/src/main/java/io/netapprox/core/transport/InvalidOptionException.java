package io.netapprox.core.transport;

/**
 * A bad value of one configuration option, in any framework: names the key as the user wrote it,
 * the value and what is accepted ({@code invalid NetApprox configuration approx.dscp=1,2,3:
 * expected 8 comma-separated integers in [0, 63]}). Thrown by {@link OptionValues} and {@link
 * TransportOptions}; Kafka rethrows it as its {@code ConfigException}.
 */
public final class InvalidOptionException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    private final String key;
    private final String value;
    private final String expected;

    /**
     * @param key the full key, e.g. {@code spark.approx.dscp}
     * @param value the value as written ({@code (hidden)} for a secret)
     * @param expected what the option accepts, e.g. {@code an integer in [1, 65536]}
     */
    public InvalidOptionException(String key, String value, String expected, Throwable cause) {
        super(
                "invalid NetApprox configuration " + key + "=" + value + ": expected " + expected,
                cause);
        this.key = key;
        this.value = value;
        this.expected = expected;
    }

    public InvalidOptionException(String key, String value, String expected) {
        this(key, value, expected, null);
    }

    /** The full key, e.g. {@code spark.approx.dscp}. */
    public String key() {
        return key;
    }

    /** The value as written ({@code (hidden)} for a secret). */
    public String value() {
        return value;
    }

    /** What the option accepts. */
    public String expected() {
        return expected;
    }
}
