package io.netapprox.core.engine;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A delivered message: job, group, message id and a zero-copy read-only {@link #content()} over the engine's
 * memory. Reference counted like any Netty {@link io.netty.buffer.ByteBufHolder}: whoever receives it
 * ({@link IncomingJobListener#onMessage}, or the last handler of a pipeline) must {@link #release()} it; until then
 * its bytes count against the session's receive buffer, so a consumer that does not release slows the sender down
 * (flow control) instead of growing memory.
 */
public final class AtpMessage extends DefaultByteBufHolder {
  private final AtpSession session;
  private final int jobId;
  private final int messageId;
  private final long groupId;

  AtpMessage(AtpSession session, int jobId, int messageId, long groupId, ByteBuf content) {
    super(content);
    this.session = session;
    this.jobId = jobId;
    this.messageId = messageId;
    this.groupId = groupId;
  }

  /** The session it arrived on. */
  public AtpSession session() { return session; }
  public long sessionId() { return session.id(); }
  public int jobId() { return jobId; }
  /** Job-wide message id (group base + index within the group). */
  public int messageId() { return messageId; }
  /** The application's group id from the sender's {@link GroupSpec}. */
  public long groupId() { return groupId; }

  @Override
  public AtpMessage replace(ByteBuf content) {
    return new AtpMessage(session, jobId, messageId, groupId, content);
  }

  @Override
  public AtpMessage copy() {
    return (AtpMessage) super.copy();
  }

  @Override
  public AtpMessage duplicate() {
    return (AtpMessage) super.duplicate();
  }

  @Override
  public AtpMessage retainedDuplicate() {
    return (AtpMessage) super.retainedDuplicate();
  }

  @Override
  public AtpMessage retain() {
    super.retain();
    return this;
  }

  @Override
  public AtpMessage retain(int increment) {
    super.retain(increment);
    return this;
  }

  @Override
  public AtpMessage touch() {
    super.touch();
    return this;
  }

  @Override
  public AtpMessage touch(Object hint) {
    super.touch(hint);
    return this;
  }

  @Override
  public String toString() {
    return "AtpMessage{session=" + Long.toUnsignedString(sessionId()) + ", job=" + jobId + ", message="
        + messageId + ", group=" + groupId + ", bytes=" + (refCnt() > 0 ? content().readableBytes() : -1) + "}";
  }
}
