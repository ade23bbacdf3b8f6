package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The ATP engine's {@link OutgoingJob}: the sending side of a job on an {@link AtpSession},
 * returned by {@link AtpSession#startJob}. Every send crosses JNI into {@code na_job_submit_wait}
 * (or {@code na_job_submit_batch} for a {@link SendBatch}); the outcome is the engine's sender
 * report.
 *
 * <h2>Backpressure</h2>
 *
 * {@code send} blocks while the session's send buffer ({@link AtpConfig#sendBufferBytes()}) is
 * full, i.e. until the receiver acknowledges data - which it does only as fast as its application
 * releases delivered messages (flow control) - and fails with an {@link AtpException} of status
 * {@code WOULD_BLOCK} at the deadline. We chose blocking over a CompletionStage per message because
 * it needs no allocation per message and maps 1:1 onto {@code na_job_submit_wait}; call it from a
 * producer thread, not from a Netty event loop (use {@code trySend} there).
 *
 * <h2>Buffers</h2>
 *
 * Buffers with a memory address (Netty direct/pooled buffers) and direct ByteBuffers cross JNI as
 * an address, without copy or allocation; heap and composite buffers are first copied into a pooled
 * direct buffer.
 */
public final class AtpOutgoingJob extends AbstractOutgoingJob {
    private final AtpSession session;
    private final EndpointCore core;
    private final long sessionId;

    AtpOutgoingJob(AtpSession session, int id, JobSpec spec) {
        super(
                id,
                spec,
                session.core.config.sendTimeout().toMillis(),
                session.core.config.maxMessageBytes());
        this.session = session;
        this.core = session.core;
        this.sessionId = session.id();
    }

    public AtpSession session() {
        return session;
    }

    @Override
    protected void ensureOpen() {
        session.ensureOpen();
    }

    @Override
    protected boolean sessionOpen() {
        return session.isOpen();
    }

    // ---- sending --------------------------------------------------------------------------------
    /**
     * Sends every entry of {@code batch} in one JNI crossing and one engine lock per 256 entries
     * ({@code na_job_submit_batch}; in order, sharing one deadline). On success the batch is
     * cleared. On failure the accepted prefix is removed from the batch (so it can be retried) and
     * the mapped exception is thrown.
     */
    @Override
    protected SendResult submitBatch(SendBatch batch, long timeoutMs) {
        batch.startSend();
        SendResult pre = precheck();
        if (pre != null) {
            batch.clear();
            return pre;
        }
        if (batch.size() == 0) {
            return SendResult.ACCEPTED;
        }
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        while (true) {
            int accepted =
                    NativeEngine.submitBatch(
                            core.handle,
                            sessionId,
                            id(),
                            batch.descriptorAddress(),
                            batch.size(),
                            slice(timeoutMs, deadline));
            if (accepted < 0) {
                throw AtpException.map(accepted, "send batch");
            }
            if (accepted == batch.size()) {
                batch.consume(accepted);
                return SendResult.ACCEPTED;
            }
            int rc = batch.statusAt(accepted);
            batch.consume(accepted);
            if (retrySlice(rc, timeoutMs, deadline)) {
                continue;
            }
            SendResult r = onRefused(rc, remainingMs(timeoutMs, deadline), "send batch entry");
            if (r == SendResult.NOT_NEEDED) {
                batch.clear();
            }
            return r;
        }
    }

    @Override
    protected SendResult submitChecked(int groupIndex, int index, ByteBuf msg, long timeoutMs) {
        int len = msg.readableBytes();
        if (msg.hasMemoryAddress()) {
            return submitAddress(
                    groupIndex, index, msg.memoryAddress() + msg.readerIndex(), len, timeoutMs);
        } else if (msg.isDirect() && msg.nioBufferCount() == 1) {
            ByteBuffer nb = msg.nioBuffer(msg.readerIndex(), len);
            return submitDirect(groupIndex, index, nb, nb.position(), len, timeoutMs);
        } else {
            ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer(len, len);
            try {
                copy.writeBytes(msg, msg.readerIndex(), len);
                return submitChecked(groupIndex, index, copy, timeoutMs);
            } finally {
                copy.release();
            }
        }
    }

    @Override
    protected SendResult submitChecked(int groupIndex, int index, ByteBuffer msg, long timeoutMs) {
        int len = msg.remaining();
        if (msg.isDirect()) {
            return submitDirect(groupIndex, index, msg, msg.position(), len, timeoutMs);
        }
        ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer(len, len);
        try {
            copy.writeBytes(msg.duplicate());
            return submitChecked(groupIndex, index, copy, timeoutMs);
        } finally {
            copy.release();
        }
    }

    /**
     * Blocking submits wait in slices of at most {@value #WAIT_SLICE_MS} ms: the engine does not
     * wake a {@code na_job_submit_wait} caller when the job ends (peer dead, cancelled, targets
     * met), so between slices we look at the job's outcome. No cost while space is available; one
     * extra crossing per slice while blocked.
     */
    private static final int WAIT_SLICE_MS = 50;

    /** How long a refused submit waits for the JOB_DONE of a job the engine already ended. */
    private static final long JOB_DONE_HANDOVER_MS = 30_000;

    private SendResult submitAddress(
            int groupIndex, int index, long address, int len, long timeoutMs) {
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        while (true) {
            int slice = slice(timeoutMs, deadline);
            int rc =
                    NativeEngine.submitAddress(
                            core.handle, sessionId, id(), groupIndex, index, address, len, slice);
            if (rc == 0) {
                return SendResult.ACCEPTED;
            }
            if (!retrySlice(rc, timeoutMs, deadline)) {
                return onRefused(rc, timeoutMs, "send");
            }
        }
    }

    private SendResult submitDirect(
            int groupIndex, int index, ByteBuffer nb, int offset, int len, long timeoutMs) {
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        while (true) {
            int slice = slice(timeoutMs, deadline);
            int rc =
                    NativeEngine.submitBuffer(
                            core.handle,
                            sessionId,
                            id(),
                            groupIndex,
                            index,
                            nb,
                            offset,
                            len,
                            slice);
            if (rc == 0) {
                return SendResult.ACCEPTED;
            }
            if (!retrySlice(rc, timeoutMs, deadline)) {
                return onRefused(rc, timeoutMs, "send");
            }
        }
    }

    private static int slice(long timeoutMs, long deadline) {
        if (timeoutMs == 0) {
            return 0;
        }
        if (timeoutMs < 0) {
            return WAIT_SLICE_MS;
        }
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        return (int) Math.max(1, Math.min(WAIT_SLICE_MS, left));
    }

    /**
     * True when a WOULD_BLOCK slice should be retried: time is left and the job is still running.
     */
    private boolean retrySlice(int rc, long timeoutMs, long deadline) {
        return rc == AtpStatus.WOULD_BLOCK.code()
                && timeoutMs != 0
                && !outcome.isDone()
                && (timeoutMs < 0 || deadline - System.nanoTime() > 0);
    }

    private SendResult onRefused(int rc, long timeoutMs, String what) {
        if (rc == AtpStatus.WOULD_BLOCK.code()) {
            if (outcome.isDone()) {
                session.ensureOpen();
                return finishedResult();
            }
            if (timeoutMs == 0) {
                return SendResult.FULL;
            }
            throw new AtpException(
                    AtpStatus.WOULD_BLOCK,
                    what
                            + " on job "
                            + idText()
                            + ": timed out waiting for send buffer space (the receiver is not consuming?)");
        }
        if (rc == AtpStatus.NOT_FOUND.code()) {
            // The engine no longer knows the job: it finished (or failed; e.g. the receiver ended
            // an approximate job early, holding every target) and its JOB_DONE event is on its way
            // through the event thread. That hand-over takes more than a second on a loaded
            // machine (a 1 s wait could turn a job that succeeded into a NOT_FOUND failure), so
            // wait
            // up to the liveness bound; the event always comes (closing fails the outcome).
            try {
                outcome.get(
                        Math.max(JOB_DONE_HANDOVER_MS, timeoutMs < 0 ? 0 : timeoutMs),
                        TimeUnit.MILLISECONDS);
                return SendResult.NOT_NEEDED;
            } catch (ExecutionException e) {
                return finishedResult();
            } catch (TimeoutException e) {
                session.ensureOpen();
                throw new AtpException(
                        AtpStatus.NOT_FOUND,
                        what + ": job " + idText() + " is no longer known to the engine");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AtpException(AtpStatus.NOT_FOUND, what + ": interrupted");
            }
        }
        if (rc == AtpStatus.CLOSED.code() || rc == AtpStatus.CLOSED_HANDLE.code()) {
            session.ensureOpen();
        }
        throw AtpException.map(rc, what + " on job " + idText());
    }

    // ---- MSR updates and cancel -----------------------------------------------------------------
    @Override
    protected void applyMsr(int[] groupIndices, double[] msrs) {
        int rc =
                NativeEngine.jobUpdateMsr(
                        core.handle, sessionId, id(), groupIndices, msrs, groupIndices.length);
        if (rc == AtpStatus.NOT_FOUND.code()) {
            throw new IllegalStateException("job " + idText() + " already finished");
        }
        AtpException.check(rc, "updateMsr on job " + idText());
    }

    /**
     * Cancels the job (the peer is told); {@link #outcome()} completes exceptionally with status
     * CLOSED.
     */
    @Override
    public void cancel() {
        if (outcome.isDone() || !session.isOpen()) {
            return;
        }
        NativeEngine.jobCancel(
                core.handle, sessionId, id()); // NOT_FOUND when it just finished: fine
    }

    /** One JNI crossing and one engine lock per batch instead of per message. */
    @Override
    public boolean batchesSends() {
        return true;
    }

    // ---- completion (event thread / close paths) ------------------------------------------------
    void complete(JobReport report, AtpStatus status) {
        session.jobFinished(this);
        if (report != null && report.isSuccess()) {
            outcome.complete(report);
        } else if (report != null) {
            outcome.completeExceptionally(new AtpJobFailedException(report));
        } else {
            outcome.completeExceptionally(
                    new AtpJobFailedException(status, "job " + idText() + " ended with " + status));
        }
    }

    void completeExceptionally(AtpJobFailedException e) {
        outcome.completeExceptionally(e);
    }

    @Override
    protected String describe() {
        return ", session=" + Long.toUnsignedString(sessionId);
    }
}
