package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.transport.SendScheduler.Message;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The serving side's send order, without an engine: a fake sender records what the schedule asks
 * for.
 */
class SendSchedulerTest {

    /** The whole schedule when every message is accepted. */
    private static List<Message> order(SendScheduler s) throws Exception {
        List<Message> out = new ArrayList<>();
        s.drive(
                () -> false,
                m -> {
                    out.add(m);
                    return SendResult.ACCEPTED;
                });
        return out;
    }

    @Test
    void interleavesGroupsByTheirTargets() throws Exception {
        // group 0: target 2 of 4, due at .25 .75 1.25 1.75; group 1: target 6 of 6, due at 1/12,
        // 3/12, ... 11/12
        List<Message> o = order(new SendScheduler(new int[] {4, 6}, new int[] {2, 6}));
        // (ties at .25 and .75 go to group 0)
        List<Message> expected =
                List.of(
                        new Message(1, 0),
                        new Message(0, 0),
                        new Message(1, 1),
                        new Message(1, 2),
                        new Message(1, 3),
                        new Message(0, 1),
                        new Message(1, 4),
                        new Message(1, 5),
                        new Message(0, 2),
                        new Message(0, 3));
        assertEquals(expected, o);
    }

    @Test
    void everyGroupReachesItsTargetTogether() throws Exception {
        SplittableRandom r = new SplittableRandom(3);
        for (int trial = 0; trial < 50; trial++) {
            int groups = 1 + r.nextInt(20);
            int[] limits = new int[groups];
            int[] targets = new int[groups];
            int targetSum = 0;
            for (int g = 0; g < groups; g++) {
                limits[g] = 1 + r.nextInt(300);
                targets[g] = 1 + r.nextInt(limits[g]);
                targetSum += targets[g];
            }
            List<Message> o = order(new SendScheduler(limits, targets));
            int total = 0;
            for (int l : limits) {
                total += l;
            }
            assertEquals(total, o.size(), "every message once");
            int[] sent = new int[groups];
            for (int k = 0; k < o.size(); k++) {
                Message m = o.get(k);
                assertEquals(sent[m.group()], m.index(), "index order within a group");
                sent[m.group()]++;
                if (k + 1 == targetSum) {
                    for (int g = 0; g < groups; g++) {
                        assertEquals(
                                targets[g],
                                sent[g],
                                "after the first sum(targets) messages, group " + g);
                    }
                }
                // at every point, the groups' progress toward their targets differs by at most one
                // message
                double lo = Double.MAX_VALUE;
                double hi = 0;
                double step = 0;
                for (int g = 0; g < groups; g++) {
                    if (sent[g] < limits[g]) { // groups with messages left
                        double f = sent[g] / (double) targets[g];
                        lo = Math.min(lo, f);
                        hi = Math.max(hi, f);
                        step = Math.max(step, 1.0 / targets[g]);
                    }
                }
                assertTrue(hi - lo <= step + 1e-12, "balanced progress at message " + k);
            }
        }
    }

    @Test
    void aNotNeededMessageEndsItsGroup() throws Exception {
        SendScheduler s = new SendScheduler(new int[] {10, 10}, new int[] {5, 5});
        List<Message> sent = new ArrayList<>();
        long accepted =
                s.drive(
                        () -> false,
                        m -> {
                            if (m.group() == 1 && m.index() == 3) {
                                return SendResult.NOT_NEEDED; // group 1 met its target early
                            }
                            sent.add(m);
                            return SendResult.ACCEPTED;
                        });
        assertEquals(13, accepted);
        assertEquals(3, sent.stream().filter(m -> m.group() == 1).count());
        assertEquals(10, sent.stream().filter(m -> m.group() == 0).count());
        assertFalse(s.hasNext());
    }

    @Test
    void stopsWhenTheJobEnds() throws Exception {
        SendScheduler s = new SendScheduler(new int[] {100}, new int[] {50});
        int[] calls = {0};
        long accepted =
                s.drive(
                        () -> calls[0] >= 7,
                        m -> {
                            calls[0]++;
                            return SendResult.ACCEPTED;
                        });
        assertEquals(7, accepted);
        assertTrue(s.hasNext());
    }

    @Test
    void tiesGoToTheLowerGroupAndZeroTargetsPaceLikeOne() throws Exception {
        assertEquals(
                List.of(new Message(0, 0), new Message(1, 0), new Message(2, 0)),
                order(new SendScheduler(new int[] {1, 1, 1}, new int[] {3, 3, 3})));
        assertEquals(
                List.of(new Message(0, 0), new Message(1, 0), new Message(0, 1), new Message(1, 1)),
                order(new SendScheduler(new int[] {2, 2}, new int[] {0, 1})));
        assertEquals(
                List.of(new Message(1, 0)),
                order(new SendScheduler(new int[] {0, 1}, new int[] {0, 1})));
    }

    @Test
    void aJobSpecSetsLimitsAndPaceFromItsGroups() throws Exception {
        JobSpec spec = JobSpec.builder().addGroup(7, 4, 0.5).addGroup(8, 6, 1.0).build();
        assertEquals(
                order(new SendScheduler(new int[] {4, 6}, new int[] {2, 6})),
                order(new SendScheduler(spec)));
    }

    @Test
    void rejectsBadInputAndAnExhaustedSchedule() {
        assertThrows(
                IllegalArgumentException.class,
                () -> new SendScheduler(new int[] {1}, new int[] {1, 2}));
        assertThrows(
                IllegalArgumentException.class,
                () -> new SendScheduler(new int[] {-1}, new int[] {1}));
        SendScheduler empty = new SendScheduler(new int[0], new int[0]);
        assertFalse(empty.hasNext());
        assertThrows(NoSuchElementException.class, empty::next);
    }
}
