package io.netapprox.core.control;

import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;

/**
 * The data plane as the control plane sees it. The control plane advertises the planes it can run
 * ({@link #offeredPlanes()}; for ATP the UDP address) in HELLO / HELLO_ACK, agrees with the peer on
 * the planes both can run, and opens / closes one data-plane session per control connection. For
 * the TCP plane it also authenticates the session's data connection and hands it over ({@link
 * #attachDataConnection}). The engine wrapper (io.netapprox.core.engine) is adapted to this
 * interface by the transport ({@code io.netapprox.core.transport}).
 *
 * <p>Calls come from a Netty event-loop thread and must not block for long.
 */
public interface DataPlane {
    /**
     * The planes this endpoint can run; ATP requires {@link #udpAddress()} and {@link
     * #localUdpPort()}. Default: ATP only (the data plane of protocol versions up to 3).
     */
    default Set<DataPlaneKind> offeredPlanes() {
        return EnumSet.of(DataPlaneKind.ATP);
    }

    /** The local UDP port the ATP data plane receives on (1..65535; unused without ATP). */
    int localUdpPort();

    /**
     * The address the peer should send datagrams to. A wildcard address (0.0.0.0 / ::) tells the
     * peer to use the address it reached this endpoint's control connection on.
     */
    InetAddress udpAddress();

    /**
     * Opens a data-plane session with the peer.
     *
     * @param sessionId a random non-zero 64-bit id, never reused by the allocating server while it
     *     is live
     * @param key a fresh random 32-byte session key, used for exactly one session. The
     *     implementation must copy it: the control plane wipes its array when this call returns
     * @param peer the peer's data-plane UDP address
     * @param initiator true on exactly one side: the control-plane client (the side that asked for
     *     the session)
     * @throws Exception if the session cannot be opened; the control connection is then closed with
     *     SESSION_FAILED and no session exists on either side
     */
    void openSession(long sessionId, byte[] key, InetSocketAddress peer, boolean initiator)
            throws Exception;

    /**
     * Opens a session that may run on {@code planes}, the planes both ends can run (never empty;
     * the client later picks one with DATA_PLANE_SELECT). {@code peer} is the peer's UDP address
     * when ATP is among them, else null. The default, for a data plane that offers ATP alone, calls
     * {@link #openSession(long, byte[], InetSocketAddress, boolean)}.
     */
    default void openSession(
            long sessionId,
            byte[] key,
            InetSocketAddress peer,
            boolean initiator,
            Set<DataPlaneKind> planes)
            throws Exception {
        openSession(sessionId, key, peer, initiator);
    }

    /**
     * Server side: the session's TCP data connection proved it belongs to session {@code sessionId}
     * (DATA_ATTACH). The data plane takes the channel over: it adds its handlers at the end of the
     * pipeline (the control plane then removes its own, so bytes that followed the attach reach the
     * data plane's first handler) and closes it when the session ends. Throwing refuses it (the
     * connection closes). The default refuses: no TCP data plane.
     */
    default void attachDataConnection(long sessionId, Channel channel) throws Exception {
        throw new UnsupportedOperationException("this endpoint runs no TCP data plane");
    }

    /**
     * Closes a session opened by {@link #openSession}; called once, when its control connection
     * ends.
     */
    void closeSession(long sessionId);
}
