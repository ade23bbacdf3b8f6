package io.netapprox.core.engine;

import io.netapprox.core.job.JobReport;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.ReferenceCountUtil;
import java.util.Objects;

/**
 * An {@link IncomingJobListener} that forwards a session's incoming jobs into a Netty {@link
 * Channel}'s pipeline, on the channel's event loop: each {@link AtpMessage} with {@code
 * fireChannelRead} (the pipeline then owns it; {@link AtpMessageHandler} or {@code
 * SimpleChannelInboundHandler} release it), a {@code fireChannelReadComplete} after every batch,
 * and job notices as {@link AtpJobEvent}s with {@code fireUserEventTriggered}. Works with any
 * channel, including {@code EmbeddedChannel}. Messages for a closed channel are released.
 */
public final class AtpChannelForwarder implements IncomingJobListener {
    private final Channel channel;

    public AtpChannelForwarder(Channel channel) {
        this.channel = Objects.requireNonNull(channel, "channel");
    }

    public Channel channel() {
        return channel;
    }

    @Override
    public void onMessage(AtpMessage message) {
        if (!channel.isActive() && !channel.isOpen()) {
            message.release();
            return;
        }
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            channel.pipeline().fireChannelRead(message);
        } else {
            try {
                loop.execute(() -> channel.pipeline().fireChannelRead(message));
            } catch (RuntimeException e) { // loop shut down
                ReferenceCountUtil.safeRelease(message);
            }
        }
    }

    @Override
    public void onReadComplete(AtpSession session) {
        run(() -> channel.pipeline().fireChannelReadComplete());
    }

    @Override
    public void onJobStarted(AtpSession session, int jobId) {
        fire(new AtpJobEvent(AtpJobEvent.Kind.JOB_STARTED, session, jobId, 0, 0, null, null));
    }

    @Override
    public void onMessageLost(AtpSession session, int jobId, int messageId, long groupId) {
        fire(
                new AtpJobEvent(
                        AtpJobEvent.Kind.MESSAGE_LOST,
                        session,
                        jobId,
                        messageId,
                        groupId,
                        null,
                        null));
    }

    @Override
    public void onJobDone(AtpSession session, JobReport report) {
        fire(
                new AtpJobEvent(
                        AtpJobEvent.Kind.JOB_DONE, session, report.jobId(), 0, 0, report, null));
    }

    @Override
    public void onSessionError(AtpSession session, AtpException error) {
        fire(new AtpJobEvent(AtpJobEvent.Kind.SESSION_ERROR, session, 0, 0, 0, null, error));
    }

    private void fire(AtpJobEvent ev) {
        run(() -> channel.pipeline().fireUserEventTriggered(ev));
    }

    private void run(Runnable r) {
        if (!channel.isOpen()) {
            return;
        }
        EventLoop loop = channel.eventLoop();
        if (loop.inEventLoop()) {
            r.run();
        } else {
            try {
                loop.execute(r);
            } catch (RuntimeException ignored) {
                // event loop shut down
            }
        }
    }
}
