package io.netapprox.flink;

import java.nio.ByteBuffer;

/**
 * Names one sender's epoch for one receiver: (exchange, sender subtask, attempt, epoch, receiver).
 * Its 28-byte form is the DATA_REQUEST payload a receiver sends to pull the epoch over ATP.
 */
record OutboxKey(long exchangeId, int sender, int attempt, long epoch, int receiver) {
    static final int BYTES = 28;

    byte[] toBytes() {
        return ByteBuffer.allocate(BYTES)
                .putLong(exchangeId)
                .putInt(sender)
                .putInt(attempt)
                .putLong(epoch)
                .putInt(receiver)
                .array();
    }

    /** Parses a request payload (untrusted: exactly 28 bytes, else IllegalArgumentException). */
    static OutboxKey fromBytes(byte[] b) {
        if (b == null || b.length != BYTES) {
            throw new IllegalArgumentException(
                    "NetApprox: a data request must be "
                            + BYTES
                            + " bytes, got "
                            + (b == null ? 0 : b.length));
        }
        ByteBuffer in = ByteBuffer.wrap(b);
        return new OutboxKey(in.getLong(), in.getInt(), in.getInt(), in.getLong(), in.getInt());
    }
}
