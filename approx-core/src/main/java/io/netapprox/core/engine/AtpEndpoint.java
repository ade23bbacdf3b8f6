package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import java.lang.ref.Cleaner;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;

/**
 * One ATP engine: a UDP socket, the engine's I/O thread and one event thread ("netapprox-events")
 * that drains engine events in batches and dispatches them to the sessions' {@link
 * IncomingJobListener}s and to {@link OutgoingJob#outcome()} futures. One endpoint per JVM is the
 * norm; every session and job of the process shares it.
 *
 * <p>{@link #close()} closes every session, stops the event thread and frees the native engine;
 * closing twice is harmless, and every method called after close throws {@link
 * IllegalStateException} ("... closed"). A {@link Cleaner} closes an endpoint that became
 * unreachable without being closed. If delivered messages are still unreleased at close, the native
 * engine is freed when the last one is released (see docs/java-api.md).
 */
public final class AtpEndpoint implements AutoCloseable {
    private static final Cleaner CLEANER =
            Cleaner.create(
                    r -> {
                        Thread t = new Thread(r, "netapprox-cleaner");
                        t.setDaemon(true);
                        return t;
                    });

    private final EndpointCore core;
    private final Cleaner.Cleanable cleanable;

    private AtpEndpoint(EndpointCore core) {
        this.core = core;
        this.cleanable = CLEANER.register(this, core::close);
    }

    /**
     * Opens an endpoint (binds the socket, starts the engine's I/O thread and the event thread).
     */
    public static AtpEndpoint open(AtpConfig config) {
        Objects.requireNonNull(config, "config");
        AtpNative.ensureAvailability();
        String[] err = new String[1];
        long h = NativeEngine.engineOpen(config.toNative(), config.bindAddress(), err);
        if (h <= 0) {
            AtpStatus s = AtpStatus.of((int) h);
            String msg =
                    "opening the ATP engine on "
                            + config.bindAddress()
                            + ":"
                            + config.bindPort()
                            + " failed"
                            + (err[0] == null || err[0].isEmpty() ? "" : ": " + err[0]);
            if (s == AtpStatus.INVALID_ARGUMENT) {
                throw new IllegalArgumentException(msg + " (" + s.nativeName() + ")");
            }
            throw new AtpException(s, msg);
        }
        int port = NativeEngine.localPort(h);
        if (port < 0) {
            NativeEngine.engineClose(h);
            throw new AtpException(AtpStatus.of(port), "reading the local port failed");
        }
        EndpointCore core = new EndpointCore(config, h, port);
        AtpEndpoint ep = new AtpEndpoint(core);
        core.start();
        return ep;
    }

    /** The bound UDP port. */
    public int localPort() {
        core.ensureOpen();
        return core.localPort;
    }

    /** The bound UDP address (the configured bind address and {@link #localPort()}). */
    public InetSocketAddress localAddress() {
        core.ensureOpen();
        try {
            return new InetSocketAddress(
                    InetAddress.getByName(core.config.bindAddress()), core.localPort);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    public AtpConfig config() {
        return core.config;
    }

    /**
     * Opens a session without a listener (incoming messages are released at once until one is set).
     */
    public AtpSession openSession(
            long sessionId, byte[] key, InetSocketAddress peer, boolean initiator) {
        return openSession(sessionId, key, peer, initiator, null);
    }

    /**
     * Opens a session toward {@code peer}. Both ends use the same {@code sessionId} and 32-byte
     * {@code key} (handed out by the control plane) and opposite {@code initiator} flags.
     */
    public AtpSession openSession(
            long sessionId,
            byte[] key,
            InetSocketAddress peer,
            boolean initiator,
            IncomingJobListener listener) {
        core.ensureOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(peer, "peer");
        if (key.length != 32) {
            throw new IllegalArgumentException("session key must be 32 bytes, got " + key.length);
        }
        String host =
                peer.getAddress() != null
                        ? peer.getAddress().getHostAddress()
                        : peer.getHostString();
        AtpSession s = new AtpSession(core, sessionId, peer, listener);
        if (core.hasSession(sessionId)) {
            throw new IllegalStateException(
                    "session " + Long.toUnsignedString(sessionId) + " already exists");
        }
        int rc =
                NativeEngine.sessionOpen(
                        core.handle, sessionId, key, host, peer.getPort(), initiator);
        if (rc == AtpStatus.ADDRESS.code()) {
            throw new IllegalArgumentException(
                    "peer address "
                            + peer
                            + " is not usable by this endpoint's socket ("
                            + AtpStatus.ADDRESS.nativeName()
                            + ")");
        }
        AtpException.check(rc, "opening session " + Long.toUnsignedString(sessionId));
        core.register(s);
        return s;
    }

    /** Open sessions. */
    public List<AtpSession> sessions() {
        core.ensureOpen();
        return core.sessionsSnapshot();
    }

    /** Engine and driver counters. */
    public AtpStats stats() {
        return core.stats();
    }

    /** Delivered messages not yet released by the application (they hold receive-buffer space). */
    public int unreleasedMessages() {
        return core.outstandingMessages();
    }

    public boolean isOpen() {
        return !core.isClosed();
    }

    @Override
    public void close() {
        cleanable.clean(); // runs core.close() exactly once
    }

    @Override
    public String toString() {
        return core.name + (core.isClosed() ? " (closed)" : "");
    }
}
