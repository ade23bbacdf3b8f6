package io.netapprox.kafka.relay;

import java.nio.ByteBuffer;

/**
 * A number written as decimal text (ASCII or UTF-8: {@code -12}, {@code 3.25}, {@code 1.0E-5}, as
 * {@link Double#toString} and most producers write them), read from a view of the fetched batch
 * without copying it. For planning sample sizes, not for answers: digits beyond the 18th are
 * dropped, so the value may differ from {@link Double#parseDouble} in its last bits. Anything else
 * - empty, other characters, NaN, infinities, hexadecimal, more than {@value #MAX_CHARS} characters
 * - is not a number ({@code NaN}).
 */
final class DecimalText {
    static final int MAX_CHARS = 64;

    private static final double[] POWERS = new double[23];

    static {
        double p = 1;
        for (int i = 0; i < POWERS.length; i++) {
            POWERS[i] = p;
            p *= 10;
        }
    }

    private DecimalText() {}

    /** The number the bytes spell, or NaN; {@code null} is NaN. The buffer's position is kept. */
    static double parse(ByteBuffer text) {
        if (text == null) {
            return Double.NaN;
        }
        int i = text.position();
        int end = text.limit();
        while (i < end && isSpace(text.get(i))) {
            i++;
        }
        while (end > i && isSpace(text.get(end - 1))) {
            end--;
        }
        if (end - i == 0 || end - i > MAX_CHARS) {
            return Double.NaN;
        }
        boolean negative = false;
        byte b = text.get(i);
        if (b == '-' || b == '+') {
            negative = b == '-';
            i++;
        }
        long mantissa = 0;
        int digits = 0; // significant digits kept in the mantissa
        int exponent = 0; // of ten, for the digits kept
        boolean any = false;
        boolean point = false;
        for (; i < end; i++) {
            b = text.get(i);
            if (b >= '0' && b <= '9') {
                any = true;
                if (mantissa == 0 && b == '0') {
                    if (point) {
                        exponent--; // leading zeros after the point
                    }
                } else if (digits < 18) {
                    mantissa = mantissa * 10 + (b - '0');
                    digits++;
                    if (point) {
                        exponent--;
                    }
                } else if (!point) {
                    exponent++; // a dropped digit before the point
                }
            } else if (b == '.' && !point) {
                point = true;
            } else {
                break;
            }
        }
        if (!any) {
            return Double.NaN;
        }
        if (i < end) {
            if (b != 'e' && b != 'E') {
                return Double.NaN;
            }
            i++;
            boolean negativeExp = false;
            if (i < end && (text.get(i) == '-' || text.get(i) == '+')) {
                negativeExp = text.get(i) == '-';
                i++;
            }
            if (i == end) {
                return Double.NaN;
            }
            int e = 0;
            for (; i < end; i++) {
                b = text.get(i);
                if (b < '0' || b > '9') {
                    return Double.NaN;
                }
                e = Math.min(e * 10 + (b - '0'), 100_000);
            }
            exponent += negativeExp ? -e : e;
        }
        double v = mantissa;
        if (mantissa != 0 && exponent != 0) {
            if (exponent > 0 && exponent < POWERS.length) {
                v *= POWERS[exponent];
            } else if (exponent < 0 && -exponent < POWERS.length) {
                v /= POWERS[-exponent];
            } else {
                v *= Math.pow(10, exponent);
            }
        }
        if (Double.isInfinite(v)) {
            return Double.NaN;
        }
        return negative ? -v : v;
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }
}
