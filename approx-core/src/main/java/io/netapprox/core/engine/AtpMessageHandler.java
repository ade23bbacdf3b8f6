package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;

/**
 * Base class for pipeline handlers fed by {@link AtpChannelForwarder}: {@link #messageReceived}
 * gets each {@link AtpMessage} and the message is released after it returns (as with {@link
 * SimpleChannelInboundHandler}; call {@code retain()} to keep it longer). Job notices arrive in the
 * {@code on*} hooks; other user events pass on.
 */
public abstract class AtpMessageHandler extends SimpleChannelInboundHandler<AtpMessage> {
    protected AtpMessageHandler() {
        super(AtpMessage.class, true);
    }

    @Override
    protected final void channelRead0(ChannelHandlerContext ctx, AtpMessage msg) throws Exception {
        messageReceived(ctx, msg);
    }

    /** One delivered message; released after this returns unless retained. */
    protected abstract void messageReceived(ChannelHandlerContext ctx, AtpMessage msg)
            throws Exception;

    protected void jobStarted(ChannelHandlerContext ctx, AtpSession session, int jobId)
            throws Exception {}

    protected void messageLost(
            ChannelHandlerContext ctx, AtpSession session, int jobId, int messageId, long groupId)
            throws Exception {}

    protected void jobDone(ChannelHandlerContext ctx, JobReport report) throws Exception {}

    /**
     * The session ended. Default: an orderly close by the peer ({@code CLOSED}; its jobs were
     * already reported through {@link #jobDone}) is not an error and is dropped here; any failure
     * is fired as an exception.
     */
    protected void sessionError(ChannelHandlerContext ctx, AtpSession session, AtpException error)
            throws Exception {
        if (error.status() != AtpStatus.CLOSED) {
            ctx.fireExceptionCaught(error);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (!(evt instanceof AtpJobEvent)) {
            ctx.fireUserEventTriggered(evt);
            return;
        }
        AtpJobEvent e = (AtpJobEvent) evt;
        switch (e.kind()) {
            case JOB_STARTED:
                jobStarted(ctx, e.session(), e.jobId());
                break;
            case MESSAGE_LOST:
                messageLost(ctx, e.session(), e.jobId(), e.messageId(), e.groupId());
                break;
            case JOB_DONE:
                jobDone(ctx, e.report());
                break;
            case SESSION_ERROR:
                sessionError(ctx, e.session(), e.error());
                break;
            default:
                ctx.fireUserEventTriggered(evt);
        }
    }
}
