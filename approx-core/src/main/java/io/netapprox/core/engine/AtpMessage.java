package io.netapprox.core.engine;

import io.netapprox.core.job.GroupSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.Recycler;

/**
 * A delivered message: job, group, message id and a zero-copy read-only {@link #content()} over the
 * engine's memory. Reference counted like any Netty {@link io.netty.buffer.ByteBufHolder}: whoever
 * receives it ({@link IncomingJobListener#onMessage}, or the last handler of a pipeline) must
 * {@link #release()} it; until then its bytes count against the session's receive buffer, so a
 * consumer that does not release slows the sender down (flow control) instead of growing memory.
 *
 * <p>Delivered messages (and their content buffers) are recycled after the last release, like
 * Netty's pooled buffers: do not use a message or its content after releasing it. Such a use fails
 * with {@link IllegalReferenceCountException} until the object is reused for a later message, after
 * which it may see that message; it never touches freed memory.
 */
public final class AtpMessage implements ByteBufHolder {
    private static final Recycler<AtpMessage> RECYCLER =
            new Recycler<AtpMessage>() {
                @Override
                protected AtpMessage newObject(Handle<AtpMessage> handle) {
                    return new AtpMessage(handle);
                }
            };

    // null for messages made by replace()/copy()/duplicate(): those are ordinary, unpooled holders
    private final Recycler.Handle<AtpMessage> recyclerHandle;
    private final NativeMessageBuf pooledContent;
    private ByteBuf data;
    private AtpSession session;
    private long sessionId;
    private int jobId;
    private int messageId;
    private long groupId;

    private AtpMessage(Recycler.Handle<AtpMessage> handle) {
        this.recyclerHandle = handle;
        this.pooledContent = new NativeMessageBuf(this);
    }

    AtpMessage(AtpSession session, int jobId, int messageId, long groupId, ByteBuf content) {
        if (content == null) {
            throw new NullPointerException("content");
        }
        this.recyclerHandle = null;
        this.pooledContent = null;
        this.data = content;
        set(session, jobId, messageId, groupId);
    }

    /**
     * A message that another data plane delivered (the transport's TCP data plane, {@code
     * io.netapprox.core.transport}): it has no engine session ({@link #session()} is null, {@link
     * #sessionId()} is the peer's session id) and owns {@code content}, which its last {@link
     * #release()} releases. The same contract as an engine message otherwise: whoever receives it
     * releases it, and until then its bytes count against the receiver's buffer.
     */
    public static AtpMessage received(
            long sessionId, int jobId, int messageId, long groupId, ByteBuf content) {
        AtpMessage m = new AtpMessage(null, jobId, messageId, groupId, content);
        m.sessionId = sessionId;
        return m;
    }

    /**
     * A recycled (or, while the pool warms up, new) message over engine memory (address, length),
     * released natively with messageHandle. Event thread only.
     */
    static AtpMessage delivered(
            EndpointCore core,
            AtpSession session,
            int jobId,
            int messageId,
            long groupId,
            long messageHandle,
            long address,
            int length) {
        AtpMessage m = RECYCLER.get();
        m.set(session, jobId, messageId, groupId);
        m.pooledContent.init(core, messageHandle, address, length);
        m.data = m.pooledContent;
        return m;
    }

    private void set(AtpSession session, int jobId, int messageId, long groupId) {
        this.session = session;
        this.sessionId = session == null ? 0 : session.id();
        this.jobId = jobId;
        this.messageId = messageId;
        this.groupId = groupId;
    }

    /**
     * Called by the pooled content's deallocate (after na_message_release), on whichever thread
     * released.
     */
    void recycle() {
        session = null; // do not pin closed sessions from the pool
        recyclerHandle.recycle(this);
    }

    /** The engine session it arrived on; null for a message of another data plane (TCP). */
    public AtpSession session() {
        return session;
    }

    public long sessionId() {
        return sessionId;
    }

    public int jobId() {
        return jobId;
    }

    /** Job-wide message id (group base + index within the group). */
    public int messageId() {
        return messageId;
    }

    /** The application's group id from the sender's {@link GroupSpec}. */
    public long groupId() {
        return groupId;
    }

    @Override
    public ByteBuf content() {
        ByteBuf d = data;
        int rc = d.refCnt();
        if (rc <= 0) {
            throw new IllegalReferenceCountException(rc);
        }
        return d;
    }

    @Override
    public AtpMessage replace(ByteBuf content) {
        return new AtpMessage(session, jobId, messageId, groupId, content);
    }

    @Override
    public AtpMessage copy() {
        return replace(content().copy());
    }

    @Override
    public AtpMessage duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public AtpMessage retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    @Override
    public int refCnt() {
        return data.refCnt();
    }

    @Override
    public AtpMessage retain() {
        data.retain();
        return this;
    }

    @Override
    public AtpMessage retain(int increment) {
        data.retain(increment);
        return this;
    }

    @Override
    public AtpMessage touch() {
        data.touch();
        return this;
    }

    @Override
    public AtpMessage touch(Object hint) {
        data.touch(hint);
        return this;
    }

    @Override
    public boolean release() {
        return data.release();
    }

    @Override
    public boolean release(int decrement) {
        return data.release(decrement);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        return o instanceof AtpMessage && data.equals(((AtpMessage) o).data);
    }

    @Override
    public int hashCode() {
        return data.hashCode();
    }

    @Override
    public String toString() {
        return "AtpMessage{session="
                + Long.toUnsignedString(sessionId)
                + ", job="
                + jobId
                + ", message="
                + messageId
                + ", group="
                + groupId
                + ", bytes="
                + (refCnt() > 0 ? data.readableBytes() : -1)
                + "}";
    }
}
