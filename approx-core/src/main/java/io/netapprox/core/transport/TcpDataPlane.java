package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.IncomingJobListener;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The TCP data plane of one transport: its {@link TcpSession}s (one per peer that runs on TCP, each
 * over the data connection the control plane authenticated), their send policy and their counters.
 * The limits are the engine's ({@link AtpConfig}: jobs per session, groups and messages per job,
 * message size, send and receive buffers), so a job that runs on one plane runs on the other.
 * Thread-safe.
 */
final class TcpDataPlane implements AutoCloseable {
    private final AtpConfig limits;
    private final TcpSendPolicy policy;
    private final Metrics metrics = new Metrics();
    private final Map<Long, TcpSession> sessions = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** The plane's counters (what {@link DataPlaneMetrics} reports). */
    static final class Metrics {
        final AtomicLong messagesSent = new AtomicLong();
        final AtomicLong bytesSent = new AtomicLong();
        final AtomicLong messagesReceived = new AtomicLong();
        final AtomicLong bytesReceived = new AtomicLong();
        final AtomicLong messagesDiscarded = new AtomicLong();
        final AtomicLong sendStalls = new AtomicLong();
        final AtomicLong readPauses = new AtomicLong();

        /** Messages delivered (or held for order) and not yet released. */
        final AtomicLong heldMessages = new AtomicLong();

        void messageSent(int bytes) {
            messagesSent.incrementAndGet();
            bytesSent.addAndGet(bytes);
        }

        void messageReceived(int bytes) {
            messagesReceived.incrementAndGet();
            bytesReceived.addAndGet(bytes);
        }

        void messageDiscarded() {
            messagesDiscarded.incrementAndGet();
        }

        void sendStall() {
            sendStalls.incrementAndGet();
        }

        void readPause() {
            readPauses.incrementAndGet();
        }
    }

    TcpDataPlane(AtpConfig limits, TcpSendPolicy policy) {
        this.limits = limits;
        this.policy = policy;
    }

    TcpSendPolicy policy() {
        return policy;
    }

    Metrics metrics() {
        return metrics;
    }

    /**
     * Takes over session {@code sessionId}'s authenticated data connection (on its event loop):
     * installs the session's handlers and registers it.
     *
     * @throws IllegalStateException the plane is closed or the session already has a connection
     */
    TcpSession attach(long sessionId, Channel channel, IncomingJobListener listener) {
        if (closed) {
            throw new IllegalStateException("the TCP data plane is closed");
        }
        TcpSession s = new TcpSession(sessionId, channel, this, limits, listener);
        if (sessions.putIfAbsent(sessionId, s) != null) {
            throw new IllegalStateException(
                    "session " + Long.toHexString(sessionId) + " already has a data connection");
        }
        s.install();
        return s;
    }

    TcpSession session(long sessionId) {
        return sessions.get(sessionId);
    }

    /** Closes a session's data connection (its peer ended); harmless without one. */
    void closeSession(long sessionId) {
        TcpSession s = sessions.remove(sessionId);
        if (s != null) {
            s.close();
        }
    }

    void sessionClosed(TcpSession s) {
        sessions.remove(s.id(), s);
    }

    int sessionCount() {
        return sessions.size();
    }

    List<TcpSession> sessions() {
        return new ArrayList<>(sessions.values());
    }

    @Override
    public void close() {
        closed = true;
        for (Long id : new ArrayList<>(sessions.keySet())) {
            closeSession(id);
        }
    }
}
