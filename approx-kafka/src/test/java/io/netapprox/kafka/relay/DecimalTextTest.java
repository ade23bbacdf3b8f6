package io.netapprox.kafka.relay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Decimal text read for planning: what producers write is read, anything else is NaN. */
class DecimalTextTest {
    private static double parse(String s) {
        return DecimalText.parse(ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)));
    }

    @Test
    void readsWhatDoubleToStringAndIntegersWrite() {
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 100_000; i++) {
            double v =
                    switch (i % 4) {
                        case 0 -> Math.exp(1.5 * rnd.nextGaussian());
                        case 1 -> rnd.nextDouble(-1e6, 1e6);
                        case 2 -> Math.scalb(rnd.nextDouble(), rnd.nextInt(-300, 300));
                        default -> rnd.nextLong(-1_000_000_000_000L, 1_000_000_000_000L);
                    };
            String text = i % 4 == 3 ? Long.toString((long) v) : Double.toString(v);
            double got = parse(text);
            assertEquals(v, got, Math.abs(v) * 1e-15, text);
        }
        assertEquals(12, parse(" 12\n"));
        assertEquals(-350, parse("-3.5e2"));
        assertEquals(7, parse("+7"));
        assertEquals(100_000, parse("1E5"));
        assertEquals(0.5, parse(".5"));
        assertEquals(5, parse("5."));
        assertEquals(0, parse("-0"), 0.0);
        assertEquals(1e-5, parse("0.00001"), 1e-20);
        assertEquals(123456789012345678e3, parse("123456789012345678901"), 1e6);
    }

    @Test
    void anythingElseIsNotANumber() {
        for (String s :
                new String[] {
                    "",
                    " ",
                    "abc",
                    "1.2.3",
                    "1e",
                    "1e+",
                    "-",
                    ".",
                    "NaN",
                    "Infinity",
                    "0x10",
                    "12,5",
                    "1 2",
                    "1e400",
                    "\u0661",
                    "1".repeat(DecimalText.MAX_CHARS + 1)
                }) {
            assertTrue(Double.isNaN(parse(s)), "'" + s + "'");
        }
        assertTrue(Double.isNaN(DecimalText.parse(null)));
    }

    @Test
    void readsAViewWithoutMovingIt() {
        ByteBuffer b = ByteBuffer.wrap("xx42.5yy".getBytes(StandardCharsets.US_ASCII));
        b.position(2).limit(6);
        ByteBuffer view = b.slice();
        assertEquals(42.5, DecimalText.parse(view));
        assertEquals(0, view.position());
        assertEquals(4, view.limit());
    }
}
