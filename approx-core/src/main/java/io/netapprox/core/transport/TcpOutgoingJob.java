package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpException;
import io.netapprox.core.engine.AtpJobFailedException;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendBatch;
import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.job.Target;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The sending side of one job on the TCP data plane: every accepted message goes to the connection
 * as a MSG frame, reliably and in order, until the receiver's DONE (every group has its target)
 * ends the job; later sends return {@link SendResult#NOT_NEEDED}. Which messages are sent is the
 * {@link TcpSendPolicy}: {@code EARLY_SEND} sends whatever it is given until DONE, {@code
 * SAMPLE_SEND} only the first {@code target_g} messages of each group (a later one of a group that
 * sent its target is NOT_NEEDED, as an engine group that has met its target). Backpressure: {@code
 * send} blocks while the session's stage is full or the connection is not writable ({@link
 * TcpSession}).
 */
final class TcpOutgoingJob implements OutgoingJob {
    private final TcpSession session;
    private final int id;
    private final JobSpec spec;
    private final TcpSendPolicy policy;
    private final long defaultTimeoutMs;
    private final int maxMessageBytes;
    private final long startedNanos = System.nanoTime();
    private final CompletableFuture<JobReport> outcome = new CompletableFuture<>();
    // guarded by this
    private final int[] target;
    private final int[] sent;
    private long messagesSent;
    private long bytesSent;

    TcpOutgoingJob(
            TcpSession session,
            int id,
            JobSpec spec,
            TcpSendPolicy policy,
            long defaultTimeoutMs,
            int maxMessageBytes) {
        this.session = session;
        this.id = id;
        this.spec = spec;
        this.policy = policy;
        this.defaultTimeoutMs = defaultTimeoutMs;
        this.maxMessageBytes = maxMessageBytes;
        int n = spec.groups().size();
        this.target = new int[n];
        this.sent = new int[n];
        for (int g = 0; g < n; g++) {
            target[g] = spec.groups().get(g).target();
        }
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public JobSpec spec() {
        return spec;
    }

    @Override
    public CompletableFuture<JobReport> outcome() {
        return outcome;
    }

    @Override
    public SendResult send(int groupIndex, int index, ByteBuf msg) {
        return send(groupIndex, index, msg, defaultTimeoutMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public SendResult send(int groupIndex, int index, ByteBuf msg, long timeout, TimeUnit unit) {
        return submit(groupIndex, index, msg, toTimeoutMs(timeout, unit));
    }

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
        Objects.requireNonNull(msg, "msg");
        return submit(
                groupIndex,
                index,
                Unpooled.wrappedBuffer(msg.duplicate()),
                toTimeoutMs(timeout, unit));
    }

    @Override
    public SendResult trySend(int groupIndex, int index, ByteBuffer msg) {
        Objects.requireNonNull(msg, "msg");
        return submit(groupIndex, index, Unpooled.wrappedBuffer(msg.duplicate()), 0);
    }

    @Override
    public SendResult send(SendBatch batch, long timeout, TimeUnit unit) {
        Objects.requireNonNull(batch, "batch");
        long timeoutMs = toTimeoutMs(timeout, unit);
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        return batch.sendEach(
                (g, i, m) ->
                        submit(
                                g,
                                i,
                                m,
                                timeoutMs <= 0
                                        ? timeoutMs
                                        : Math.max(
                                                1, (deadline - System.nanoTime()) / 1_000_000L)));
    }

    @Override
    public SendResult send(SendBatch batch) {
        return send(batch, defaultTimeoutMs, TimeUnit.MILLISECONDS);
    }

    private SendResult submit(int groupIndex, int index, ByteBuf msg, long timeoutMs) {
        Objects.requireNonNull(msg, "msg");
        int len = msg.readableBytes();
        checkArgs(groupIndex, index, len);
        SendResult pre = precheck();
        if (pre != null) {
            return pre;
        }
        synchronized (this) {
            if (policy == TcpSendPolicy.SAMPLE_SEND && sent[groupIndex] >= target[groupIndex]) {
                return SendResult.NOT_NEEDED; // the group sent its sample
            }
        }
        TcpSession.Enqueued e =
                session.enqueue(
                        this,
                        TcpFrames.MSG_OVERHEAD + len,
                        out -> {
                            TcpFrames.writeMsgHeader(out, id, groupIndex, index, len);
                            out.writeBytes(msg, msg.readerIndex(), len);
                        },
                        timeoutMs);
        switch (e) {
            case OK -> {
                synchronized (this) {
                    sent[groupIndex]++;
                    messagesSent++;
                    bytesSent += len;
                }
                session.plane().metrics().messageSent(len);
                return SendResult.ACCEPTED;
            }
            case JOB_ENDED -> {
                return finishedResult();
            }
            default -> {
                if (timeoutMs == 0) {
                    return SendResult.FULL;
                }
                throw new AtpException(
                        AtpStatus.WOULD_BLOCK,
                        "send on job "
                                + Integer.toUnsignedString(id)
                                + ": timed out waiting for the TCP data connection to drain (the"
                                + " receiver is not consuming?)");
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
        if (len > maxMessageBytes) {
            throw new IllegalArgumentException(
                    "message of " + len + " bytes exceeds maxMessageBytes " + maxMessageBytes);
        }
    }

    /** Null while running; NOT_NEEDED once it succeeded; throws when it failed or is closed. */
    private SendResult precheck() {
        session.ensureOpen();
        return outcome.isDone() ? finishedResult() : null;
    }

    private SendResult finishedResult() {
        try {
            outcome.getNow(null);
            return SendResult.NOT_NEEDED;
        } catch (java.util.concurrent.CompletionException e) {
            Throwable c = e.getCause();
            if (c instanceof AtpJobFailedException f) {
                if (f.status() == AtpStatus.CLOSED && !session.isOpen()) {
                    throw new IllegalStateException(
                            "job " + Integer.toUnsignedString(id) + " closed: " + f.getMessage(),
                            f);
                }
                throw f;
            }
            throw e;
        }
    }

    private static long toTimeoutMs(long timeout, TimeUnit unit) {
        if (timeout < 0) {
            return -1;
        }
        long ms = unit.toMillis(timeout);
        return ms == 0 && timeout > 0 ? 1 : ms;
    }

    @Override
    public void updateMsr(Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        session.ensureOpen();
        if (msrByGroupIndex.isEmpty()) {
            return;
        }
        int n = msrByGroupIndex.size();
        int[] gi = new int[n];
        double[] msr = new double[n];
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
            gi[k] = g;
            msr[k] = m;
            k++;
        }
        synchronized (this) {
            if (outcome.isDone()) {
                throw new IllegalStateException(
                        "job " + Integer.toUnsignedString(id) + " already finished");
            }
            for (int i = 0; i < n; i++) {
                target[gi[i]] = Target.of(msr[i], spec.groups().get(gi[i]).size());
            }
        }
        session.enqueueControl(
                TcpFrames.updateLength(n), out -> TcpFrames.writeUpdate(out, id, gi, msr));
    }

    @Override
    public void cancel() {
        if (outcome.isDone() || !session.isOpen()) {
            return;
        }
        session.enqueueControl(
                TcpFrames.CANCEL_LENGTH, out -> TcpFrames.writeCancel(out, id, AtpStatus.CLOSED));
        failed(AtpStatus.CLOSED);
    }

    // ---- completion (session) -------------------------------------------------------------------

    /** DONE: the receiver has every target; {@code delivered} per group. */
    void completed(int[] delivered) {
        JobReport r = report(AtpStatus.OK, delivered);
        session.jobEnded(this);
        outcome.complete(r);
    }

    /** The job ended without completion (cancel, session closed or failed). */
    void failed(AtpStatus status) {
        JobReport r = report(status, null);
        session.jobEnded(this);
        outcome.completeExceptionally(new AtpJobFailedException(r));
    }

    /** The sender's report, as the engine makes one (no ids; targets after MSR updates). */
    private synchronized JobReport report(AtpStatus status, int[] deliveredByGroup) {
        long now = System.nanoTime();
        List<GroupReport> groups = new ArrayList<>(spec.groups().size());
        long n = 0;
        long d = 0;
        for (int g = 0; g < spec.groups().size(); g++) {
            GroupSpec s = spec.groups().get(g);
            int got = deliveredByGroup == null ? 0 : Math.min(deliveredByGroup[g], s.size());
            groups.add(
                    new GroupReport(
                            s.groupId(),
                            s.size(),
                            target[g],
                            false,
                            got,
                            s.size() - got,
                            IdSet.empty(),
                            IdSet.empty()));
            n += s.size();
            d += got;
        }
        return JobReport.builder()
                .sessionId(session.id())
                .jobId(id)
                .sender(true)
                .status(status)
                .messages((int) n)
                .delivered((int) d)
                .lost((int) (n - d))
                .packetsSent(messagesSent)
                .bytesSent(bytesSent)
                .startedNanos(startedNanos)
                .finishedNanos(now)
                .jctNanos(Math.max(0, now - startedNanos))
                .groups(groups)
                .build();
    }

    @Override
    public String toString() {
        return "TcpOutgoingJob{id="
                + Integer.toUnsignedString(id)
                + ", session="
                + Long.toHexString(session.id())
                + ", "
                + policy
                + ", "
                + spec.groups().size()
                + " groups, N="
                + spec.totalMessages()
                + (outcome.isDone() ? ", done" : "")
                + "}";
    }
}
