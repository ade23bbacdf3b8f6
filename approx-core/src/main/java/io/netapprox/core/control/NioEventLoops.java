package io.netapprox.core.control;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.util.concurrent.ThreadFactory;

/**
 * NIO event loop groups on the Netty the application brings: Netty 4.2 (Spark 4.x) has {@code
 * MultiThreadIoEventLoopGroup} + {@code NioIoHandler}; Netty 4.1 (Spark 3.5) has only {@code
 * NioEventLoopGroup} (deprecated in 4.2). Each variant is in its own nested class so that the JVM
 * never loads the 4.2 classes on 4.1.
 */
final class NioEventLoops {
    private static final boolean NETTY_42 = hasIoHandlerApi();

    private NioEventLoops() {}

    static EventLoopGroup create(int threads, ThreadFactory threadFactory) {
        return NETTY_42
                ? Netty42.create(threads, threadFactory)
                : Netty41.create(threads, threadFactory);
    }

    /**
     * A TCP client bootstrap on {@code group} as every control and data connection opens one: no
     * Nagle (small frames are latency), keepalive, the config's connect timeout.
     */
    static Bootstrap clientBootstrap(EventLoopGroup group, ControlConfig config) {
        return new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(
                        ChannelOption.CONNECT_TIMEOUT_MILLIS,
                        (int) Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis()));
    }

    private static boolean hasIoHandlerApi() {
        try {
            Class.forName(
                    "io.netty.channel.MultiThreadIoEventLoopGroup",
                    false,
                    NioEventLoops.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static final class Netty42 {
        static EventLoopGroup create(int threads, ThreadFactory threadFactory) {
            return new MultiThreadIoEventLoopGroup(
                    threads, threadFactory, NioIoHandler.newFactory());
        }
    }

    private static final class Netty41 {
        @SuppressWarnings("deprecation")
        static EventLoopGroup create(int threads, ThreadFactory threadFactory) {
            return new NioEventLoopGroup(threads, threadFactory);
        }
    }
}
