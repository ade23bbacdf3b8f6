package io.netapprox.core.control;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.EnumSet;
import java.util.Set;

/**
 * What a connection's handshake learned of its peer, as it learns it (written on the event loop,
 * read from any thread through {@link ControlSession}).
 */
final class PeerParameters {
    volatile String endpointId = "?";

    /** The peer's ATP data-plane address; null when ATP is not agreed (or not yet known). */
    volatile InetSocketAddress dataAddress;

    volatile int maxFrame = WireFormat.HANDSHAKE_MAX_BODY;
    volatile int version = WireFormat.VERSION;
    volatile Set<DataPlaneKind> agreedPlanes = EnumSet.noneOf(DataPlaneKind.class);

    /**
     * The peer's data-plane address from its HELLO or HELLO_ACK: a wildcard address means the
     * address the control connection comes from.
     */
    static InetSocketAddress resolveDataAddress(InetAddress addr, int port, SocketAddress remote) {
        if (addr == null) {
            return null;
        }
        if (addr.isAnyLocalAddress() && remote instanceof InetSocketAddress r) {
            return new InetSocketAddress(r.getAddress(), port);
        }
        return new InetSocketAddress(addr, port);
    }
}
