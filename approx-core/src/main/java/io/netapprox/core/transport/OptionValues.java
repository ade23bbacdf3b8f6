package io.netapprox.core.transport;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The one parser of option values, for the transport options ({@link TransportOptions}) and each
 * framework's own keys ({@code spark.approx.confidence}, {@code approx.epochTimeout}, {@code
 * approx.window.ms}): every bad value is an {@link InvalidOptionException} naming the key, the
 * value and the accepted range, worded the same in all three integrations. Values are trimmed.
 */
public final class OptionValues {
    private OptionValues() {}

    /** {@code true} or {@code false}, any case. */
    public static boolean bool(String key, String raw) {
        String v = raw.trim();
        if (v.equalsIgnoreCase("true")) {
            return true;
        }
        if (v.equalsIgnoreCase("false")) {
            return false;
        }
        throw new InvalidOptionException(key, raw, "true or false");
    }

    /** An integer in [min, max]; {@code _} separators allowed ({@code 1_000_000}). */
    public static long integer(String key, String raw, long min, long max) {
        String expected = "an integer in [" + min + ", " + max + "]";
        long x;
        try {
            x = Long.parseLong(raw.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new InvalidOptionException(key, raw, expected, e);
        }
        check(x >= min && x <= max, key, raw, expected);
        return x;
    }

    /**
     * A finite number in the interval from {@code min} to {@code max}, each end open or closed (the
     * message writes it so: {@code a number in (0, 1)}).
     */
    public static double number(
            String key, String raw, double min, boolean minOpen, double max, boolean maxOpen) {
        String expected =
                "a number in "
                        + (minOpen ? "(" : "[")
                        + text(min)
                        + ", "
                        + text(max)
                        + (maxOpen ? ")" : "]");
        double d;
        try {
            d = Double.parseDouble(raw.trim());
        } catch (NumberFormatException e) {
            throw new InvalidOptionException(key, raw, expected, e);
        }
        boolean above = minOpen ? d > min : d >= min;
        boolean below = maxOpen ? d < max : d <= max;
        // NaN fails both comparisons
        check(above && below && Double.isFinite(d), key, raw, expected);
        return d;
    }

    /** One of {@code type}'s constants, any case; the message lists them in lower case. */
    public static <E extends Enum<E>> E choice(String key, String raw, Class<E> type) {
        String expected =
                "one of "
                        + Arrays.stream(type.getEnumConstants())
                                .map(c -> c.name().toLowerCase(Locale.ROOT))
                                .collect(Collectors.joining(", "));
        return choice(key, raw, type, expected);
    }

    /** {@link #choice(String, String, Class)} with the message's own wording of the choices. */
    public static <E extends Enum<E>> E choice(
            String key, String raw, Class<E> type, String expected) {
        try {
            return Enum.valueOf(type, raw.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidOptionException(key, raw, expected, e);
        }
    }

    /**
     * A duration written with its unit, {@code 2s}, {@code 1.5 seconds}, {@code 500ms}, {@code 500
     * milliseconds} (any case), in [min, max].
     */
    public static java.time.Duration duration(
            String key, String raw, java.time.Duration min, java.time.Duration max) {
        String expected =
                "a duration with its unit (e.g. 2s, 1.5 seconds, 500ms) in ["
                        + min.toMillis()
                        + " ms, "
                        + max.toMillis()
                        + " ms]";
        String v = raw.trim().toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < v.length() && (Character.isDigit(v.charAt(i)) || v.charAt(i) == '.')) {
            i++;
        }
        String unit = v.substring(i).trim();
        double perUnit =
                switch (unit) {
                    case "ms", "millisecond", "milliseconds" -> 1e6;
                    case "s", "second", "seconds" -> 1e9;
                    default -> throw new InvalidOptionException(key, raw, expected);
                };
        double nanos;
        try {
            nanos = Double.parseDouble(v.substring(0, i)) * perUnit;
        } catch (NumberFormatException e) {
            throw new InvalidOptionException(key, raw, expected, e);
        }
        check(nanos >= min.toNanos() && nanos <= max.toNanos(), key, raw, expected);
        return java.time.Duration.ofNanos((long) nanos);
    }

    /** Fails naming the key, the value and {@code expected} unless {@code ok}. */
    public static void check(boolean ok, String key, String raw, String expected) {
        if (!ok) {
            throw new InvalidOptionException(key, raw, expected);
        }
    }

    private static String text(double d) {
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        return d == Math.rint(d) && Math.abs(d) < 1e15
                ? String.valueOf((long) d)
                : String.valueOf(d);
    }
}
