package io.netapprox.core.engine;

import io.netty.buffer.ByteBuf;

/** Messages as the engine would deliver them, over a heap buffer, for tests of other packages. */
public final class TestMessages {
    private TestMessages() {}

    /** A message of job {@code jobId}, with no session, owning {@code content}. */
    public static AtpMessage message(int jobId, int messageId, long groupId, ByteBuf content) {
        return new AtpMessage(null, jobId, messageId, groupId, content);
    }
}
