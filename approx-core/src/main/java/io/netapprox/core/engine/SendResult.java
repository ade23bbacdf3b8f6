package io.netapprox.core.engine;

/** What {@link OutgoingJob#send} / {@link OutgoingJob#trySend} did with a message. */
public enum SendResult {
    /** Copied into the engine's send buffer; the caller may reuse its buffer at once. */
    ACCEPTED,
    /** {@code trySend} only: the session's send buffer is full right now (acks will free it). */
    FULL,
    /**
     * The message is not needed: the job already completed successfully (every group reached its
     * target) or its approximate group already did (the engine then counts it as lost, which the
     * report shows).
     */
    NOT_NEEDED
}
