package io.netapprox.core.sampling;

import static org.junit.jupiter.api.Assertions.*;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * An {@link ExactSum} written and read back is the same sum (value, rounding bound, non-finite
 * state, and it merges on exactly); bytes from the network that are not a sum are refused.
 */
class ExactSumWireTest {

    private static byte[] bytes(ExactSum s) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        s.write(new DataOutputStream(b));
        return b.toByteArray();
    }

    private static ExactSum read(byte[] b) throws IOException {
        return ExactSum.read(new DataInputStream(new ByteArrayInputStream(b)));
    }

    @Test
    void roundTripKeepsTheExactSumAndItsBound() throws IOException {
        SplittableRandom r = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            ExactSum a = new ExactSum();
            ExactSum b = new ExactSum();
            ExactSum whole = new ExactSum();
            int n = 1 + r.nextInt(2000);
            for (int i = 0; i < n; i++) {
                // mixed signs and magnitudes: a naive sum loses bits, the expansion keeps several
                double x = (r.nextDouble() - 0.5) * Math.pow(10, r.nextInt(-20, 20));
                (i % 2 == 0 ? a : b).add(x);
                whole.add(x);
            }
            ExactSum back = read(bytes(a));
            assertEquals(a.value(), back.value());
            assertEquals(a.count(), back.count());
            assertEquals(a.roundingBound(), back.roundingBound());
            assertEquals(whole.value(), back.merge(read(bytes(b))).value(), "trial " + trial);
        }
    }

    @Test
    void nonFiniteStateTravels() throws IOException {
        ExactSum nan = new ExactSum().add(1).add(Double.NaN);
        assertTrue(Double.isNaN(read(bytes(nan)).value()));
        ExactSum inf = new ExactSum().add(1).add(Double.POSITIVE_INFINITY);
        assertEquals(Double.POSITIVE_INFINITY, read(bytes(inf)).value());
        ExactSum over = new ExactSum().add(Double.MAX_VALUE).add(Double.MAX_VALUE);
        assertEquals(Double.POSITIVE_INFINITY, read(bytes(over)).value());
        assertFalse(read(bytes(over)).isFinite());
    }

    @Test
    void corruptBytesAreRefused() throws IOException {
        byte[] good = bytes(new ExactSum().add(1.5).add(1e-30));
        assertEquals(1.5, read(good).value());
        byte[] negativeCount = good.clone();
        negativeCount[0] = (byte) 0x80;
        assertThrows(IOException.class, () -> read(negativeCount));
        byte[] badFlags = good.clone();
        badFlags[16] = (byte) 0x40;
        assertThrows(IOException.class, () -> read(badFlags));
        byte[] tooManyPartials = good.clone();
        tooManyPartials[17] = (byte) 200;
        assertThrows(IOException.class, () -> read(tooManyPartials));
        byte[] nanPartial = good.clone();
        long bits = Double.doubleToRawLongBits(Double.NaN);
        for (int i = 0; i < 8; i++) {
            nanPartial[18 + i] = (byte) (bits >>> (56 - 8 * i));
        }
        assertThrows(IOException.class, () -> read(nanPartial));
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 1);
        assertThrows(IOException.class, () -> read(truncated));
    }

    @Test
    void overlappingPartialsAreMadeAValidExpansion() throws IOException {
        // a forged sum with partials 1, 1, 1: read adds them again, so the value is their sum
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(b);
        out.writeLong(3);
        out.writeDouble(3);
        out.writeByte(0);
        out.writeByte(3);
        for (int i = 0; i < 3; i++) {
            out.writeDouble(1.0);
        }
        assertEquals(3.0, read(b.toByteArray()).value());
    }
}
