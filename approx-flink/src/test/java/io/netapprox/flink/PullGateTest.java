package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The pull gate alone: slots free when a pull has its data, open pulls stay bounded. */
class PullGateTest {
    /** A pull whose two moments the test controls. */
    private record Handle(CompletableFuture<Void> hasData, CompletableFuture<Void> ended) {
        Handle() {
            this(new CompletableFuture<>(), new CompletableFuture<>());
        }

        PullGate.Pull pull() {
            return new PullGate.Pull(hasData, ended);
        }
    }

    @Test
    void aPullFreesItsSlotWithItsDataAndOpenPullsStayBoundedUntilTheirReports() {
        PullGate gate = new PullGate(1);
        List<Handle> started = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            gate.submit(
                    () -> {
                        Handle h = new Handle();
                        started.add(h);
                        return h.pull();
                    });
        }
        assertEquals(1, started.size(), "one pull fills at a time");
        started.get(0).hasData().complete(null);
        assertEquals(2, started.size(), "the next starts once the first has its data");
        assertEquals(1, gate.freedBeforeEnd());
        started.get(1).hasData().complete(null);
        assertEquals(2, started.size(), "2 x limit open pulls: the third waits for a report");
        assertEquals(2, gate.open());
        started.get(0).ended().complete(null);
        assertEquals(3, started.size());
        // a pull that ends without its data (failure, deadline) frees both counts
        started.get(2).ended().completeExceptionally(new RuntimeException("failed"));
        assertEquals(4, started.size());
        started.get(1).ended().complete(null);
        started.get(3).hasData().complete(null);
        started.get(3).ended().complete(null);
        assertEquals(5, started.size());
        started.get(4).ended().complete(null);
        assertEquals(0, gate.filling());
        assertEquals(0, gate.open());
    }

    @Test
    void pullsGivenUpWhileWaitingDoNotHoldSlotsOrRecurse() {
        PullGate gate = new PullGate(1);
        Handle first = new Handle();
        gate.submit(first::pull);
        int[] skipped = new int[1];
        for (int i = 0; i < 100_000; i++) {
            gate.submit(
                    () -> {
                        skipped[0]++;
                        return PullGate.Pull.NONE;
                    });
        }
        assertEquals(0, skipped[0]);
        first.ended().complete(null); // drains 100,000 given-up pulls in a loop, not a recursion
        assertEquals(100_000, skipped[0]);
        assertEquals(0, gate.open());
    }
}
