package io.netapprox.core.control;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The control-plane server: accepts control connections, runs the handshake (HELLO, optional
 * authentication, SESSION_SETUP), opens a data-plane session per connection and dispatches requests
 * to a {@link ControlHandler}.
 *
 * <pre>{@code
 * try (ControlServer server = ControlServer.start(config, dataPlane, handler)) {
 *     int port = server.port();
 *     ...
 * }
 * }</pre>
 *
 * {@link #close()} closes every connection (and its data-plane session) and stops the server's
 * threads.
 */
public final class ControlServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlServer.class);

    private final ControlConfig config;
    private final ControlMetrics metrics = new ControlMetrics();
    private final EventLoopGroup group;
    private final Channel serverChannel;
    private final Set<Channel> children = ConcurrentHashMap.newKeySet();
    private final Set<ControlConnection> connections = ConcurrentHashMap.newKeySet();
    private final Set<Long> liveSessionIds = ConcurrentHashMap.newKeySet();
    private final DataConnectionKeys dataConnectionKeys = new DataConnectionKeys();
    private volatile boolean closed;

    private ControlServer(ControlConfig config, DataPlane dataPlane, ControlHandler handler) {
        this.config = config;
        this.group =
                NioEventLoops.create(
                        config.eventLoopThreads(),
                        new DefaultThreadFactory("netapprox-ctl-server", true));
        try {
            ServerBootstrap b =
                    new ServerBootstrap()
                            .group(group)
                            .channel(NioServerSocketChannel.class)
                            .option(ChannelOption.SO_BACKLOG, 128)
                            .option(ChannelOption.SO_REUSEADDR, true)
                            .childOption(ChannelOption.TCP_NODELAY, true)
                            .childOption(ChannelOption.SO_KEEPALIVE, true)
                            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                            .childHandler(
                                    new ChannelInitializer<SocketChannel>() {
                                        @Override
                                        protected void initChannel(SocketChannel ch) {
                                            if (closed) {
                                                ch.close();
                                                return;
                                            }
                                            if (children.size() >= config.maxConnections()) {
                                                refuse(ch);
                                                return;
                                            }
                                            children.add(ch);
                                            ch.closeFuture().addListener(f -> children.remove(ch));
                                            ControlConnection conn =
                                                    initPipeline(
                                                            ch.pipeline(),
                                                            ControlConnection.Role.SERVER,
                                                            config,
                                                            dataPlane,
                                                            handler,
                                                            metrics,
                                                            liveSessionIds,
                                                            dataConnectionKeys,
                                                            null);
                                            connections.add(conn);
                                            conn.closeFuture()
                                                    .whenComplete(
                                                            (v, e) -> connections.remove(conn));
                                        }
                                    });
            InetSocketAddress bind =
                    config.bindAddress() == null
                            ? new InetSocketAddress(config.port())
                            : new InetSocketAddress(config.bindAddress(), config.port());
            this.serverChannel = b.bind(bind).syncUninterruptibly().channel();
        } catch (RuntimeException e) {
            shutdownGroup(group, config);
            throw new IllegalStateException(
                    "control server could not bind "
                            + config.bindAddress()
                            + ":"
                            + config.port()
                            + ": "
                            + e,
                    e);
        }
        LOG.info(
                "control server listening on {} (auth {}, tls {})",
                serverChannel.localAddress(),
                config.authEnabled() ? "on" : "off",
                config.sslContext() != null ? "on" : "off");
        if (!config.authEnabled() && config.sslContext() == null) {
            LOG.info(
                    "control server {}: no authentication and no TLS; anyone who reaches the port can open"
                            + " sessions (their keys are derived, not sent, but an active man in the middle"
                            + " is not detected)",
                    serverChannel.localAddress());
        }
    }

    /**
     * Over {@code maxConnections}: one ERROR OVERLOADED (so a legitimate client sees why) and a
     * close, with no handshake state. Counted, logged at DEBUG only (a flood must not flood logs).
     */
    private void refuse(SocketChannel ch) {
        metrics.connectionsRefused.incrementAndGet();
        LOG.debug(
                "control server: refusing {}: {} connections open",
                ch.remoteAddress(),
                children.size());
        ByteBuf buf = ch.alloc().buffer();
        FrameEncoder.encode(
                new Messages.Frame(
                        0,
                        new Messages.ErrorMsg(
                                ErrorCode.OVERLOADED.code(),
                                "the server has "
                                        + config.maxConnections()
                                        + " control connections open (maxConnections); try later")),
                buf);
        ch.writeAndFlush(buf).addListener(ChannelFutureListener.CLOSE);
    }

    /** Binds and starts a server. */
    public static ControlServer start(
            ControlConfig config, DataPlane dataPlane, ControlHandler handler) {
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(dataPlane, "dataPlane");
        Objects.requireNonNull(handler, "handler");
        return new ControlServer(config, dataPlane, handler);
    }

    /**
     * Reading stops while more than 64 KiB wait to be sent and resumes below 32 KiB (see {@link
     * FlowControl}).
     */
    static final WriteBufferWaterMark WRITE_WATER_MARK =
            new WriteBufferWaterMark(32 << 10, 64 << 10);

    /** TLS first when configured; {@code sslPeer} (client side) names the server. */
    static void addSsl(ChannelPipeline p, ControlConfig config, InetSocketAddress sslPeer) {
        if (config.sslContext() == null) {
            return;
        }
        if (sslPeer != null) {
            p.addLast(
                    "ssl",
                    config.sslContext()
                            .newHandler(
                                    p.channel().alloc(),
                                    sslPeer.getHostString(),
                                    sslPeer.getPort()));
        } else {
            p.addLast("ssl", config.sslContext().newHandler(p.channel().alloc()));
        }
    }

    static ControlConnection initPipeline(
            ChannelPipeline p,
            ControlConnection.Role role,
            ControlConfig config,
            DataPlane dataPlane,
            ControlHandler handler,
            ControlMetrics metrics,
            Set<Long> liveSessionIds,
            DataConnectionKeys dataConnectionKeys,
            InetSocketAddress sslPeer) {
        addSsl(p, config, sslPeer);
        FrameDecoder decoder = new FrameDecoder(WireFormat.HANDSHAKE_MAX_BODY);
        p.addLast("frameDecoder", decoder);
        p.addLast(
                "idle",
                new IdleStateHandler(
                        config.idleTimeout().toMillis(),
                        config.pingInterval().toMillis(),
                        0,
                        TimeUnit.MILLISECONDS));
        p.channel().config().setWriteBufferWaterMark(WRITE_WATER_MARK);
        FlowControl flow = new FlowControl(config.maxQueuedBytes(), metrics);
        p.addLast("flow", flow);
        ControlConnection conn =
                new ControlConnection(
                        role,
                        config,
                        dataPlane,
                        handler,
                        metrics,
                        decoder,
                        flow,
                        liveSessionIds,
                        dataConnectionKeys,
                        sslPeer);
        p.addLast("control", conn);
        return conn;
    }

    /** The bound address. */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** The bound port. */
    public int port() {
        return localAddress().getPort();
    }

    public ControlMetrics metrics() {
        return metrics;
    }

    public ControlConfig config() {
        return config;
    }

    /** The connections whose session is set up. */
    public List<ControlSession> sessions() {
        List<ControlSession> out = new ArrayList<>();
        for (ControlConnection c : connections) {
            if (c.isActive()) {
                out.add(c);
            }
        }
        return out;
    }

    /**
     * Stops accepting, closes every connection (failing their pending requests and closing their
     * data-plane sessions) and stops the event-loop threads, waiting up to the configured shutdown
     * timeout. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        serverChannel.close().awaitUninterruptibly(config.shutdownTimeout().toMillis());
        for (Channel ch : children) {
            ch.close();
        }
        long deadline = System.nanoTime() + config.shutdownTimeout().toNanos();
        for (ControlConnection c :
                connections) { // wait until pending futures are failed and sessions closed
            try {
                c.closeFuture()
                        .get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (java.util.concurrent.ExecutionException
                    | java.util.concurrent.TimeoutException e) {
                LOG.warn("control connection {} did not close within the shutdown timeout", c);
                break;
            }
        }
        shutdownGroup(group, config);
        LOG.info("control server on {} closed", serverChannel.localAddress());
    }

    static void shutdownGroup(EventLoopGroup group, ControlConfig config) {
        long timeout = config.shutdownTimeout().toMillis();
        if (!group.shutdownGracefully(0, timeout, TimeUnit.MILLISECONDS)
                .awaitUninterruptibly(timeout + 1000)) {
            LOG.warn("control event loop did not terminate within {} ms", timeout);
        }
    }
}
