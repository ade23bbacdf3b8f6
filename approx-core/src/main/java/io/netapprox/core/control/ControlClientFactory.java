package io.netapprox.core.control;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Creates {@link ControlClient}s that share one event-loop group (like Spark's
 * TransportClientFactory). One factory per process is the norm. {@link #close()} closes every
 * client it created and stops its threads.
 */
public final class ControlClientFactory implements AutoCloseable {
    private final ControlConfig config;
    private final DataPlane dataPlane;
    private final ControlHandler handler;
    private final ControlMetrics metrics = new ControlMetrics();
    private final EventLoopGroup group;
    private final Set<ControlConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /**
     * @param config client configuration (bind address/port are ignored)
     * @param dataPlane the local data plane, advertised in HELLO and given each session
     * @param handler serves requests the server sends on established sessions; {@code null} refuses
     *     them all
     */
    public ControlClientFactory(ControlConfig config, DataPlane dataPlane, ControlHandler handler) {
        this.config = Objects.requireNonNull(config, "config");
        this.dataPlane = Objects.requireNonNull(dataPlane, "dataPlane");
        this.handler = handler != null ? handler : new ControlHandler() {};
        this.group =
                NioEventLoops.create(
                        config.eventLoopThreads(),
                        new DefaultThreadFactory("netapprox-ctl-client", true));
    }

    /**
     * Connects, runs the handshake and sets up a session. The future completes with a ready client,
     * or fails with the reason: {@link ControlException} (e.g. AUTH_FAILED, VERSION_MISMATCH,
     * HANDSHAKE_TIMEOUT), {@link java.net.ConnectException} / connect timeout, or {@link
     * ControlClosedException}.
     */
    public CompletableFuture<ControlClient> connect(InetSocketAddress server) {
        Objects.requireNonNull(server, "server");
        if (closed) {
            return CompletableFuture.failedFuture(
                    new IllegalStateException("client factory is closed"));
        }
        CompletableFuture<ControlClient> result = new CompletableFuture<>();
        ControlConnection[] holder = new ControlConnection[1];
        Bootstrap b =
                NioEventLoops.clientBootstrap(group, config)
                        .handler(
                                new ChannelInitializer<SocketChannel>() {
                                    @Override
                                    protected void initChannel(SocketChannel ch) {
                                        ControlConnection conn =
                                                ControlServer.initPipeline(
                                                        ch.pipeline(),
                                                        ControlConnection.Role.CLIENT,
                                                        config,
                                                        dataPlane,
                                                        handler,
                                                        metrics,
                                                        null,
                                                        null,
                                                        server);
                                        holder[0] = conn;
                                        connections.add(conn);
                                        conn.closeFuture()
                                                .whenComplete((v, e) -> connections.remove(conn));
                                        conn.established()
                                                .whenComplete(
                                                        (s, e) -> {
                                                            if (e != null) {
                                                                result.completeExceptionally(e);
                                                            } else if (!result.complete(
                                                                    new ControlClient(conn))) {
                                                                conn.close(); // the caller gave
                                                                // up (cancelled)
                                                                // before the
                                                                // session was
                                                                // ready
                                                            }
                                                        });
                                    }
                                });
        ChannelFuture cf;
        try {
            cf = b.connect(server);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        cf.addListener(
                f -> {
                    if (!f.isSuccess()) {
                        result.completeExceptionally(f.cause());
                    }
                });
        if (closed) { // raced with close()
            Channel ch = cf.channel();
            ch.close();
        }
        return result;
    }

    public ControlMetrics metrics() {
        return metrics;
    }

    public ControlConfig config() {
        return config;
    }

    /**
     * Closes every client of this factory and stops its threads (waits up to the shutdown timeout).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (ControlConnection c : connections) {
            c.close();
        }
        ControlServer.shutdownGroup(group, config);
    }
}
