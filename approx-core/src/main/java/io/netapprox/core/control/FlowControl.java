package io.netapprox.core.control;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.util.ReferenceCountUtil;

/**
 * Per-connection backpressure, so that a peer which sends but does not read cannot make this
 * endpoint buffer without bound:
 *
 * <ul>
 *   <li>reading stops while the channel is not writable (the send backlog is above Netty's high
 *       write-buffer watermark) and resumes when it drains below the low one; whatever the peer
 *       sends meanwhile stays in the kernel and pushes back on the peer's TCP sender;
 *   <li>the bytes queued for sending are counted and capped at {@code maxQueuedBytes}: a write that
 *       would exceed the cap is not queued. An application request (a write with a real promise)
 *       fails with {@code OVERLOADED}; the connection's own writes (replies, keepalives, errors: a
 *       void promise) mean the peer does not read what it asked for, so a {@link Overflow} event
 *       tells the connection to close.
 * </ul>
 *
 * All methods but {@link #queuedBytes()} run on the channel's event loop.
 */
final class FlowControl extends ChannelDuplexHandler {
    /**
     * Fired (inbound) when a write of the connection's own was refused because the send queue is
     * full.
     */
    record Overflow(long queuedBytes, int frameBytes, long limit) {}

    private final long maxQueuedBytes;
    private final ControlMetrics metrics;
    private volatile long queued;
    private boolean readingStopped;

    FlowControl(long maxQueuedBytes, ControlMetrics metrics) {
        this.maxQueuedBytes = maxQueuedBytes;
        this.metrics = metrics;
    }

    /**
     * Bytes written by the connection and not yet handed to the socket (or the TLS layer below).
     */
    long queuedBytes() {
        return queued;
    }

    /** The connection is closing: never resume reading. */
    void stopReading(Channel ch) {
        readingStopped = true;
        ch.config().setAutoRead(false);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        boolean writable = ctx.channel().isWritable();
        if (!readingStopped && ctx.channel().config().isAutoRead() != writable) {
            if (!writable) {
                metrics.readPauses.incrementAndGet();
            }
            ctx.channel().config().setAutoRead(writable);
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (!(msg instanceof ByteBuf buf)) {
            ctx.write(msg, promise);
            return;
        }
        int size = buf.readableBytes();
        if (queued + size > maxQueuedBytes) {
            long now = queued;
            ReferenceCountUtil.release(msg);
            metrics.sendQueueOverflows.incrementAndGet();
            if (promise.isVoid()) {
                ctx.fireUserEventTriggered(new Overflow(now, size, maxQueuedBytes));
            } else {
                promise.setFailure(
                        new ControlException(
                                ErrorCode.OVERLOADED,
                                "the send queue to this peer holds "
                                        + now
                                        + " bytes; another "
                                        + size
                                        + " would exceed its limit of "
                                        + maxQueuedBytes
                                        + " bytes (the peer reads too slowly)"));
            }
            return;
        }
        queued += size;
        metrics.notePeakQueuedBytes(queued);
        ChannelPromise p = promise.unvoid();
        p.addListener(f -> queued -= size);
        ctx.write(msg, p);
    }
}
