package io.netapprox.flink;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The pulls from one peer: at most {@code limit} fill at once and the rest wait in arrival order. A
 * pull holds its slot until it has its data (every stratum at its target), not until its job's
 * report: the next epoch's request round trip then overlaps the previous job's end (the receiver's
 * completion notice travelling to the sender, the rest of the sender's submissions stopping, the
 * report). A pull that has its data but no report yet still counts against a second bound, {@code 2
 * * limit} open pulls, so the ATP jobs on one session stay bounded whatever the reports' delay
 * (several concurrent jobs on one session under heavy loss ended in a retransmission storm;
 * docs/flink.md, Gaps).
 */
final class PullGate {
    /** One started pull: when it no longer needs its slot, and when it ended. */
    record Pull(CompletableFuture<?> hasData, CompletableFuture<?> ended) {
        static final Pull NONE =
                new Pull(
                        CompletableFuture.completedFuture(null),
                        CompletableFuture.completedFuture(null));
    }

    private final int limit;
    private final ArrayDeque<Supplier<Pull>> waiting = new ArrayDeque<>();
    private int filling; // guarded by this
    private int open; // guarded by this
    private long freedBeforeEnd; // guarded by this
    private boolean draining; // guarded by this
    private boolean again; // guarded by this

    PullGate(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("limit " + limit + " < 1");
        }
        this.limit = limit;
    }

    /** Runs {@code start} now if a slot is free, else when one frees (on the freeing thread). */
    void submit(Supplier<Pull> start) {
        synchronized (this) {
            waiting.add(start);
        }
        drain();
    }

    /** Pulls filling now (tests). */
    synchronized int filling() {
        return filling;
    }

    /** Pulls started and not ended (tests). */
    synchronized int open() {
        return open;
    }

    /** Pulls whose slot went to the next pull before their job ended (tests, logs). */
    synchronized long freedBeforeEnd() {
        return freedBeforeEnd;
    }

    /**
     * Starts waiting pulls while slots are free. One thread drains at a time (a pull that is done
     * at once, e.g. given up while it waited, frees its slot inside {@code run}: the active drainer
     * picks the next one up instead of recursing).
     */
    private void drain() {
        synchronized (this) {
            if (draining) {
                again = true;
                return;
            }
            draining = true;
        }
        while (true) {
            Supplier<Pull> start;
            synchronized (this) {
                if (filling >= limit || open >= 2 * limit || waiting.isEmpty()) {
                    if (!again) {
                        draining = false;
                        return;
                    }
                    again = false;
                    continue;
                }
                start = waiting.poll();
                filling++;
                open++;
            }
            run(start);
        }
    }

    private void run(Supplier<Pull> start) {
        Pull p;
        try {
            p = start.get();
        } catch (RuntimeException e) {
            p = Pull.NONE;
        }
        boolean[] freed = new boolean[1]; // guarded by this
        CompletableFuture<?> ended = p.ended();
        p.hasData()
                .whenComplete(
                        (r, e) -> {
                            synchronized (this) {
                                if (freed[0]) {
                                    return;
                                }
                                freed[0] = true;
                                filling--;
                                if (!ended.isDone()) {
                                    freedBeforeEnd++;
                                }
                            }
                            drain();
                        });
        ended.whenComplete(
                (r, e) -> {
                    synchronized (this) {
                        open--;
                        if (!freed[0]) {
                            freed[0] = true;
                            filling--;
                        }
                    }
                    drain();
                });
    }
}
