package io.netapprox.core.control;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counters of one {@link ControlServer} or {@link ControlClientFactory} (all its connections).
 * Thread-safe; values only grow.
 */
public final class ControlMetrics {
    final AtomicLong connectionsOpened = new AtomicLong();
    final AtomicLong connectionsRefused = new AtomicLong();
    final AtomicLong connectionsClosed = new AtomicLong();
    final AtomicLong framesReceived = new AtomicLong();
    final AtomicLong framesSent = new AtomicLong();
    final AtomicLong malformedFrames = new AtomicLong();
    final AtomicLong versionMismatches = new AtomicLong();
    final AtomicLong oversizedFrames = new AtomicLong();
    final AtomicLong unknownMessageTypes = new AtomicLong();
    final AtomicLong unexpectedMessages = new AtomicLong();
    final AtomicLong authSuccesses = new AtomicLong();
    final AtomicLong authFailures = new AtomicLong();
    final AtomicLong handshakeTimeouts = new AtomicLong();
    final AtomicLong idleTimeouts = new AtomicLong();
    final AtomicLong sessionsOpened = new AtomicLong();
    final AtomicLong sessionsClosed = new AtomicLong();
    final AtomicLong sessionFailures = new AtomicLong();
    final AtomicLong requestTimeouts = new AtomicLong();
    final AtomicLong handlerErrors = new AtomicLong();
    final AtomicLong lateResponses = new AtomicLong();
    final AtomicLong errorsReceived = new AtomicLong();
    final AtomicLong ioErrors = new AtomicLong();
    final AtomicLong warningsLogged = new AtomicLong();
    final AtomicLong readPauses = new AtomicLong();
    final AtomicLong sendQueueOverflows = new AtomicLong();
    final AtomicLong peakQueuedBytes = new AtomicLong();
    final AtomicLong dataConnectionsAttached = new AtomicLong();
    final AtomicLong dataConnectionsRefused = new AtomicLong();

    void notePeakQueuedBytes(long queued) {
        peakQueuedBytes.accumulateAndGet(queued, Math::max);
    }

    public long connectionsOpened() {
        return connectionsOpened.get();
    }

    /** Connections a server closed at once because {@code maxConnections} were open. */
    public long connectionsRefused() {
        return connectionsRefused.get();
    }

    public long connectionsClosed() {
        return connectionsClosed.get();
    }

    public long activeConnections() {
        return connectionsOpened.get() - connectionsClosed.get();
    }

    public long framesReceived() {
        return framesReceived.get();
    }

    public long framesSent() {
        return framesSent.get();
    }

    /**
     * Frames rejected as malformed (bad magic, truncated, bad field lengths or values, trailing
     * bytes).
     */
    public long malformedFrames() {
        return malformedFrames.get();
    }

    public long versionMismatches() {
        return versionMismatches.get();
    }

    public long oversizedFrames() {
        return oversizedFrames.get();
    }

    public long unknownMessageTypes() {
        return unknownMessageTypes.get();
    }

    /** Well-formed messages that arrived in a state that does not allow them. */
    public long unexpectedMessages() {
        return unexpectedMessages.get();
    }

    public long authSuccesses() {
        return authSuccesses.get();
    }

    public long authFailures() {
        return authFailures.get();
    }

    public long handshakeTimeouts() {
        return handshakeTimeouts.get();
    }

    public long idleTimeouts() {
        return idleTimeouts.get();
    }

    public long sessionsOpened() {
        return sessionsOpened.get();
    }

    public long sessionsClosed() {
        return sessionsClosed.get();
    }

    /** Sessions the data plane or the handler refused. */
    public long sessionFailures() {
        return sessionFailures.get();
    }

    /**
     * TCP data connections that proved their session and were handed to the data plane (server:
     * also counted in {@link #connectionsClosed()}: no longer a control connection).
     */
    public long dataConnectionsAttached() {
        return dataConnectionsAttached.get();
    }

    /**
     * TCP data connections refused: no session expects one, a proof that does not match, a second
     * one for a session, or the data plane refused it.
     */
    public long dataConnectionsRefused() {
        return dataConnectionsRefused.get();
    }

    /** Outbound requests that got no response in time. */
    public long requestTimeouts() {
        return requestTimeouts.get();
    }

    /**
     * Inbound requests whose handler failed unexpectedly (not a deliberate {@link
     * ControlException}).
     */
    public long handlerErrors() {
        return handlerErrors.get();
    }

    /** Responses that arrived for no pending request (typically after the request timed out). */
    public long lateResponses() {
        return lateResponses.get();
    }

    /** ERROR frames received from peers. */
    public long errorsReceived() {
        return errorsReceived.get();
    }

    /** Connections that ended with an I/O error (reset, TLS failure). */
    public long ioErrors() {
        return ioErrors.get();
    }

    /**
     * WARN lines logged by the control plane. A misbehaving connection logs at most one (its first
     * failure); the rest goes to DEBUG and to the counters above.
     */
    public long warningsLogged() {
        return warningsLogged.get();
    }

    /**
     * Times a connection stopped reading because its peer did not read what it was sent
     * (backpressure).
     */
    public long readPauses() {
        return readPauses.get();
    }

    /**
     * Writes refused because a connection's send queue would exceed {@code maxQueuedBytes}: an
     * application request fails with {@code OVERLOADED}; a reply or keepalive closes the connection
     * (the peer does not read).
     */
    public long sendQueueOverflows() {
        return sendQueueOverflows.get();
    }

    /**
     * The largest send queue (bytes) any one connection had; never above {@code maxQueuedBytes}.
     */
    public long peakQueuedBytes() {
        return peakQueuedBytes.get();
    }

    /** All counters by name. */
    public Map<String, Long> snapshot() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("connectionsOpened", connectionsOpened());
        m.put("connectionsRefused", connectionsRefused());
        m.put("connectionsClosed", connectionsClosed());
        m.put("framesReceived", framesReceived());
        m.put("framesSent", framesSent());
        m.put("malformedFrames", malformedFrames());
        m.put("versionMismatches", versionMismatches());
        m.put("oversizedFrames", oversizedFrames());
        m.put("unknownMessageTypes", unknownMessageTypes());
        m.put("unexpectedMessages", unexpectedMessages());
        m.put("authSuccesses", authSuccesses());
        m.put("authFailures", authFailures());
        m.put("handshakeTimeouts", handshakeTimeouts());
        m.put("idleTimeouts", idleTimeouts());
        m.put("sessionsOpened", sessionsOpened());
        m.put("sessionsClosed", sessionsClosed());
        m.put("sessionFailures", sessionFailures());
        m.put("requestTimeouts", requestTimeouts());
        m.put("handlerErrors", handlerErrors());
        m.put("lateResponses", lateResponses());
        m.put("errorsReceived", errorsReceived());
        m.put("ioErrors", ioErrors());
        m.put("warningsLogged", warningsLogged());
        m.put("readPauses", readPauses());
        m.put("sendQueueOverflows", sendQueueOverflows());
        m.put("peakQueuedBytes", peakQueuedBytes());
        m.put("dataConnectionsAttached", dataConnectionsAttached());
        m.put("dataConnectionsRefused", dataConnectionsRefused());
        return m;
    }

    @Override
    public String toString() {
        return "ControlMetrics" + snapshot();
    }
}
