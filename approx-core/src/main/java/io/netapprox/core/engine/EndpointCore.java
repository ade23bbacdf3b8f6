package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything an {@link AtpEndpoint} owns: the native engine handle, the session registry and the
 * event thread. Kept separate from the public facade so that the facade can become
 * phantom-reachable (and be cleaned by the {@link java.lang.ref.Cleaner}) while the event thread -
 * a GC root - still runs with this object.
 *
 * <p>Lifetime of the native engine. Delivered messages point into engine memory, so {@code
 * na_engine_close} must not run while any is unreleased. {@code outstanding} counts
 * delivered-but-unreleased messages; it is raised under {@code lock} by the event thread
 * <em>before</em> any polled message memory is exposed, and close checks it under the same lock: if
 * it is zero the engine is closed at once, otherwise the close is deferred until the last release
 * (waiting up to {@link AtpConfig#closeTimeout()} in {@code close()}, then logging and returning).
 */
final class EndpointCore implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(EndpointCore.class);
    private static final int POLL_TIMEOUT_MS = 50;

    final AtpConfig config;
    final long handle;
    final int localPort;
    final String name;
    private final int batch;
    private final ByteBuffer events;
    private final Thread thread;
    private final AtomicBoolean closed = new AtomicBoolean();

    private final Object lock = new Object();
    // guarded by lock
    private int outstanding;
    private boolean stopRequested;
    private boolean nativeClosed;
    private boolean closePending;
    private final Object sessionsLock = new Object();
    private volatile LongObjectHashMap<AtpSession> sessions = new LongObjectHashMap<>();
    // event-thread only
    private final List<AtpSession> readTouched = new ArrayList<>();
    // Messages released on the event thread (the common case: a listener consumes a message in
    // onMessage) are handed back to the engine together at the end of each event batch: one JNI
    // crossing, one engine lock and one I/O-thread wake-up per batch instead of per message.
    private final ByteBuffer releases;
    private final long releasesAddress;
    private int pendingReleases;
    private boolean dispatching;

    EndpointCore(AtpConfig config, long handle, int localPort) {
        this.config = config;
        this.handle = handle;
        this.localPort = localPort;
        this.name = "AtpEndpoint(port " + localPort + ")";
        this.batch = config.eventBatchSize();
        this.events =
                ByteBuffer.allocateDirect(batch * NativeEngine.EVENT_RECORD_BYTES)
                        .order(ByteOrder.nativeOrder());
        this.releases =
                ByteBuffer.allocateDirect(batch * Long.BYTES).order(ByteOrder.nativeOrder());
        this.releasesAddress = NativeEngine.directAddress(releases);
        this.thread = new Thread(this, "netapprox-events");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    boolean isClosed() {
        return closed.get();
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(name + " closed");
        }
    }

    boolean inEventThread() {
        return Thread.currentThread() == thread;
    }

    // ---- sessions -------------------------------------------------------------------------------
    void register(AtpSession s) {
        synchronized (sessionsLock) {
            LongObjectHashMap<AtpSession> m = new LongObjectHashMap<>(sessions.size() + 1);
            m.putAll(sessions);
            m.put(s.id(), s);
            sessions = m;
        }
    }

    void unregister(AtpSession s) {
        synchronized (sessionsLock) {
            if (sessions.get(s.id()) != s) {
                return;
            }
            LongObjectHashMap<AtpSession> m = new LongObjectHashMap<>(sessions.size());
            m.putAll(sessions);
            m.remove(s.id());
            sessions = m;
        }
    }

    boolean hasSession(long id) {
        return sessions.containsKey(id);
    }

    List<AtpSession> sessionsSnapshot() {
        return new ArrayList<>(sessions.values());
    }

    // ---- messages -------------------------------------------------------------------------------
    /**
     * Called by NativeMessageBuf.deallocate (any thread). On the event thread, while it dispatches
     * a batch, the handle is queued and handed to the engine with the rest of the batch
     * (flushReleases); the message's memory is not read again after its last release either way.
     * The message counts as released at once ({@link #outstandingMessages()}); should the engine be
     * closed before the flush, the flush gets NA_ERR_CLOSED_HANDLE (engine handles are never
     * reused), which is harmless.
     */
    void releaseMessage(long messageHandle) {
        if (dispatching && inEventThread() && releasesAddress != 0) {
            releases.putLong(pendingReleases * Long.BYTES, messageHandle);
            if (++pendingReleases == batch) {
                flushReleases();
            }
        } else {
            NativeEngine.messageRelease(
                    handle, messageHandle); // NA_ERR_CLOSED_HANDLE after close: harmless
        }
        released(1);
    }

    /** Event thread: hands the queued releases to the engine in one crossing. */
    private void flushReleases() {
        int n = pendingReleases;
        if (n == 0) {
            return;
        }
        pendingReleases = 0;
        NativeEngine.messageReleaseBatch(
                handle, releasesAddress, n); // NA_ERR_CLOSED_HANDLE after close: harmless
    }

    private void released(int n) {
        boolean closeNow = false;
        synchronized (lock) {
            outstanding -= n;
            if (outstanding == 0) {
                if (closePending && !nativeClosed) {
                    nativeClosed = true;
                    closeNow = true;
                }
                lock.notifyAll();
            }
        }
        if (closeNow) {
            NativeEngine.engineClose(handle);
            log.debug("{}: last delivered message released, native engine closed", name);
        }
    }

    int outstandingMessages() {
        synchronized (lock) {
            return outstanding;
        }
    }

    // ---- close ----------------------------------------------------------------------------------
    /** Idempotent; also the Cleaner action (so it must not reference the facade). */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // 1. Sessions: tell peers (best effort CLOSE), fail pending jobs.
        for (AtpSession s : sessionsSnapshot()) {
            s.closeForEndpoint();
        }
        // 2. Stop dispatching; close the engine now unless delivered messages are still held by the
        // application.
        boolean closeNow;
        synchronized (lock) {
            stopRequested = true;
            if (outstanding == 0) {
                nativeClosed = true;
                closeNow = true;
            } else {
                closePending = true;
                closeNow = false;
            }
        }
        if (closeNow) {
            NativeEngine.engineClose(handle); // wakes the event thread (NA_ERR_CLOSED)
        } else {
            long deadline = System.nanoTime() + config.closeTimeout().toNanos();
            synchronized (lock) {
                while (!nativeClosed && outstanding > 0 && !inEventThread()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        TimeUnit.NANOSECONDS.timedWait(lock, left);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
                if (!nativeClosed && outstanding > 0) {
                    log.warn(
                            "{} closed with {} delivered message(s) not released: the native engine (socket, I/O thread,"
                                    + " receive buffers) stays alive until they are released",
                            name,
                            outstanding);
                }
            }
        }
        if (!inEventThread()) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- event loop -----------------------------------------------------------------------------
    @Override
    public void run() {
        try {
            while (true) {
                int n = NativeEngine.pollEvents(handle, events, batch, POLL_TIMEOUT_MS);
                if (n < 0) {
                    if (n != AtpStatus.CLOSED.code() && n != AtpStatus.CLOSED_HANDLE.code()) {
                        log.error("{}: polling events failed: {}", name, AtpStatus.of(n));
                    }
                    break;
                }
                if (n == 0) {
                    synchronized (lock) {
                        if (stopRequested) {
                            break;
                        }
                    }
                    continue;
                }
                boolean dispatch;
                boolean engineAlive;
                synchronized (lock) {
                    engineAlive = !nativeClosed;
                    dispatch = engineAlive && !stopRequested;
                    if (dispatch) {
                        outstanding += countMessages(n);
                    }
                }
                if (dispatch) {
                    dispatch(n);
                } else {
                    discard(n, engineAlive);
                    if (!engineAlive) {
                        break;
                    }
                }
            }
        } catch (Throwable t) {
            log.error("{}: event thread died", name, t);
        } finally {
            // Only this thread touches them, and it polls no more: free now rather than at some
            // later GC, so endpoints opened and closed in a loop do not pile up direct memory.
            PlatformDependent.freeDirectBuffer(events);
            PlatformDependent.freeDirectBuffer(releases);
        }
    }

    private int countMessages(int n) {
        int c = 0;
        for (int i = 0; i < n; i++) {
            if (events.getInt(i * NativeEngine.EVENT_RECORD_BYTES + NativeEngine.EV_TYPE)
                    == NativeEngine.EVENT_MESSAGE) {
                c++;
            }
        }
        return c;
    }

    /** Frees what a batch owns without dispatching it (reports are independent of the engine). */
    private void discard(int n, boolean engineAlive) {
        for (int i = 0; i < n; i++) {
            int base = i * NativeEngine.EVENT_RECORD_BYTES;
            int type = events.getInt(base + NativeEngine.EV_TYPE);
            if (type == NativeEngine.EVENT_JOB_DONE) {
                long r = events.getLong(base + NativeEngine.EV_REPORT);
                if (r != 0) {
                    NativeEngine.reportFree(r);
                }
            } else if (type == NativeEngine.EVENT_MESSAGE && engineAlive) {
                NativeEngine.messageRelease(handle, events.getLong(base + NativeEngine.EV_HANDLE));
            }
        }
    }

    private void dispatch(int n) {
        dispatching = true;
        try {
            dispatchEvents(n);
        } finally {
            dispatching = false;
            flushReleases();
        }
    }

    private void dispatchEvents(int n) {
        LongObjectHashMap<AtpSession> map = sessions;
        for (int i = 0; i < n; i++) {
            int base = i * NativeEngine.EVENT_RECORD_BYTES;
            int type = events.getInt(base + NativeEngine.EV_TYPE);
            long sid = events.getLong(base + NativeEngine.EV_SESSION);
            AtpSession s = map.get(sid);
            try {
                switch (type) {
                    case NativeEngine.EVENT_MESSAGE:
                        onMessage(s, base);
                        break;
                    case NativeEngine.EVENT_MESSAGE_LOST:
                        if (s != null) {
                            s.fireMessageLost(
                                    events.getInt(base + NativeEngine.EV_JOB),
                                    events.getInt(base + NativeEngine.EV_MESSAGE),
                                    events.getLong(base + NativeEngine.EV_GROUP));
                        }
                        break;
                    case NativeEngine.EVENT_JOB_STARTED:
                        if (s != null) {
                            s.fireJobStarted(events.getInt(base + NativeEngine.EV_JOB));
                        }
                        break;
                    case NativeEngine.EVENT_JOB_DONE:
                        onJobDone(
                                s,
                                events.getLong(base + NativeEngine.EV_REPORT),
                                events.getInt(base + NativeEngine.EV_JOB),
                                events.getInt(base + NativeEngine.EV_STATUS));
                        break;
                    case NativeEngine.EVENT_SESSION_ERROR:
                        if (s != null) {
                            s.fireSessionError(
                                    AtpStatus.of(events.getInt(base + NativeEngine.EV_STATUS)));
                        }
                        break;
                    default:
                        break; // EPOCH samples: not surfaced yet
                }
            } catch (Throwable t) {
                log.warn("{}: listener threw while handling event type {}", name, type, t);
            }
        }
        for (int i = 0; i < readTouched.size(); i++) {
            AtpSession s = readTouched.get(i);
            s.readPending = false;
            try {
                s.fireReadComplete();
            } catch (Throwable t) {
                log.warn("{}: listener threw in onReadComplete", name, t);
            }
        }
        readTouched.clear();
    }

    /**
     * Allocation-free in steady state: the record carries the message's address and length, and the
     * AtpMessage and its content ByteBuf come from a Recycler (returned by the last release).
     */
    private void onMessage(AtpSession s, int base) {
        long msgHandle = events.getLong(base + NativeEngine.EV_HANDLE);
        IncomingJobListener l = s == null ? null : s.listener();
        if (l == null) {
            releaseMessage(msgHandle); // nobody to deliver to: free the receive buffer at once
            return;
        }
        long address = events.getLong(base + NativeEngine.EV_DATA);
        long len = events.getLong(base + NativeEngine.EV_LEN);
        if ((address == 0 && len != 0)
                || len < 0
                || len > Integer.MAX_VALUE
                || !NativeMessageBuf.supported()) {
            releaseMessage(msgHandle);
            throw new IllegalStateException(
                    NativeMessageBuf.supported()
                            ? "unusable message record (address "
                                    + address
                                    + ", length "
                                    + len
                                    + ")"
                            : "delivered messages need sun.misc.Unsafe (Netty's PlatformDependent.hasUnsafe() is false)");
        }
        AtpMessage msg;
        try {
            msg =
                    AtpMessage.delivered(
                            this,
                            s,
                            events.getInt(base + NativeEngine.EV_JOB),
                            events.getInt(base + NativeEngine.EV_MESSAGE),
                            events.getLong(base + NativeEngine.EV_GROUP),
                            msgHandle,
                            address,
                            (int) len);
        } catch (Throwable t) {
            releaseMessage(msgHandle);
            throw t;
        }
        if (!s.readPending) {
            s.readPending = true;
            readTouched.add(s);
        }
        try {
            l.onMessage(msg);
        } catch (Throwable t) {
            if (msg.refCnt() > 0) {
                msg.release(msg.refCnt());
            }
            throw t;
        }
    }

    private void onJobDone(AtpSession s, long reportPtr, int jobId, int status) {
        JobReport report = null;
        if (reportPtr != 0) {
            try {
                report = NativeReports.read(reportPtr);
            } finally {
                NativeEngine.reportFree(reportPtr);
            }
        }
        if (s == null) {
            return;
        }
        s.fireJobDone(jobId, AtpStatus.of(status), report);
    }

    // ---- misc -----------------------------------------------------------------------------------
    AtpStats stats() {
        ensureOpen();
        long[] raw = new long[AtpStats.NATIVE.size()];
        AtpException.check(NativeEngine.engineStats(handle, raw), name + ".stats");
        return new AtpStats(raw);
    }
}
