package io.netapprox.kafka.relay;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * A consumer's side of the relays: one client-only {@link ApproxTransport} (an ATP endpoint and a
 * control client, started on the first {@link #open}) and one {@link RemoteStream} per relay.
 */
public final class RelayClient implements RelayLink {
    private final byte[] secret;
    private final long pullWaitMs;
    private ApproxTransport transport;
    private boolean closed;

    /**
     * @param secret the relays' shared secret, or null when they do not authenticate
     * @param pullWaitMs the longest a relay holds a pull (requests time out this plus 30 s later)
     */
    public RelayClient(byte[] secret, long pullWaitMs) {
        this.secret = secret == null ? null : secret.clone();
        this.pullWaitMs = pullWaitMs;
    }

    @Override
    public synchronized RelayStream open(String address, StreamSpec spec) {
        if (closed) {
            throw new RelayException(RelayException.Reason.UNAVAILABLE, "consumer closed");
        }
        if (transport == null) {
            transport =
                    ApproxTransport.start(
                            ApproxTransportConfig.builder()
                                    .atp(
                                            ApproxTransportConfig.defaultAtp()
                                                    .bindAddress("0.0.0.0")
                                                    .bindPort(0)
                                                    .build())
                                    .control(
                                            ControlConfig.builder()
                                                    .authSecret(secret)
                                                    .requestTimeout(
                                                            Duration.ofMillis(pullWaitMs + 30_000))
                                                    .build())
                                    .serverEnabled(false)
                                    .build());
        }
        return new RemoteStream(transport, address, parse(address), spec);
    }

    private static InetSocketAddress parse(String address) {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        return new InetSocketAddress(host, Integer.parseInt(address.substring(colon + 1)));
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (transport != null) {
            transport.close();
            transport = null;
        }
    }
}
