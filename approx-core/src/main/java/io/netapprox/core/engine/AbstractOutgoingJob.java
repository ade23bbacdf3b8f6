package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * What every data plane's {@link OutgoingJob} shares: the job's id, spec and outcome, the send
 * overloads (default timeout, non-blocking, batches with one deadline) reduced to two {@code
 * submit} calls, and the checks a send or an MSR update makes before it reaches the data plane
 * (indices, message size, a job that already ended). A data plane implements how one message is
 * submitted ({@link AtpOutgoingJob}: into the engine over JNI; the TCP data plane: as a frame on
 * the connection), how an MSR update and a cancel reach the peer, and whether its session is open.
 */
public abstract class AbstractOutgoingJob implements OutgoingJob {
    private final int id;
    private final JobSpec spec;
    private final long defaultTimeoutMs;
    private final int maxMessageBytes;

    /** Completed by the data plane when the job ends (report, or AtpJobFailedException). */
    protected final CompletableFuture<JobReport> outcome = new CompletableFuture<>();

    protected AbstractOutgoingJob(
            int id, JobSpec spec, long defaultTimeoutMs, int maxMessageBytes) {
        this.id = id;
        this.spec = Objects.requireNonNull(spec, "spec");
        this.defaultTimeoutMs = defaultTimeoutMs;
        this.maxMessageBytes = maxMessageBytes;
    }

    // ---- what a data plane implements
    // ------------------------------------------------------------

    /**
     * Submits one checked message of a running job: wait up to {@code timeoutMs} (0: do not wait,
     * answer FULL; negative: without bound) for space.
     */
    protected abstract SendResult submitChecked(
            int groupIndex, int index, ByteBuf msg, long timeoutMs);

    /** As {@link #submitChecked(int, int, ByteBuf, long)} for a ByteBuffer's remaining bytes. */
    protected abstract SendResult submitChecked(
            int groupIndex, int index, ByteBuffer msg, long timeoutMs);

    /** Sends a whole batch sharing one deadline ({@link #send(SendBatch, long, TimeUnit)}). */
    protected abstract SendResult submitBatch(SendBatch batch, long timeoutMs);

    /** Applies validated MSRs (group indices and values in [0, 1], same length) to the job. */
    protected abstract void applyMsr(int[] groupIndices, double[] msrs);

    /** Throws IllegalStateException when the session (or its endpoint/plane) is closed. */
    protected abstract void ensureOpen();

    protected abstract boolean sessionOpen();

    // ---- OutgoingJob
    // -----------------------------------------------------------------------------

    @Override
    public final int id() {
        return id;
    }

    @Override
    public final JobSpec spec() {
        return spec;
    }

    @Override
    public final CompletableFuture<JobReport> outcome() {
        return outcome;
    }

    @Override
    public final boolean isDone() {
        return outcome.isDone();
    }

    /** The job id as the peer and the logs show it (unsigned 32-bit). */
    protected final String idText() {
        return Integer.toUnsignedString(id);
    }

    @Override
    public final SendResult send(int groupIndex, int index, ByteBuf msg) {
        return submit(groupIndex, index, msg, defaultTimeoutMs);
    }

    @Override
    public final SendResult send(
            int groupIndex, int index, ByteBuf msg, long timeout, TimeUnit unit) {
        return submit(groupIndex, index, msg, toTimeoutMs(timeout, unit));
    }

    @Override
    public final SendResult trySend(int groupIndex, int index, ByteBuf msg) {
        return submit(groupIndex, index, msg, 0);
    }

    @Override
    public final SendResult send(int groupIndex, int index, ByteBuffer msg) {
        return submit(groupIndex, index, msg, defaultTimeoutMs);
    }

    @Override
    public final SendResult send(
            int groupIndex, int index, ByteBuffer msg, long timeout, TimeUnit unit) {
        return submit(groupIndex, index, msg, toTimeoutMs(timeout, unit));
    }

    @Override
    public final SendResult trySend(int groupIndex, int index, ByteBuffer msg) {
        return submit(groupIndex, index, msg, 0);
    }

    @Override
    public final SendResult send(SendBatch batch, long timeout, TimeUnit unit) {
        Objects.requireNonNull(batch, "batch");
        return submitBatch(batch, toTimeoutMs(timeout, unit));
    }

    @Override
    public final SendResult send(SendBatch batch) {
        return send(batch, defaultTimeoutMs, TimeUnit.MILLISECONDS);
    }

    /** Checks the arguments and the job's state, then submits: the one path of every send. */
    protected final SendResult submit(int groupIndex, int index, ByteBuf msg, long timeoutMs) {
        Objects.requireNonNull(msg, "msg");
        checkArgs(groupIndex, index, msg.readableBytes());
        SendResult pre = precheck();
        return pre != null ? pre : submitChecked(groupIndex, index, msg, timeoutMs);
    }

    private SendResult submit(int groupIndex, int index, ByteBuffer msg, long timeoutMs) {
        Objects.requireNonNull(msg, "msg");
        checkArgs(groupIndex, index, msg.remaining());
        SendResult pre = precheck();
        return pre != null ? pre : submitChecked(groupIndex, index, msg, timeoutMs);
    }

    @Override
    public final void updateMsr(Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        ensureOpen();
        if (msrByGroupIndex.isEmpty()) {
            return;
        }
        int n = msrByGroupIndex.size();
        int[] groups = new int[n];
        double[] msrs = new double[n];
        int k = 0;
        for (Map.Entry<Integer, Double> e : msrByGroupIndex.entrySet()) {
            int g = Objects.requireNonNull(e.getKey(), "group index");
            double m = Objects.requireNonNull(e.getValue(), "msr");
            if (g < 0 || g >= spec.groups().size()) {
                throw new IllegalArgumentException(
                        "group index " + g + " out of range [0, " + spec.groups().size() + ")");
            }
            if (!(m >= 0 && m <= 1)) {
                throw new IllegalArgumentException(
                        "msr of group " + g + " must be in [0, 1], got " + m);
            }
            groups[k] = g;
            msrs[k] = m;
            k++;
        }
        applyMsr(groups, msrs);
    }

    // ---- shared checks
    // ---------------------------------------------------------------------------

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
        if (len > maxMessageBytes) {
            throw new IllegalArgumentException(
                    "message of " + len + " bytes exceeds maxMessageBytes " + maxMessageBytes);
        }
    }

    /** Null while the job runs; NOT_NEEDED once it succeeded; throws when it failed or closed. */
    protected final SendResult precheck() {
        ensureOpen();
        return outcome.isDone() ? finishedResult() : null;
    }

    /** The answer to a send on an ended job: NOT_NEEDED after success, else its failure. */
    protected final SendResult finishedResult() {
        try {
            outcome.getNow(null);
            return SendResult.NOT_NEEDED;
        } catch (CompletionException e) {
            if (e.getCause() instanceof AtpJobFailedException f) {
                if (f.status() == AtpStatus.CLOSED && !sessionOpen()) {
                    throw new IllegalStateException(
                            "job " + idText() + " closed: " + f.getMessage(), f);
                }
                throw f;
            }
            throw e;
        }
    }

    /**
     * A timeout in ms: negative = without bound, 0 = do not wait, a positive one at least 1 ms and
     * at most Integer.MAX_VALUE (24 days; a deadline in nanoseconds cannot overflow).
     */
    protected static long toTimeoutMs(long timeout, TimeUnit unit) {
        if (timeout < 0) {
            return -1;
        }
        long ms = Math.min(Integer.MAX_VALUE, unit.toMillis(timeout));
        return ms == 0 && timeout > 0 ? 1 : ms;
    }

    /** Time left of a positive timeout started at {@code deadline - timeoutMs}; 0 and -1 kept. */
    protected static long remainingMs(long timeoutMs, long deadlineNanos) {
        return timeoutMs <= 0
                ? timeoutMs
                : Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000L);
    }

    /** What toString adds after the id (the session, the policy). */
    protected abstract String describe();

    @Override
    public String toString() {
        return getClass().getSimpleName()
                + "{id="
                + idText()
                + describe()
                + ", "
                + spec.groups().size()
                + " groups, N="
                + spec.totalMessages()
                + (outcome.isDone() ? ", done" : "")
                + "}";
    }
}
