package io.netapprox.core.transport;

import io.netapprox.core.control.DataPlane;
import io.netapprox.core.engine.AtpEndpoint;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.IncomingJobListener;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ATP engine as the control plane's {@link DataPlane}: one {@link AtpSession} of an {@link
 * AtpEndpoint} per control connection. The control plane hands out the session id and key; this
 * class copies the key, opens the session with the listener its {@link SessionCallbacks} supplies,
 * keeps it in a bounded map (at most {@code maxSessions} live sessions; more are refused, which
 * fails the control session with SESSION_FAILED on both sides) and closes it when the control
 * connection ends.
 *
 * <p>The endpoint is not owned: {@link #close()} closes this data plane's sessions, never the
 * endpoint. Thread-safe; {@link #openSession}/{@link #closeSession} are called from Netty
 * event-loop threads and do not block.
 */
public final class AtpDataPlane implements DataPlane, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AtpDataPlane.class);

    /**
     * Hooks for whoever owns the sessions (e.g. {@link ApproxTransport}). Called on the control
     * plane's event loop.
     */
    public interface SessionCallbacks {
        /**
         * A session is about to be opened; returns the listener for what the peer sends on it
         * (null: incoming messages are released at once). Throwing refuses the session.
         */
        IncomingJobListener sessionOpening(
                long sessionId, InetSocketAddress peer, boolean initiator);

        /** The session opened by {@link #sessionOpening} is open. */
        default void sessionOpened(AtpSession session) {}

        /**
         * The session is going away: the control connection ended ({@code session} is still open
         * and is closed right after this returns), or opening it failed after {@link
         * #sessionOpening} ({@code session} is null).
         */
        default void sessionClosing(long sessionId, AtpSession session) {}
    }

    private static final SessionCallbacks NO_CALLBACKS = (id, peer, initiator) -> null;

    private final AtpEndpoint endpoint;
    private final int maxSessions;
    private final InetAddress advertisedAddress;
    private final SessionCallbacks callbacks;
    private final Map<Long, AtpSession> sessions = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private int reserved; // sessions being opened or open (guarded by lock)
    private volatile boolean closed;

    /**
     * A data plane without callbacks (incoming messages are released), advertising the endpoint's
     * bind address.
     */
    public AtpDataPlane(AtpEndpoint endpoint, int maxSessions) {
        this(endpoint, maxSessions, null, null);
    }

    /**
     * @param endpoint the engine (not owned)
     * @param maxSessions the most sessions open at once through this data plane, {@code >= 1}
     * @param advertisedAddress the UDP address advertised to peers; null = the endpoint's bind
     *     address (a wildcard bind address makes the peer use the address of the control
     *     connection)
     * @param callbacks session hooks; null = none
     */
    public AtpDataPlane(
            AtpEndpoint endpoint,
            int maxSessions,
            InetAddress advertisedAddress,
            SessionCallbacks callbacks) {
        this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
        if (maxSessions < 1) {
            throw new IllegalArgumentException("maxSessions must be >= 1, got " + maxSessions);
        }
        if (maxSessions > endpoint.config().maxSessions()) {
            throw new IllegalArgumentException(
                    "maxSessions ("
                            + maxSessions
                            + ") exceeds the endpoint's "
                            + "AtpConfig.maxSessions ("
                            + endpoint.config().maxSessions()
                            + ")");
        }
        this.maxSessions = maxSessions;
        this.advertisedAddress = advertisedAddress;
        this.callbacks = callbacks != null ? callbacks : NO_CALLBACKS;
    }

    @Override
    public int localUdpPort() {
        return endpoint.localPort();
    }

    @Override
    public InetAddress udpAddress() {
        return advertisedAddress != null ? advertisedAddress : endpoint.localAddress().getAddress();
    }

    @Override
    public void openSession(long sessionId, byte[] key, InetSocketAddress peer, boolean initiator) {
        if (key == null || key.length != 32) {
            throw new IllegalArgumentException(
                    "data-plane session "
                            + Long.toHexString(sessionId)
                            + ": the key must be 32 bytes, got "
                            + (key == null ? "null" : key.length + " bytes"));
        }
        Objects.requireNonNull(peer, "peer");
        if (peer.isUnresolved()) {
            throw new IllegalArgumentException(
                    "data-plane session "
                            + Long.toHexString(sessionId)
                            + ": peer address "
                            + peer
                            + " is unresolved");
        }
        byte[] copy = key.clone(); // the control plane wipes its array when we return
        try {
            synchronized (lock) {
                if (closed || !endpoint.isOpen()) {
                    throw new IllegalStateException(
                            "data plane on UDP port " + portOrUnknown() + " is closed");
                }
                if (sessions.containsKey(sessionId)) {
                    throw new IllegalStateException(
                            "data-plane session "
                                    + Long.toHexString(sessionId)
                                    + " already exists");
                }
                if (reserved >= maxSessions) {
                    throw new IllegalStateException(
                            "data plane is full: "
                                    + reserved
                                    + " of "
                                    + maxSessions
                                    + " sessions open (raise ApproxTransportConfig.maxPeers)");
                }
                reserved++;
            }
            AtpSession s;
            try {
                IncomingJobListener listener = callbacks.sessionOpening(sessionId, peer, initiator);
                s = endpoint.openSession(sessionId, copy, peer, initiator, listener);
            } catch (RuntimeException e) {
                synchronized (lock) {
                    reserved--;
                }
                try {
                    callbacks.sessionClosing(sessionId, null);
                } catch (RuntimeException e2) {
                    e.addSuppressed(e2);
                }
                throw e;
            }
            sessions.put(sessionId, s);
            try {
                callbacks.sessionOpened(s);
            } catch (RuntimeException e) {
                closeSession(sessionId);
                throw e;
            }
            if (closed) { // raced with close(): do not leave the session behind
                closeSession(sessionId);
                throw new IllegalStateException(
                        "data plane closed while opening session " + Long.toHexString(sessionId));
            }
        } finally {
            Arrays.fill(copy, (byte) 0);
        }
    }

    @Override
    public void closeSession(long sessionId) {
        AtpSession s = sessions.remove(sessionId);
        if (s == null) {
            LOG.debug("closeSession: no data-plane session {}", Long.toHexString(sessionId));
            return;
        }
        synchronized (lock) {
            reserved--;
        }
        try {
            callbacks.sessionClosing(sessionId, s);
        } catch (RuntimeException e) {
            LOG.warn(
                    "sessionClosing callback failed for session {}",
                    Long.toHexString(sessionId),
                    e);
        } finally {
            s.close();
        }
    }

    /** The open session with this id, or null. */
    public AtpSession session(long sessionId) {
        return sessions.get(sessionId);
    }

    /** Open sessions (a snapshot). */
    public List<AtpSession> sessions() {
        return new ArrayList<>(sessions.values());
    }

    public int sessionCount() {
        return sessions.size();
    }

    public int maxSessions() {
        return maxSessions;
    }

    public AtpEndpoint endpoint() {
        return endpoint;
    }

    /**
     * Closes every session of this data plane (not the endpoint) and refuses new ones. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (Long id : new ArrayList<>(sessions.keySet())) {
            closeSession(id);
        }
    }

    private String portOrUnknown() {
        try {
            return Integer.toString(endpoint.localPort());
        } catch (IllegalStateException e) {
            return "?";
        }
    }

    @Override
    public String toString() {
        return "AtpDataPlane{port="
                + portOrUnknown()
                + ", sessions="
                + sessions.size()
                + "/"
                + maxSessions
                + (closed ? ", closed" : "")
                + "}";
    }
}
