package io.netapprox.flink;

import io.netapprox.core.job.JobReport;
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
    final java.util.concurrent.atomic.AtomicBoolean claimed =
            new java.util.concurrent.atomic.AtomicBoolean();

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
}
