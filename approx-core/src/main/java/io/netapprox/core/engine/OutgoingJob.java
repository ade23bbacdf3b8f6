package io.netapprox.core.engine;

import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The sending side of one job, whichever data plane carries it: the ATP engine ({@link
 * AtpOutgoingJob}, from {@link AtpSession#startJob}) or the transport's TCP data plane (the
 * network-oblivious baseline and fallback, {@code io.netapprox.core.transport}). What a serving
 * handler gets from {@code OutgoingTransfer.startJob}: messages are given with {@link #send}
 * (blocking, with backpressure) or {@link #trySend} (non-blocking); the outcome is {@link
 * #outcome()}.
 *
 * <h2>Backpressure</h2>
 *
 * {@code send} blocks while the data plane's send buffer is full - ATP: until the receiver
 * acknowledges data, which it does only as fast as its application releases delivered messages;
 * TCP: until the connection drains - and fails with an {@link AtpException} of status {@code
 * WOULD_BLOCK} at the deadline. Call it from a producer thread, not from a Netty event loop (use
 * {@code trySend} there).
 *
 * <h2>Buffers</h2>
 *
 * The data plane copies the bytes synchronously, so the caller keeps ownership of the {@link
 * ByteBuf} / {@link ByteBuffer} (it is not released) and may reuse it as soon as the call returns.
 * The readable bytes (ByteBuf) or remaining bytes (ByteBuffer) are sent; they must not be empty.
 *
 * <h2>Completion</h2>
 *
 * The receiver decides: once every group has its target ({@code ceil(MSR_g * N_g)}) it tells the
 * sender, the outcome completes with the sender's report and later sends return {@link
 * SendResult#NOT_NEEDED}.
 */
public interface OutgoingJob extends AutoCloseable {
    /** The job id (unsigned 32-bit). */
    int id();

    /** The groups as started (MSR updates are not reflected here; see the sender's report). */
    JobSpec spec();

    /**
     * Completes with the sender's report when every group reached its target, or exceptionally with
     * an {@link AtpJobFailedException} (carrying the report) on PEER_DEAD, IDLE_TIMEOUT, PROTOCOL,
     * or CLOSED (cancel, session or endpoint closed).
     */
    CompletableFuture<JobReport> outcome();

    /** Sends message {@code index} of group {@code groupIndex}, blocking up to the default. */
    SendResult send(int groupIndex, int index, ByteBuf msg);

    /**
     * Sends message {@code index} (0-based within its group) of group {@code groupIndex} (position
     * in {@link JobSpec#groups()}), blocking while the send buffer is full.
     *
     * @return {@link SendResult#ACCEPTED} or {@link SendResult#NOT_NEEDED}
     * @throws AtpException WOULD_BLOCK when no space was freed before the deadline
     * @throws AtpJobFailedException when the job already failed
     * @throws IllegalStateException when the session/endpoint is closed
     * @throws IllegalArgumentException bad indices, an empty message, or a message above
     *     maxMessageBytes
     */
    SendResult send(int groupIndex, int index, ByteBuf msg, long timeout, TimeUnit unit);

    /** Non-blocking send: {@link SendResult#FULL} when the send buffer is full. */
    SendResult trySend(int groupIndex, int index, ByteBuf msg);

    SendResult send(int groupIndex, int index, ByteBuffer msg);

    SendResult send(int groupIndex, int index, ByteBuffer msg, long timeout, TimeUnit unit);

    SendResult trySend(int groupIndex, int index, ByteBuffer msg);

    /**
     * Sends every entry of {@code batch}, in order, sharing one deadline. On success the batch is
     * cleared. On failure the accepted prefix is removed from the batch (so it can be retried) and
     * the mapped exception is thrown.
     *
     * @return {@link SendResult#ACCEPTED}, or {@link SendResult#NOT_NEEDED} when the job completed
     *     meanwhile (the rest of the batch is dropped)
     */
    SendResult send(SendBatch batch, long timeout, TimeUnit unit);

    SendResult send(SendBatch batch);

    /** New MSRs by group index, mid-job (targets never drop below what is already delivered). */
    void updateMsr(Map<Integer, Double> msrByGroupIndex);

    /**
     * Cancels the job (the peer is told); {@link #outcome()} completes exceptionally with status
     * CLOSED. Harmless when the job already ended.
     */
    void cancel();

    /** Cancels the job if it is still running. Idempotent. */
    @Override
    default void close() {
        cancel();
    }

    default boolean isDone() {
        return outcome().isDone();
    }

    /**
     * True when {@link #send(SendBatch, long, TimeUnit)} costs one call into the data plane per
     * batch instead of one per message (ATP: one JNI crossing and one engine lock), so that {@code
     * SendScheduler.sendAll} gathers small messages into batches; false when single sends are as
     * cheap (the TCP data plane coalesces frames itself).
     */
    default boolean batchesSends() {
        return false;
    }
}
