package io.netapprox.core.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class TargetTest {

    @Test
    void decimalMsrsGetTheTargetTheirDecimalValueMeans() {
        assertEquals(7.000000000000001, 0.07 * 100); // why the tolerance exists
        assertEquals(8, Target.of(0.8, 10));
        assertEquals(3, Target.of(0.3, 10));
        assertEquals(7, Target.of(0.07, 100));
        assertEquals(57, Target.of(0.57, 100));
        assertEquals(1, Target.of(1.0 / 3, 3));
    }

    @Test
    void roundsUpAndStaysWithinTheGroup() {
        assertEquals(0, Target.of(0.0, 1000));
        assertEquals(1, Target.of(1e-6, 1000)); // any positive MSR asks for at least one message
        assertEquals(151, Target.of(0.5005, 300));
        assertEquals(1000, Target.of(1.0, 1000));
        assertEquals(999, Target.of(0.999, 1000));
        assertEquals(0, Target.of(0.5, 0));
        assertEquals(3_000_000_000L, Target.of(0.75, 4_000_000_000L));
        assertEquals(360, GroupSpec.of(7, 400, 0.9).target());
    }

    @Test
    void rejectsWhatIsNotAnMsrOrASize() {
        assertThrows(IllegalArgumentException.class, () -> Target.of(1.5, 10));
        assertThrows(IllegalArgumentException.class, () -> Target.of(-0.1, 10));
        assertThrows(IllegalArgumentException.class, () -> Target.of(Double.NaN, 10));
        assertThrows(IllegalArgumentException.class, () -> Target.of(0.5, -1L));
    }
}
