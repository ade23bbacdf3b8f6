package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
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
public final class AtpOutgoingJob implements OutgoingJob {
    private final AtpSession session;
    private final EndpointCore core;
    private final int id;
    private final JobSpec spec;
    private final long sessionId;
    private final long defaultTimeoutMs;
    private final CompletableFuture<JobReport> outcome = new CompletableFuture<>();

    AtpOutgoingJob(AtpSession session, int id, JobSpec spec) {
        this.session = session;
        this.core = session.core;
        this.id = id;
        this.spec = spec;
        this.sessionId = session.id();
        this.defaultTimeoutMs = core.config.sendTimeout().toMillis();
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public JobSpec spec() {
        return spec;
    }

    public AtpSession session() {
        return session;
    }

    /**
     * Completes with the sender's report when every group reached its target, or exceptionally with
     * an {@link AtpJobFailedException} (carrying the report) on PEER_DEAD, IDLE_TIMEOUT, PROTOCOL,
     * or CLOSED (cancel, session or endpoint closed).
     */
    @Override
    public CompletableFuture<JobReport> outcome() {
        return outcome;
    }

    // ---- sending --------------------------------------------------------------------------------
    /**
     * Sends message {@code index} of group {@code groupIndex}, blocking up to {@link
     * AtpConfig#sendTimeout()}.
     */
    @Override
    public SendResult send(int groupIndex, int index, ByteBuf msg) {
        return send(groupIndex, index, msg, defaultTimeoutMs, TimeUnit.MILLISECONDS);
    }

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
    @Override
    public SendResult send(int groupIndex, int index, ByteBuf msg, long timeout, TimeUnit unit) {
        return submit(groupIndex, index, msg, toTimeoutMs(timeout, unit));
    }

    /** Non-blocking send: {@link SendResult#FULL} when the send buffer is full. */
    @Override
    public SendResult trySend(int groupIndex, int index, ByteBuf msg) {
        return submit(groupIndex, index, msg, 0);
    }

    @Override
    public SendResult send(int groupIndex, int index, ByteBuffer msg) {
        return send(groupIndex, index, msg, defaultTimeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public SendResult send(int groupIndex, int index, ByteBuffer msg, long timeout, TimeUnit unit) {
        return submit(groupIndex, index, msg, toTimeoutMs(timeout, unit));
    }

    @Override
    public SendResult trySend(int groupIndex, int index, ByteBuffer msg) {
        return submit(groupIndex, index, msg, 0);
    }

    /**
     * Sends every entry of {@code batch} in one JNI crossing and one engine lock per 256 entries
     * ({@code na_job_submit_batch}; in order, sharing one deadline). On success the batch is
     * cleared. On failure the accepted prefix is removed from the batch (so it can be retried) and
     * the mapped exception is thrown.
     *
     * @return {@link SendResult#ACCEPTED}, or {@link SendResult#NOT_NEEDED} when the job completed
     *     meanwhile (the rest of the batch is dropped)
     */
    @Override
    public SendResult send(SendBatch batch, long timeout, TimeUnit unit) {
        Objects.requireNonNull(batch, "batch");
        batch.startSend();
        SendResult pre = precheck();
        if (pre != null) {
            batch.clear();
            return pre;
        }
        if (batch.size() == 0) {
            return SendResult.ACCEPTED;
        }
        int timeoutMs = toTimeoutMs(timeout, unit);
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        while (true) {
            int accepted =
                    NativeEngine.submitBatch(
                            core.handle,
                            sessionId,
                            id,
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
            int left =
                    timeoutMs <= 0
                            ? timeoutMs
                            : (int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
            SendResult r = onRefused(rc, left, "send batch entry");
            if (r == SendResult.NOT_NEEDED) {
                batch.clear();
            }
            return r;
        }
    }

    @Override
    public SendResult send(SendBatch batch) {
        return send(batch, defaultTimeoutMs, TimeUnit.MILLISECONDS);
    }

    private SendResult submit(int groupIndex, int index, ByteBuf msg, int timeoutMs) {
        Objects.requireNonNull(msg, "msg");
        int len = msg.readableBytes();
        checkArgs(groupIndex, index, len);
        SendResult pre = precheck();
        if (pre != null) {
            return pre;
        }
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
                return submit(groupIndex, index, copy, timeoutMs);
            } finally {
                copy.release();
            }
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
            int groupIndex, int index, long address, int len, int timeoutMs) {
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        while (true) {
            int slice = slice(timeoutMs, deadline);
            int rc =
                    NativeEngine.submitAddress(
                            core.handle, sessionId, id, groupIndex, index, address, len, slice);
            if (rc == 0) {
                return SendResult.ACCEPTED;
            }
            if (!retrySlice(rc, timeoutMs, deadline)) {
                return onRefused(rc, timeoutMs, "send");
            }
        }
    }

    private SendResult submitDirect(
            int groupIndex, int index, ByteBuffer nb, int offset, int len, int timeoutMs) {
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        while (true) {
            int slice = slice(timeoutMs, deadline);
            int rc =
                    NativeEngine.submitBuffer(
                            core.handle, sessionId, id, groupIndex, index, nb, offset, len, slice);
            if (rc == 0) {
                return SendResult.ACCEPTED;
            }
            if (!retrySlice(rc, timeoutMs, deadline)) {
                return onRefused(rc, timeoutMs, "send");
            }
        }
    }

    private static int slice(int timeoutMs, long deadline) {
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
    private boolean retrySlice(int rc, int timeoutMs, long deadline) {
        return rc == AtpStatus.WOULD_BLOCK.code()
                && timeoutMs != 0
                && !outcome.isDone()
                && (timeoutMs < 0 || deadline - System.nanoTime() > 0);
    }

    private SendResult submit(int groupIndex, int index, ByteBuffer msg, int timeoutMs) {
        Objects.requireNonNull(msg, "msg");
        int len = msg.remaining();
        checkArgs(groupIndex, index, len);
        SendResult pre = precheck();
        if (pre != null) {
            return pre;
        }
        if (msg.isDirect()) {
            return submitDirect(groupIndex, index, msg, msg.position(), len, timeoutMs);
        } else {
            ByteBuf copy = PooledByteBufAllocator.DEFAULT.directBuffer(len, len);
            try {
                copy.writeBytes(msg.duplicate());
                return submit(groupIndex, index, copy, timeoutMs);
            } finally {
                copy.release();
            }
        }
    }

    private void checkArgs(int groupIndex, int index, int len) {
        if (groupIndex < 0 || groupIndex >= spec.groups().size()) {
            throw new IllegalArgumentException(
                    "groupIndex " + groupIndex + " out of range [0, " + spec.groups().size() + ")");
        }
        int size = spec.groups().get(groupIndex).size();
        if (index < 0 || index >= size) {
            throw new IllegalArgumentException(
                    "index " + index + " out of range [0, " + size + ") of group " + groupIndex);
        }
        if (len <= 0) {
            throw new IllegalArgumentException("a message must not be empty");
        }
        if (len > core.config.maxMessageBytes()) {
            throw new IllegalArgumentException(
                    "message of "
                            + len
                            + " bytes exceeds maxMessageBytes "
                            + core.config.maxMessageBytes());
        }
    }

    /**
     * Null when the job is still running; NOT_NEEDED when it succeeded; throws when it failed or we
     * are closed.
     */
    private SendResult precheck() {
        session.ensureOpen();
        if (outcome.isDone()) {
            return finishedResult();
        }
        return null;
    }

    private SendResult finishedResult() {
        try {
            outcome.getNow(null);
            return SendResult.NOT_NEEDED;
        } catch (java.util.concurrent.CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof AtpJobFailedException) {
                AtpJobFailedException f = (AtpJobFailedException) c;
                if (f.status() == AtpStatus.CLOSED && (!session.isOpen())) {
                    throw new IllegalStateException("job " + id + " closed: " + f.getMessage(), f);
                }
                throw f;
            }
            throw e;
        }
    }

    private SendResult onRefused(int rc, int timeoutMs, String what) {
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
                            + id
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
                        what + ": job " + id + " is no longer known to the engine");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AtpException(AtpStatus.NOT_FOUND, what + ": interrupted");
            }
        }
        if (rc == AtpStatus.CLOSED.code() || rc == AtpStatus.CLOSED_HANDLE.code()) {
            session.ensureOpen();
        }
        throw AtpException.map(rc, what + " on job " + id);
    }

    private static int toTimeoutMs(long timeout, TimeUnit unit) {
        if (timeout < 0) {
            return -1;
        }
        long ms = unit.toMillis(timeout);
        if (ms == 0 && timeout > 0) {
            ms = 1;
        }
        return (int) Math.min(Integer.MAX_VALUE, ms);
    }

    // ---- MSR updates and cancel -----------------------------------------------------------------
    /** New MSRs by group index, mid-job (targets never drop below what is already delivered). */
    @Override
    public void updateMsr(Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        session.ensureOpen();
        if (msrByGroupIndex.isEmpty()) {
            return;
        }
        int n = msrByGroupIndex.size();
        int[] g = new int[n];
        double[] m = new double[n];
        int i = 0;
        for (Map.Entry<Integer, Double> e : msrByGroupIndex.entrySet()) {
            int gi = Objects.requireNonNull(e.getKey(), "group index");
            double msr = Objects.requireNonNull(e.getValue(), "msr");
            if (gi < 0 || gi >= spec.groups().size()) {
                throw new IllegalArgumentException(
                        "group index " + gi + " out of range [0, " + spec.groups().size() + ")");
            }
            if (!(msr >= 0 && msr <= 1)) {
                throw new IllegalArgumentException(
                        "msr of group " + gi + " must be in [0, 1], got " + msr);
            }
            g[i] = gi;
            m[i] = msr;
            i++;
        }
        int rc = NativeEngine.jobUpdateMsr(core.handle, sessionId, id, g, m, n);
        if (rc == AtpStatus.NOT_FOUND.code()) {
            throw new IllegalStateException("job " + id + " already finished");
        }
        AtpException.check(rc, "updateMsr on job " + id);
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
        NativeEngine.jobCancel(core.handle, sessionId, id); // NOT_FOUND when it just finished: fine
    }

    /** Cancels the job if it is still running. Idempotent. */
    @Override
    public void close() {
        cancel();
    }

    /** One JNI crossing and one engine lock per batch instead of per message. */
    @Override
    public boolean batchesSends() {
        return true;
    }

    @Override
    public boolean isDone() {
        return outcome.isDone();
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
                    new AtpJobFailedException(status, "job " + id + " ended with " + status));
        }
    }

    void completeExceptionally(AtpJobFailedException e) {
        outcome.completeExceptionally(e);
    }

    @Override
    public String toString() {
        return "AtpOutgoingJob{id="
                + id
                + ", session="
                + Long.toUnsignedString(sessionId)
                + ", "
                + spec.groups().size()
                + " groups, N="
                + spec.totalMessages()
                + (outcome.isDone() ? ", done" : "")
                + "}";
    }
}
