package io.netapprox.flink;

import io.netapprox.core.job.JobReport;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One sender's epoch for one receiver, encoded and waiting in its TaskManager's {@link OutboxStore}
 * until the receiver pulls it (over ATP, or directly when both run on the same TaskManager).
 * Stratum i is ATP group i: {@code messages[i]} are its messages, {@code msr[i]} its MSR. {@code
 * onServed} gets the serving engine's report of a pull over ATP (retransmissions, measured loss and
 * priority classes are the sending engine's numbers; the receiver's report has none of them); it
 * runs on a transport thread.
 */
final class EpochOutbox {
    final OutboxKey key;
    final byte[][][] messages;
    final double[] msr;
    final long bytes;
    final long createdNanos = System.nanoTime();
    final Consumer<JobReport> onServed;

    /** Taken by the one transfer that sends it (a pull, or a push), so it is never sent twice. */
    private boolean claimed; // guarded by this

    /**
     * A push holding the claim before its receiver accepted or refused it: completes true once
     * accepted, false once refused (the claim is released for the receiver's pull).
     */
    private CompletableFuture<Boolean> pushDeciding; // guarded by this

    EpochOutbox(OutboxKey key, byte[][][] messages, double[] msr) {
        this(key, messages, msr, r -> {});
    }

    EpochOutbox(OutboxKey key, byte[][][] messages, double[] msr, Consumer<JobReport> onServed) {
        this.key = key;
        this.onServed = onServed;
        this.messages = messages;
        this.msr = msr;
        long b = 0;
        for (byte[][] s : messages) {
            for (byte[] m : s) {
                b += m.length + 16L; // payload + array header
            }
        }
        this.bytes = b;
    }

    /** Claims the outbox for a push; false if another transfer has it. */
    synchronized boolean claimForPush() {
        if (!tryClaim()) {
            return false;
        }
        pushDeciding = new CompletableFuture<>();
        return true;
    }

    private synchronized boolean tryClaim() {
        if (claimed) {
            return false;
        }
        claimed = true;
        return true;
    }

    /** The receiver accepted ({@code accepted}) or refused the push that claimed this outbox. */
    void pushDecided(boolean accepted) {
        CompletableFuture<Boolean> d;
        synchronized (this) {
            d = pushDeciding;
            pushDeciding = null;
            if (!accepted) {
                claimed = false;
            }
        }
        if (d != null) {
            d.complete(accepted);
        }
    }

    /**
     * Claims the outbox for a pull. A push that holds it and is still waiting for its receiver's
     * answer is waited for (at most {@code timeoutMillis}): the receiver that pulls refused that
     * push (it stopped waiting for it) or its transport did, and the refusal can reach this side
     * after the pull does. False if another transfer sends the outbox.
     */
    boolean claimForPull(long timeoutMillis) throws InterruptedException {
        CompletableFuture<Boolean> d;
        synchronized (this) {
            if (tryClaim()) {
                return true;
            }
            d = pushDeciding;
        }
        if (d == null) {
            return false;
        }
        try {
            d.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            return false;
        }
        return tryClaim();
    }
}
