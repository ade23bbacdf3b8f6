package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpException;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.IncomingJobListener;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One peer's session on the TCP data plane: its authenticated data connection (attached by the
 * control plane, {@code ControlSession.openDataConnection}), carrying the jobs of both directions
 * as {@link TcpFrames} - the counterpart of an engine session ({@code AtpSession}) with the same
 * listener contract ({@link IncomingJobListener}, called with a null session).
 *
 * <p><b>Sending</b> (any thread): frames are appended to a stage (a few pooled 64 KiB chunks,
 * {@value #STAGE_LIMIT} bytes at most, one larger message alone) and moved to the channel by one
 * task on its event loop, so that many small messages cost one task and one flush, not one each. A
 * sender waits while the stage is full or the channel is not writable (Netty's outbound buffer
 * above its high watermark): memory per session stays within the stage plus the watermark.
 *
 * <p><b>Receiving</b> (event loop): each MSG is copied into a {@link TcpMessageBuf} charged to the
 * receive budget ({@link AtpConfig#recvBufferBytes()}) until the application releases it; above the
 * budget the connection stops reading (TCP's window then pushes back on the sender), below half of
 * it reading resumes - the counterpart of ATP's advertised receive window.
 */
final class TcpSession implements TcpMessageBuf.Budget {
    private static final Logger LOG = LoggerFactory.getLogger(TcpSession.class);

    /** Bytes of frames a session holds before the channel takes them. */
    static final int STAGE_LIMIT = 256 << 10;

    static final int CHUNK = 64 << 10;

    /** Bookkeeping charged per delivered message besides its bytes (objects, map entries). */
    static final int MESSAGE_OVERHEAD = 128;

    /** Finished receiving jobs remembered, so that a START reusing an id is refused. */
    static final int RECENT_JOBS = 4096;

    /** The longest a blocked sender sleeps before it looks at the channel again. */
    private static final long WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    enum Enqueued {
        OK,
        TIMEOUT,
        JOB_ENDED
    }

    private final long id;
    private final Channel channel;
    private final TcpDataPlane plane;
    private final AtpConfig limits;
    private final IncomingJobListener listener;
    private final long recvBudget;

    private final ConcurrentHashMap<Integer, TcpOutgoingJob> sending = new ConcurrentHashMap<>();
    private final ReentrantLock stageLock = new ReentrantLock();
    private final Condition room = stageLock.newCondition();
    // guarded by stageLock
    private final ArrayDeque<ByteBuf> staged = new ArrayDeque<>();
    private ByteBuf current;
    private long stagedBytes;
    private boolean drainScheduled;

    // event loop only
    private final Map<Integer, TcpIncomingJob> receiving = new HashMap<>();
    private final LinkedHashMap<Integer, Boolean> recentJobs =
            new LinkedHashMap<>(64, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<Integer, Boolean> e) {
                    return size() > RECENT_JOBS;
                }
            };
    private final AtomicLong held = new AtomicLong();
    private volatile boolean readPaused;

    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile boolean closed; // set (under stageLock) after the outgoing jobs failed
    private volatile boolean closedLocally;
    private volatile AtpStatus failure;

    TcpSession(
            long id,
            Channel channel,
            TcpDataPlane plane,
            AtpConfig limits,
            IncomingJobListener listener) {
        this.id = id;
        this.channel = channel;
        this.plane = plane;
        this.limits = limits;
        this.listener = listener;
        this.recvBudget = limits.recvBufferBytes();
    }

    /**
     * Installs the session's handlers at the end of the pipeline (called on the channel's event
     * loop, before the control plane removes its handshake handlers).
     */
    void install() {
        int high = (int) Math.min(1 << 20, Math.max(64 << 10, limits.sendBufferBytes()));
        channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(high / 2, high));
        channel.config().setAutoRead(true);
        channel.pipeline().addLast("tcpDecoder", new TcpFrames.Decoder(limits));
        channel.pipeline().addLast("tcpSession", new Handler());
        channel.closeFuture().addListener(f -> onChannelClosed());
    }

    long id() {
        return id;
    }

    TcpDataPlane plane() {
        return plane;
    }

    Channel channel() {
        return channel;
    }

    boolean isOpen() {
        return !ended.get();
    }

    /** What failed the session (CLOSED by the peer, PEER_DEAD, PROTOCOL), or null. */
    AtpStatus failure() {
        return failure;
    }

    void ensureOpen() {
        if (ended.get()) {
            throw new IllegalStateException("TCP data session " + Long.toHexString(id) + " closed");
        }
    }

    /** Bytes charged to the receive budget (messages held by the application, tables). */
    long heldBytes() {
        return held.get();
    }

    int sendingJobs() {
        return sending.size();
    }

    // ---- sending --------------------------------------------------------------------------------

    /**
     * Starts a job with the id {@link JobSpec#jobId()} (START frame): as {@code
     * AtpSession.startJob}, with the same limits.
     *
     * @throws IllegalStateException the id is in use, or the session is closed
     * @throws AtpException LIMIT_EXCEEDED (jobs per session, messages or groups per job)
     */
    OutgoingJob startJob(JobSpec spec) {
        ensureOpen();
        if (spec.jobId() == null) {
            throw new IllegalArgumentException("a TCP data-plane job needs its job id");
        }
        int jobId = spec.jobId();
        if (spec.groups().size() > limits.maxGroupsPerJob()
                || spec.totalMessages() > limits.maxMessagesPerJob()) {
            throw new AtpException(
                    AtpStatus.LIMIT_EXCEEDED,
                    "starting "
                            + spec
                            + " exceeds a configured limit (maxMessagesPerJob / maxGroupsPerJob)");
        }
        TcpOutgoingJob job =
                new TcpOutgoingJob(
                        this,
                        jobId,
                        spec,
                        plane.policy(),
                        limits.sendTimeout().toMillis(),
                        limits.maxMessageBytes());
        if (sending.size() >= limits.maxJobsPerSession()) {
            throw new AtpException(
                    AtpStatus.LIMIT_EXCEEDED,
                    "starting "
                            + spec
                            + " exceeds maxJobsPerSession "
                            + limits.maxJobsPerSession());
        }
        if (sending.putIfAbsent(jobId, job) != null) {
            throw new IllegalStateException(
                    "job "
                            + Integer.toUnsignedString(jobId)
                            + " is already running on session "
                            + Long.toHexString(id));
        }
        enqueueControl(TcpFrames.startLength(spec), out -> TcpFrames.writeStart(out, jobId, spec));
        if (ended.get()) { // raced with the end of the session
            job.failed(failure != null ? failure : AtpStatus.CLOSED);
        }
        return job;
    }

    void jobEnded(TcpOutgoingJob job) {
        sending.remove(job.id(), job);
    }

    /**
     * Appends a data frame of {@code frameBytes} (written by {@code writer}), waiting up to {@code
     * timeoutMs} (0: not at all, negative: forever) while the session is full, as long as {@code
     * job} runs.
     */
    Enqueued enqueue(TcpOutgoingJob job, int frameBytes, Consumer<ByteBuf> writer, long timeoutMs) {
        long deadline = timeoutMs > 0 ? System.nanoTime() + timeoutMs * 1_000_000L : 0;
        boolean stalled = false;
        stageLock.lock();
        try {
            while (true) {
                if (job.isDone()) { // also how a session's end reaches a waiting sender
                    return Enqueued.JOB_ENDED;
                }
                if (closed) {
                    throw new IllegalStateException(
                            "TCP data session " + Long.toHexString(id) + " closed");
                }
                if (channel.isWritable()
                        && (stagedBytes == 0 || stagedBytes + frameBytes <= STAGE_LIMIT)) {
                    break;
                }
                if (timeoutMs == 0) {
                    return Enqueued.TIMEOUT;
                }
                long wait = WAIT_SLICE_NANOS;
                if (timeoutMs > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return Enqueued.TIMEOUT;
                    }
                    wait = Math.min(wait, left);
                }
                if (!stalled) {
                    stalled = true;
                    plane.metrics().sendStall();
                }
                try {
                    room.awaitNanos(wait);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AtpException(
                            AtpStatus.WOULD_BLOCK, "interrupted while waiting to send", e);
                }
            }
            append(frameBytes, writer);
            return Enqueued.OK;
        } finally {
            stageLock.unlock();
        }
    }

    /**
     * Appends a control frame (START, UPDATE, CANCEL) without waiting: they are small, bounded by
     * the jobs and updates, and must keep their order with the job's messages. Dropped once the
     * session is closed.
     */
    void enqueueControl(int frameBytes, Consumer<ByteBuf> writer) {
        stageLock.lock();
        try {
            if (!closed) {
                append(frameBytes, writer);
            }
        } finally {
            stageLock.unlock();
        }
    }

    /** Under stageLock. */
    private void append(int n, Consumer<ByteBuf> writer) {
        ByteBuf target;
        if (n > CHUNK) {
            sealCurrent();
            target = PooledByteBufAllocator.DEFAULT.directBuffer(n, n);
            staged.add(target);
        } else {
            if (current == null || current.writableBytes() < n) {
                sealCurrent();
                current = PooledByteBufAllocator.DEFAULT.directBuffer(CHUNK, CHUNK);
            }
            target = current;
        }
        int before = target.writerIndex();
        try {
            writer.accept(target);
        } catch (RuntimeException e) {
            target.writerIndex(before);
            throw e;
        }
        if (target.writerIndex() - before != n) {
            target.writerIndex(before);
            throw new IllegalStateException(
                    "frame of " + (target.writerIndex() - before) + " bytes, expected " + n);
        }
        stagedBytes += n;
        if (!drainScheduled) {
            drainScheduled = true;
            try {
                channel.eventLoop().execute(this::drain);
            } catch (RejectedExecutionException e) {
                drainScheduled = false; // shutting down: the session closes with the loop
            }
        }
    }

    /** Under stageLock. */
    private void sealCurrent() {
        if (current != null) {
            if (current.isReadable()) {
                staged.add(current);
            } else {
                current.release();
            }
            current = null;
        }
    }

    /** Moves the stage to the channel (event loop). */
    private void drain() {
        List<ByteBuf> out;
        stageLock.lock();
        try {
            sealCurrent();
            out = new ArrayList<>(staged);
            staged.clear();
            stagedBytes = 0;
            drainScheduled = false;
            room.signalAll();
        } finally {
            stageLock.unlock();
        }
        if (out.isEmpty()) {
            return;
        }
        for (ByteBuf b : out) {
            channel.write(b, channel.voidPromise());
        }
        channel.flush();
    }

    private void signalRoom() {
        stageLock.lock();
        try {
            room.signalAll();
        } finally {
            stageLock.unlock();
        }
    }

    /** A frame of the receiving side (DONE), written at once from the event loop. */
    private void writeNow(int frameBytes, Consumer<ByteBuf> writer) {
        ByteBuf b = channel.alloc().buffer(frameBytes, frameBytes);
        writer.accept(b);
        channel.writeAndFlush(b, channel.voidPromise());
    }

    // ---- receiving (event loop) -----------------------------------------------------------------

    private void onFrame(TcpFrames.Frame f) {
        if (f instanceof TcpFrames.Msg m) {
            onMsg(m);
        } else if (f instanceof TcpFrames.Start s) {
            onStart(s);
        } else if (f instanceof TcpFrames.Update u) {
            onUpdate(u);
        } else if (f instanceof TcpFrames.Done d) {
            onDone(d);
        } else if (f instanceof TcpFrames.Cancel c) {
            onCancel(c);
        } else if (f instanceof TcpFrames.Failure x) {
            protocolError(x.message());
        }
    }

    private void onStart(TcpFrames.Start s) {
        int job = s.job();
        if (receiving.containsKey(job) || recentJobs.containsKey(job)) {
            protocolError("START of job " + Integer.toUnsignedString(job) + ", which already ran");
            return;
        }
        if (receiving.size() >= limits.maxJobsPerSession()) {
            protocolError("START of a job beyond maxJobsPerSession " + limits.maxJobsPerSession());
            return;
        }
        long table = TcpIncomingJob.tableCharge(s.spec());
        if (held.get() + table > recvBudget) {
            protocolError(
                    "START of job "
                            + Integer.toUnsignedString(job)
                            + " needs "
                            + table
                            + " bytes of bookkeeping beyond the receive buffer ("
                            + recvBudget
                            + " bytes)");
            return;
        }
        TcpIncomingJob j = new TcpIncomingJob(s.spec(), System.nanoTime());
        charge(table);
        receiving.put(job, j);
        try {
            listener.onJobStarted(null, job);
        } catch (RuntimeException e) {
            LOG.warn("onJobStarted failed for job {}", Integer.toUnsignedString(job), e);
        }
        if (j.complete()) { // every target is 0
            finish(j);
        }
    }

    private void onMsg(TcpFrames.Msg m) {
        ByteBuf payload = m.payload();
        TcpIncomingJob j = receiving.get(m.job());
        if (j == null) { // completed (in flight when the receiver said DONE), cancelled, unknown
            payload.release();
            plane.metrics().messageDiscarded();
            return;
        }
        int g = m.groupIndex();
        int index = m.index();
        if (g >= j.groupCount() || index >= j.size(g) || j.arrived(g, index)) {
            payload.release();
            protocolError(
                    "MSG "
                            + g
                            + "/"
                            + index
                            + " of job "
                            + Integer.toUnsignedString(m.job())
                            + (g < j.groupCount() && index < j.size(g)
                                    ? " arrived twice"
                                    : " is outside the job"));
            return;
        }
        int len = payload.readableBytes();
        int charge = len + MESSAGE_OVERHEAD;
        ByteBuf content;
        try {
            content = TcpMessageBuf.copyOf(payload, this, charge);
        } finally {
            payload.release();
        }
        plane.metrics().heldMessages.incrementAndGet();
        charge(charge);
        AtpMessage msg =
                AtpMessage.received(id, m.job(), j.messageId(g, index), j.groupId(g), content);
        if (j.mustHold(g, index)) {
            j.hold(msg);
            return;
        }
        deliver(j, g, index, msg, len);
        for (AtpMessage next = j.nextHeld(g); next != null; next = j.nextHeld(g)) {
            deliver(
                    j,
                    g,
                    next.messageId() - j.messageId(g, 0),
                    next,
                    next.content().readableBytes());
        }
        if (j.complete()) {
            finish(j);
        }
    }

    private void deliver(TcpIncomingJob j, int g, int index, AtpMessage msg, int len) {
        j.delivered(g, index);
        plane.metrics().messageReceived(len);
        try {
            listener.onMessage(msg);
        } catch (RuntimeException e) {
            LOG.warn("listener failed on {}; releasing it", msg, e);
            if (msg.refCnt() > 0) {
                msg.release();
            }
        }
    }

    private void onUpdate(TcpFrames.Update u) {
        TcpIncomingJob j = receiving.get(u.job());
        if (j == null) {
            return; // the job already ended here
        }
        for (int i = 0; i < u.groupIndex().length; i++) {
            if (u.groupIndex()[i] >= j.groupCount()) {
                protocolError(
                        "UPDATE of group index "
                                + u.groupIndex()[i]
                                + " of job "
                                + Integer.toUnsignedString(u.job())
                                + ", which has "
                                + j.groupCount());
                return;
            }
            j.updateMsr(u.groupIndex()[i], u.msr()[i]);
        }
        if (j.complete()) {
            finish(j);
        }
    }

    private void onDone(TcpFrames.Done d) {
        TcpOutgoingJob job = sending.get(d.job());
        if (job == null) {
            return; // cancelled here meanwhile
        }
        if (d.delivered().length != job.spec().groups().size()) {
            protocolError(
                    "DONE of job "
                            + Integer.toUnsignedString(d.job())
                            + " lists "
                            + d.delivered().length
                            + " groups, the job has "
                            + job.spec().groups().size());
            return;
        }
        job.completed(d.delivered());
    }

    private void onCancel(TcpFrames.Cancel c) {
        TcpIncomingJob j = receiving.remove(c.job());
        if (j != null) {
            end(j, c.status());
        }
    }

    /** The receiver completed the job: DONE back to the sender, the report to the listener. */
    private void finish(TcpIncomingJob j) {
        receiving.remove(j.id);
        recentJobs.put(j.id, Boolean.TRUE);
        int[] delivered = j.deliveredCounts();
        writeNow(
                TcpFrames.doneLength(delivered.length),
                out -> TcpFrames.writeDone(out, j.id, delivered));
        release(j);
        JobReport r = j.report(AtpStatus.OK, id, System.nanoTime());
        try {
            listener.onJobDone(null, r);
        } catch (RuntimeException e) {
            LOG.warn("onJobDone failed for job {}", Integer.toUnsignedString(j.id), e);
        }
    }

    /** A receiving job that ends without completion (cancelled, session ended). */
    private void end(TcpIncomingJob j, AtpStatus status) {
        recentJobs.put(j.id, Boolean.TRUE);
        release(j);
        JobReport r = j.report(status, id, System.nanoTime());
        try {
            listener.onJobDone(null, r);
        } catch (RuntimeException e) {
            LOG.warn("onJobDone failed for job {}", Integer.toUnsignedString(j.id), e);
        }
    }

    private void release(TcpIncomingJob j) {
        for (AtpMessage m : j.takeHeld()) {
            m.release();
        }
        free(j.tableCharge);
    }

    private void charge(long bytes) {
        if (held.addAndGet(bytes) > recvBudget && !readPaused) {
            readPaused = true;
            channel.config().setAutoRead(false);
            plane.metrics().readPause();
        }
    }

    /** A delivered (or held) message was released, on any thread. */
    @Override
    public void released(int charge) {
        plane.metrics().heldMessages.decrementAndGet();
        free(charge);
    }

    private void free(long charge) {
        if (held.addAndGet(-charge) <= recvBudget / 2 && readPaused) {
            try {
                channel.eventLoop().execute(this::maybeResume);
            } catch (RejectedExecutionException e) {
                // shutting down
            }
        }
    }

    private void maybeResume() {
        if (readPaused && held.get() <= recvBudget / 2 && !ended.get()) {
            readPaused = false;
            channel.config().setAutoRead(true);
        }
    }

    // ---- the end --------------------------------------------------------------------------------

    private void protocolError(String why) {
        LOG.warn("TCP data session {}: protocol violation: {}; closing", Long.toHexString(id), why);
        fail(AtpStatus.PROTOCOL, "protocol violation: " + why);
    }

    /** Closes the session (the peer ended, or the transport closes it). Idempotent. */
    void close() {
        closedLocally = true;
        shutDown(AtpStatus.CLOSED);
        channel.close();
    }

    /** The session failed on its own: tell the listener (its peer ends), then close. */
    private void fail(AtpStatus status, String why) {
        if (ended.get()) {
            return;
        }
        failure = status;
        shutDown(status);
        channel.close();
        if (!closedLocally) {
            try {
                listener.onSessionError(
                        null,
                        new AtpException(
                                status,
                                "TCP data session " + Long.toHexString(id) + " failed: " + why));
            } catch (RuntimeException e) {
                LOG.warn("onSessionError failed for session {}", Long.toHexString(id), e);
            }
        }
    }

    private void onChannelClosed() {
        if (!ended.get()) {
            fail(AtpStatus.CLOSED, "the data connection closed");
        }
        plane.sessionClosed(this);
    }

    /** Fails every job and frees the stage; incoming jobs end on the event loop. */
    private void shutDown(AtpStatus status) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        // The jobs fail first, so a sender woken below finds its job ended, not just the session.
        for (TcpOutgoingJob j : new ArrayList<>(sending.values())) {
            j.failed(status);
        }
        stageLock.lock();
        try {
            closed = true;
            sealCurrent();
            for (ByteBuf b : staged) {
                b.release();
            }
            staged.clear();
            stagedBytes = 0;
            room.signalAll();
        } finally {
            stageLock.unlock();
        }
        Runnable endIncoming =
                () -> {
                    for (TcpIncomingJob j : new ArrayList<>(receiving.values())) {
                        end(j, status);
                    }
                    receiving.clear();
                };
        if (channel.eventLoop().inEventLoop()) {
            endIncoming.run();
        } else {
            try {
                channel.eventLoop().execute(endIncoming);
            } catch (RejectedExecutionException e) {
                LOG.debug(
                        "session {}: event loop gone; incoming jobs dropped", Long.toHexString(id));
            }
        }
    }

    @Override
    public String toString() {
        return "TcpSession{id="
                + Long.toHexString(id)
                + ", peer="
                + channel.remoteAddress()
                + ", sending="
                + sending.size()
                + ", held="
                + held.get()
                + (closed ? ", closed" : "")
                + "}";
    }

    /** The session's inbound end of the pipeline. */
    private final class Handler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof TcpFrames.Frame f) {
                if (ended.get()) {
                    if (f instanceof TcpFrames.Msg m) {
                        m.payload().release();
                    }
                    return;
                }
                onFrame(f);
            } else {
                ReferenceCountUtil.release(msg);
                protocolError(
                        "unexpected " + msg.getClass().getSimpleName() + " on the data connection");
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                signalRoom();
            }
            ctx.fireChannelWritabilityChanged();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof IOException) {
                LOG.debug("TCP data session {}: I/O error", Long.toHexString(id), cause);
                fail(AtpStatus.PEER_DEAD, "I/O error: " + cause.getMessage());
            } else {
                LOG.warn("TCP data session {}: unexpected error", Long.toHexString(id), cause);
                fail(AtpStatus.INTERNAL, "unexpected error: " + cause);
            }
        }
    }
}
