package io.netapprox.core.transport;

import io.netapprox.core.engine.AbstractOutgoingJob;
import io.netapprox.core.engine.AtpException;
import io.netapprox.core.engine.AtpJobFailedException;
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
final class TcpOutgoingJob extends AbstractOutgoingJob {
    private final TcpSession session;
    private final TcpSendPolicy policy;
    private final long startedNanos = System.nanoTime();
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
        super(id, spec, defaultTimeoutMs, maxMessageBytes);
        this.session = session;
        this.policy = policy;
        int n = spec.groups().size();
        this.target = new int[n];
        this.sent = new int[n];
        for (int g = 0; g < n; g++) {
            target[g] = spec.groups().get(g).target();
        }
    }

    @Override
    protected void ensureOpen() {
        session.ensureOpen();
    }

    @Override
    protected boolean sessionOpen() {
        return session.isOpen();
    }

    @Override
    protected SendResult submitChecked(int groupIndex, int index, ByteBuffer msg, long timeoutMs) {
        return submitChecked(groupIndex, index, Unpooled.wrappedBuffer(msg.duplicate()), timeoutMs);
    }

    @Override
    protected SendResult submitBatch(SendBatch batch, long timeoutMs) {
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        return batch.sendEach((g, i, m) -> submit(g, i, m, remainingMs(timeoutMs, deadline)));
    }

    @Override
    protected SendResult submitChecked(int groupIndex, int index, ByteBuf msg, long timeoutMs) {
        int len = msg.readableBytes();
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
                            TcpFrames.writeMsgHeader(out, id(), groupIndex, index, len);
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
                                + idText()
                                + ": timed out waiting for the TCP data connection to drain (the"
                                + " receiver is not consuming?)");
            }
        }
    }

    @Override
    protected void applyMsr(int[] groupIndices, double[] msrs) {
        synchronized (this) {
            if (outcome.isDone()) {
                throw new IllegalStateException("job " + idText() + " already finished");
            }
            for (int i = 0; i < groupIndices.length; i++) {
                int g = groupIndices[i];
                target[g] = Target.of(msrs[i], spec().groups().get(g).size());
            }
        }
        session.enqueueControl(
                TcpFrames.updateLength(groupIndices.length),
                out -> TcpFrames.writeUpdate(out, id(), groupIndices, msrs));
    }

    @Override
    public void cancel() {
        if (outcome.isDone() || !session.isOpen()) {
            return;
        }
        session.enqueueControl(
                TcpFrames.CANCEL_LENGTH, out -> TcpFrames.writeCancel(out, id(), AtpStatus.CLOSED));
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
        List<GroupReport> groups = new ArrayList<>(spec().groups().size());
        long n = 0;
        long d = 0;
        for (int g = 0; g < spec().groups().size(); g++) {
            GroupSpec s = spec().groups().get(g);
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
                .jobId(id())
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
    protected String describe() {
        return ", session=" + Long.toHexString(session.id()) + ", " + policy;
    }
}
