package io.netapprox.core.control;

import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The UDP data plane as the control plane sees it. The control plane advertises the data plane's
 * address in HELLO / HELLO_ACK and opens / closes one data-plane session per control connection.
 * The engine wrapper (io.netapprox.core.engine) is adapted to this interface by the integration.
 *
 * <p>Calls come from a Netty event-loop thread and must not block for long.
 */
public interface DataPlane {
    /** The local UDP port the data plane receives on (1..65535). */
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
     * Closes a session opened by {@link #openSession}; called once, when its control connection
     * ends.
     */
    void closeSession(long sessionId);
}
