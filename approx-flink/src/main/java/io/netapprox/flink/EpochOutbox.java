package io.netapprox.flink;

/**
 * One sender's epoch for one receiver, encoded and waiting in its TaskManager's {@link
 * TaskManagerExchange} until the receiver pulls it (over ATP, or directly when both run on the same
 * TaskManager). Stratum i is ATP group i: {@code messages[i]} are its messages, {@code msr[i]} its
 * MSR.
 */
final class EpochOutbox {
    final OutboxKey key;
    final byte[][][] messages;
    final double[] msr;
    final long bytes;
    final long createdNanos = System.nanoTime();

    EpochOutbox(OutboxKey key, byte[][][] messages, double[] msr) {
        this.key = key;
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
