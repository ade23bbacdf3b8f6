package io.netapprox.core.control;

import io.netapprox.core.control.Messages.DataAttachAckMsg;
import io.netapprox.core.control.Messages.DataAttachMsg;
import io.netapprox.core.control.Messages.DataAttachProofMsg;
import io.netapprox.core.control.Messages.DecodeFailure;
import io.netapprox.core.control.Messages.ErrorMsg;
import io.netapprox.core.control.Messages.Frame;
import io.netapprox.core.control.Messages.Msg;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The client side of a session's TCP data connection (protocol version 4): connects to the server's
 * control address, sends DATA_ATTACH (session id, fresh nonce), checks the server's proof in
 * DATA_ATTACH_ACK, answers DATA_ATTACH_PROOF and hands the channel to the data plane. Both proofs
 * are keyed with the session's data-connection key, which both ends derived in the control
 * handshake ({@link KeySchedule#dataConnectionKey}); nothing new is negotiated and the key never
 * travels. Runs on the control connection's event loop.
 */
final class DataConnectionClient extends ChannelInboundHandlerAdapter {
    private static final long ATTACH_REQUEST_ID = 1;

    private final long sessionId;
    private final byte[] key;
    private final byte[] clientNonce = Auth.randomBytes(WireFormat.NONCE_LENGTH);
    private final Consumer<Channel> install;
    private final ControlMetrics metrics;
    private final CompletableFuture<Channel> result;
    private final long timeoutMs;
    private ScheduledFuture<?> timer;

    private DataConnectionClient(
            long sessionId,
            byte[] key,
            Consumer<Channel> install,
            ControlMetrics metrics,
            CompletableFuture<Channel> result,
            long timeoutMs) {
        this.sessionId = sessionId;
        this.key = key;
        this.install = install;
        this.metrics = metrics;
        this.result = result;
        this.timeoutMs = timeoutMs;
    }

    /**
     * Opens the data connection of session {@code sessionId} to {@code server}; the future
     * completes with the attached channel after {@code install} added the data plane's handlers.
     * Takes ownership of {@code key} (wiped when done).
     */
    static CompletableFuture<Channel> open(
            EventLoop loop,
            ControlConfig config,
            InetSocketAddress server,
            long sessionId,
            byte[] key,
            Consumer<Channel> install,
            ControlMetrics metrics) {
        CompletableFuture<Channel> result = new CompletableFuture<>();
        DataConnectionClient attach =
                new DataConnectionClient(
                        sessionId,
                        key,
                        install,
                        metrics,
                        result,
                        config.handshakeTimeout().toMillis());
        Bootstrap b =
                NioEventLoops.clientBootstrap(loop, config)
                        .handler(
                                new ChannelInitializer<SocketChannel>() {
                                    @Override
                                    protected void initChannel(SocketChannel ch) {
                                        ControlServer.addSsl(ch.pipeline(), config, server);
                                        ch.pipeline()
                                                .addLast(
                                                        "frameDecoder",
                                                        new FrameDecoder(
                                                                WireFormat.HANDSHAKE_MAX_BODY));
                                        ch.pipeline().addLast("dataAttach", attach);
                                    }
                                });
        ChannelFuture cf;
        try {
            cf = b.connect(server);
        } catch (RuntimeException e) {
            attach.wipe();
            return CompletableFuture.failedFuture(e);
        }
        cf.addListener(
                f -> {
                    if (!f.isSuccess()) {
                        attach.fail(f.cause(), null);
                    }
                });
        return result;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        timer =
                ctx.executor()
                        .schedule(
                                () ->
                                        fail(
                                                new ControlException(
                                                        ErrorCode.HANDSHAKE_TIMEOUT,
                                                        "data connection of session "
                                                                + Long.toHexString(sessionId)
                                                                + " not attached within "
                                                                + timeoutMs
                                                                + " ms"),
                                                ctx.channel()),
                                timeoutMs,
                                TimeUnit.MILLISECONDS);
        send(ctx.channel(), new DataAttachMsg(sessionId, clientNonce));
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object obj) {
        try {
            if (result.isDone()) {
                return;
            }
            if (obj instanceof DecodeFailure f) {
                fail(new ControlException(f.code(), f.message()), ctx.channel());
                return;
            }
            Msg msg = obj instanceof Frame frame ? frame.msg() : null;
            if (msg instanceof ErrorMsg e) {
                fail(
                        new ControlException(
                                e.errorCode(),
                                ControlConnection.printable(e.message()),
                                true,
                                null),
                        ctx.channel());
            } else if (msg instanceof DataAttachAckMsg a) {
                onAck(ctx, a);
            } else {
                fail(
                        new ControlException(
                                ErrorCode.UNEXPECTED_MESSAGE,
                                "unexpected "
                                        + (msg != null ? msg.type() : obj)
                                        + " while attaching a data connection"),
                        ctx.channel());
            }
        } finally {
            ReferenceCountUtil.release(obj);
        }
    }

    private void onAck(ChannelHandlerContext ctx, DataAttachAckMsg a) {
        byte[] expected =
                KeySchedule.dataConnectionProof(key, true, sessionId, clientNonce, a.serverNonce());
        if (!KeySchedule.verify(expected, a.serverProof())) {
            metrics.authFailures.incrementAndGet();
            fail(
                    new ControlException(
                            ErrorCode.AUTH_FAILED,
                            "the data connection's peer does not prove the key of session "
                                    + Long.toHexString(sessionId)),
                    ctx.channel());
            return;
        }
        byte[] proof =
                KeySchedule.dataConnectionProof(
                        key, false, sessionId, clientNonce, a.serverNonce());
        wipe();
        Channel ch = ctx.channel();
        send(ch, new DataAttachProofMsg(proof));
        if (timer != null) {
            timer.cancel(false);
        }
        try {
            install.accept(ch);
        } catch (RuntimeException e) {
            fail(e, ch);
            return;
        }
        metrics.dataConnectionsAttached.incrementAndGet();
        // The decoder goes last: what it holds after the ACK reaches the data plane's handlers.
        ch.pipeline().remove(this);
        ch.pipeline().remove("frameDecoder");
        result.complete(ch);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        fail(
                new ControlClosedException(
                        "the data connection of session "
                                + Long.toHexString(sessionId)
                                + " closed while attaching",
                        null),
                null);
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(
                cause instanceof IOException
                        ? new ControlClosedException(
                                "the data connection of session "
                                        + Long.toHexString(sessionId)
                                        + " failed while attaching: "
                                        + cause.getMessage(),
                                cause)
                        : cause,
                ctx.channel());
    }

    private void fail(Throwable cause, Channel ch) {
        wipe();
        if (timer != null) {
            timer.cancel(false);
        }
        if (result.completeExceptionally(cause)) {
            metrics.dataConnectionsRefused.incrementAndGet();
        }
        if (ch != null) {
            ch.close();
        }
    }

    private void wipe() {
        Arrays.fill(key, (byte) 0);
    }

    private static void send(Channel ch, Msg msg) {
        ByteBuf buf = ch.alloc().buffer();
        FrameEncoder.encode(new Frame(ATTACH_REQUEST_ID, msg), buf);
        ch.writeAndFlush(buf, ch.voidPromise());
    }
}
