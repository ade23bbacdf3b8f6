package io.netapprox.core.engine;

import io.netapprox.core.job.JobReport;

/**
 * Receives what a session's peer sends. Called on the endpoint's event thread ("netapprox-events"),
 * in the order the engine produced the events; do not block in it for long (it delays every session
 * of the endpoint). Use {@link AtpChannelForwarder} to hand everything to a Netty {@code Channel}'s
 * event loop instead.
 */
public interface IncomingJobListener {
    /** The peer announced job {@code jobId} on {@code session}. */
    default void onJobStarted(AtpSession session, int jobId) {}

    /**
     * A whole message arrived. Ownership passes to the listener, which must {@link
     * AtpMessage#release()} it (now or later; unreleased messages occupy the receive buffer and
     * throttle the sender). If this method throws, the binding releases the message.
     */
    default void onMessage(AtpMessage message) {
        message.release();
    }

    /**
     * End of a batch of {@link #onMessage} calls for this session (one JNI crossing drained it),
     * like Netty's {@code channelReadComplete}: a good place to flush.
     */
    default void onReadComplete(AtpSession session) {}

    /**
     * The sender gave message {@code messageId} of group {@code groupId} up (approximate groups
     * only).
     */
    default void onMessageLost(AtpSession session, int jobId, int messageId, long groupId) {}

    /** The receiver's final report of a job (authoritative delivered / lost ids per group). */
    default void onJobDone(AtpSession session, JobReport report) {}

    /**
     * The session failed (PEER_DEAD, IDLE_TIMEOUT, PROTOCOL); its jobs end with their own reports.
     */
    default void onSessionError(AtpSession session, AtpException error) {}
}
