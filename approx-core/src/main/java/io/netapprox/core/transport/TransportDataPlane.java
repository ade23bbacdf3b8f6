package io.netapprox.core.transport;

import io.netapprox.core.control.DataPlane;
import io.netapprox.core.control.DataPlaneKind;
import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The transport's data planes as the control plane sees them: ATP ({@link AtpDataPlane}, when the
 * engine runs) and TCP ({@link TcpDataPlane}, unless {@code dataPlane=atp}). It offers the planes
 * that run here, opens a peer for every session the control plane sets up - with an ATP session
 * when ATP is among the agreed planes (used, or probed and given up) - and hands a session's
 * authenticated TCP data connection to the TCP plane. At most {@code maxPeers} sessions at once.
 */
final class TransportDataPlane implements DataPlane, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TransportDataPlane.class);

    /** The transport's peer registry. */
    interface Peers {
        /** A session is being set up: makes its peer (throwing refuses the session). */
        ApproxPeer opening(
                long sessionId,
                InetSocketAddress udpPeer,
                boolean initiator,
                Set<DataPlaneKind> planes);

        /** The session ended (its control connection closed) or its setup failed. */
        void closing(long sessionId);

        ApproxPeer peer(long sessionId);
    }

    private final AtpDataPlane atp;
    private final TcpDataPlane tcp;
    private final int maxPeers;
    private final Peers peers;
    private final Set<Long> open = ConcurrentHashMap.newKeySet();
    private final Object lock = new Object();
    private volatile boolean closed;

    TransportDataPlane(AtpDataPlane atp, TcpDataPlane tcp, int maxPeers, Peers peers) {
        if (atp == null && tcp == null) {
            throw new IllegalArgumentException("a transport needs a data plane");
        }
        this.atp = atp;
        this.tcp = tcp;
        this.maxPeers = maxPeers;
        this.peers = peers;
    }

    /** The ATP plane, or null when the engine does not run here. */
    AtpDataPlane atp() {
        return atp;
    }

    /** The TCP plane, or null with {@code dataPlane=atp}. */
    TcpDataPlane tcp() {
        return tcp;
    }

    @Override
    public Set<DataPlaneKind> offeredPlanes() {
        Set<DataPlaneKind> s = EnumSet.noneOf(DataPlaneKind.class);
        if (atp != null) {
            s.add(DataPlaneKind.ATP);
        }
        if (tcp != null) {
            s.add(DataPlaneKind.TCP);
        }
        return s;
    }

    @Override
    public int localUdpPort() {
        return atp != null ? atp.localUdpPort() : 0;
    }

    @Override
    public InetAddress udpAddress() {
        return atp != null ? atp.udpAddress() : null;
    }

    @Override
    public void openSession(long sessionId, byte[] key, InetSocketAddress peer, boolean initiator) {
        openSession(sessionId, key, peer, initiator, EnumSet.of(DataPlaneKind.ATP));
    }

    @Override
    public void openSession(
            long sessionId,
            byte[] key,
            InetSocketAddress udpPeer,
            boolean initiator,
            Set<DataPlaneKind> planes) {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the transport's data planes are closed");
            }
            if (open.size() >= maxPeers) {
                throw new IllegalStateException(
                        "data plane is full: "
                                + open.size()
                                + " of "
                                + maxPeers
                                + " sessions open (raise ApproxTransportConfig.maxPeers)");
            }
            if (!open.add(sessionId)) {
                throw new IllegalStateException(
                        "session " + Long.toHexString(sessionId) + " already exists");
            }
        }
        try {
            peers.opening(sessionId, udpPeer, initiator, planes);
            if (planes.contains(DataPlaneKind.ATP)) {
                atp.openSession(sessionId, key, udpPeer, initiator);
            }
        } catch (RuntimeException e) {
            open.remove(sessionId);
            peers.closing(sessionId);
            throw e;
        }
    }

    @Override
    public void attachDataConnection(long sessionId, Channel channel) {
        ApproxPeer p = peers.peer(sessionId);
        if (tcp == null || p == null || !p.planes().contains(DataPlaneKind.TCP)) {
            throw new IllegalStateException(
                    "session " + Long.toHexString(sessionId) + " runs no TCP data plane here");
        }
        p.bindTcp(tcp.attach(sessionId, channel, p.listener));
    }

    /** Closes the ATP session of a peer that goes to TCP (it stays a peer). */
    void closeAtpSession(long sessionId) {
        if (atp != null) {
            atp.closeSession(sessionId);
        }
    }

    @Override
    public void closeSession(long sessionId) {
        if (!open.remove(sessionId)) {
            LOG.debug("closeSession: no session {}", Long.toHexString(sessionId));
            return;
        }
        try {
            peers.closing(sessionId);
        } finally {
            if (atp != null) {
                atp.closeSession(sessionId);
            }
            if (tcp != null) {
                tcp.closeSession(sessionId);
            }
        }
    }

    /** Sessions open through this data plane (peers being set up or set up), either plane. */
    int sessionCount() {
        return open.size();
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
        }
        try {
            if (tcp != null) {
                tcp.close();
            }
        } finally {
            if (atp != null) {
                atp.close();
            }
        }
    }
}
