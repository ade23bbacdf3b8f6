package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class OptionValuesTest {
    private static InvalidOptionException rejects(String expected, Executable parse) {
        InvalidOptionException e = assertThrows(InvalidOptionException.class, parse);
        assertEquals("k.x", e.key());
        assertEquals(expected, e.expected());
        assertTrue(
                e.getMessage()
                        .startsWith(
                                "invalid NetApprox configuration k.x=" + e.value() + ": expected "),
                e.getMessage());
        return e;
    }

    @Test
    void booleansAreTrueOrFalseInAnyCase() {
        assertTrue(OptionValues.bool("k.x", " TRUE "));
        assertFalse(OptionValues.bool("k.x", "false"));
        InvalidOptionException e = rejects("true or false", () -> OptionValues.bool("k.x", "yes"));
        assertEquals("yes", e.value());
    }

    @Test
    void integersAreBoundedAtBothEnds() {
        assertEquals(1_000_000, OptionValues.integer("k.x", "1_000_000", 1, 1 << 20));
        assertEquals(1, OptionValues.integer("k.x", " 1", 1, 2));
        assertEquals(2, OptionValues.integer("k.x", "2", 1, 2));
        rejects("an integer in [1, 2]", () -> OptionValues.integer("k.x", "0", 1, 2));
        rejects("an integer in [1, 2]", () -> OptionValues.integer("k.x", "3", 1, 2));
        InvalidOptionException e =
                rejects("an integer in [1, 2]", () -> OptionValues.integer("k.x", "1.5", 1, 2));
        assertTrue(e.getCause() instanceof NumberFormatException);
        assertEquals(
                Long.MIN_VALUE,
                OptionValues.integer("k.x", "" + Long.MIN_VALUE, Long.MIN_VALUE, Long.MAX_VALUE));
    }

    @Test
    void numbersHonourOpenAndClosedEnds() {
        assertEquals(0.5, OptionValues.number("k.x", "0.5", 0, true, 1, true));
        assertEquals(1.0, OptionValues.number("k.x", "1", 1, false, 4, false));
        assertEquals(4.0, OptionValues.number("k.x", "4", 1, false, 4, false));
        rejects("a number in (0, 1)", () -> OptionValues.number("k.x", "0", 0, true, 1, true));
        rejects("a number in (0, 1)", () -> OptionValues.number("k.x", "1", 0, true, 1, true));
        rejects("a number in (0, 1)", () -> OptionValues.number("k.x", "NaN", 0, true, 1, true));
        rejects(
                "a number in [1, 1000000]",
                () -> OptionValues.number("k.x", "Infinity", 1, false, 1e6, false));
        rejects(
                "a number in (0, inf)",
                () ->
                        OptionValues.number(
                                "k.x", "Infinity", 0, true, Double.POSITIVE_INFINITY, true));
        rejects("a number in [1, 4]", () -> OptionValues.number("k.x", "0.99", 1, false, 4, false));
        rejects(
                "a number in [0.5, 4]",
                () -> OptionValues.number("k.x", "x", 0.5, false, 4, false));
    }

    @Test
    void choicesAreEnumConstantsInAnyCase() {
        assertEquals(AtpMode.FULL, OptionValues.choice("k.x", "full", AtpMode.class));
        InvalidOptionException e =
                assertThrows(
                        InvalidOptionException.class,
                        () -> OptionValues.choice("k.x", "fast", AtpMode.class));
        assertEquals("one of base, rc, rc_mrdf, fix_tlr, fix_prio, full, paper", e.expected());
        rejects(
                "shares or local",
                () -> OptionValues.choice("k.x", "balanced", AtpMode.class, "shares or local"));
    }

    @Test
    void checkNamesKeyValueAndRange() {
        OptionValues.check(true, "k.x", "1", "anything");
        InvalidOptionException e =
                rejects(
                        "a duration from 1 ms to 24 h",
                        () ->
                                OptionValues.check(
                                        false, "k.x", "0", "a duration from 1 ms to 24 h"));
        assertEquals("0", e.value());
    }

    @Test
    void durationsCarryTheirUnit() {
        java.time.Duration min = java.time.Duration.ofMillis(1);
        java.time.Duration max = java.time.Duration.ofDays(1);
        assertEquals(java.time.Duration.ofSeconds(2), OptionValues.duration("k.x", "2s", min, max));
        assertEquals(
                java.time.Duration.ofMillis(1500),
                OptionValues.duration("k.x", " 1.5 Seconds ", min, max));
        assertEquals(
                java.time.Duration.ofMillis(500), OptionValues.duration("k.x", "500ms", min, max));
        String expected =
                "a duration with its unit (e.g. 2s, 1.5 seconds, 500ms) in [1 ms, 86400000 ms]";
        for (String bad : new String[] {"2", "2 minutes", "s", "0ms", "2 days", "-1s", "1.2.3s"}) {
            rejects(expected, () -> OptionValues.duration("k.x", bad, min, max));
        }
    }
}
