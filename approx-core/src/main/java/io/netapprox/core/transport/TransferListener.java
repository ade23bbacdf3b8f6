package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpMessage;

/**
 * Receives the messages of one requested transfer ({@link ApproxPeer#request}). Called on the
 * endpoint's event thread ("netapprox-events"), in the engine's order; do not block (it delays
 * every session of the endpoint).
 */
@FunctionalInterface
public interface TransferListener {
    /**
     * A message of the transfer arrived. Ownership passes to the listener, which must {@link
     * AtpMessage#release()} it (now or later; unreleased messages occupy the session's receive
     * window and throttle the sender). Same contract as {@link
     * io.netapprox.core.engine.IncomingJobListener#onMessage}.
     */
    void onMessage(IncomingTransfer transfer, AtpMessage message);

    /**
     * The sender gave message {@code messageId} of group {@code groupId} up (approximate groups
     * only).
     */
    default void onMessageLost(IncomingTransfer transfer, int messageId, long groupId) {}
}
