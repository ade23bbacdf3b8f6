package io.netapprox.core.control;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** The only fake in these tests: a data plane that records what the control plane asks of it. */
final class RecordingDataPlane implements DataPlane {
    record Opened(long sessionId, byte[] key, InetSocketAddress peer, boolean initiator) {}

    final List<Opened> opened = new CopyOnWriteArrayList<>();
    final List<Long> closed = new CopyOnWriteArrayList<>();
    private final InetAddress address;
    private final int port;
    volatile boolean failOpen;

    RecordingDataPlane(int port) {
        this(InetAddress.getLoopbackAddress(), port);
    }

    RecordingDataPlane(InetAddress address, int port) {
        this.address = address;
        this.port = port;
    }

    @Override
    public int localUdpPort() {
        return port;
    }

    @Override
    public InetAddress udpAddress() {
        return address;
    }

    @Override
    public void openSession(long sessionId, byte[] key, InetSocketAddress peer, boolean initiator) {
        if (failOpen) {
            throw new IllegalStateException("no room for another session");
        }
        opened.add(
                new Opened(sessionId, key.clone(), peer, initiator)); // the contract: copy the key
    }

    @Override
    public void closeSession(long sessionId) {
        closed.add(sessionId);
    }

    int openCount() {
        return opened.size();
    }
}
