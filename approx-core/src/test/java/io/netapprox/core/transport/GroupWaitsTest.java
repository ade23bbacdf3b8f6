package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.netapprox.core.job.GroupSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class GroupWaitsTest {
    private static final long MS = 1_000_000L;

    /** Group 7: 4 messages, MSR 0.5 (target 2); group 9: 2 messages, MSR 1 (target 2). */
    private static GroupWaits twoGroups() {
        return new GroupWaits(List.of(new GroupSpec(7, 4, 0.5), new GroupSpec(9, 2, 1.0)), 0);
    }

    @Test
    void countsTheLongestGapWhileShortOfTargetOnly() {
        GroupWaits w = twoGroups();
        w.delivered(7, 5 * MS); // first after 5 ms
        w.delivered(7, 25 * MS); // 20 ms: the target's last message
        w.delivered(7, 125 * MS); // 100 ms, but the group has its target: not a wait
        w.delivered(9, 3 * MS);
        w.delivered(9, 4 * MS);
        assertArrayEquals(new long[] {20 * MS, 3 * MS}, w.longestNanos(500 * MS));
    }

    @Test
    void aGroupThatEndsShortWaitedUntilTheEnd() {
        GroupWaits w = twoGroups();
        w.delivered(7, 10 * MS);
        // group 7 never gets its second message, group 9 never anything
        assertArrayEquals(new long[] {90 * MS, 100 * MS}, w.longestNanos(100 * MS));
    }

    @Test
    void aHigherMsrMakesLaterGapsCountAndUnknownGroupsAreIgnored() {
        GroupWaits w = twoGroups();
        w.msrChanged(0, 1.0); // group 7 now needs all 4
        w.msrChanged(5, 1.0); // no such index: ignored
        w.delivered(42, 1 * MS); // no such group: ignored
        w.delivered(7, 1 * MS);
        w.delivered(7, 2 * MS);
        w.delivered(7, 50 * MS); // 48 ms: counted now (the third of four)
        w.delivered(7, 51 * MS);
        w.delivered(9, 1 * MS);
        w.delivered(9, 2 * MS);
        assertArrayEquals(new long[] {48 * MS, 1 * MS}, w.longestNanos(60 * MS));
    }
}
