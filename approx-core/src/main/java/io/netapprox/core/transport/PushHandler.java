package io.netapprox.core.transport;

/**
 * Receives jobs a peer <em>pushes</em> ({@link ApproxPeer#push}): the sender announces the job
 * (JOB_ANNOUNCE with the PUSHED flag and a descriptor saying what the data is) without a
 * DATA_REQUEST, so the data follows without a request round trip.
 *
 * <p>{@link #onPush} runs on the control connection's event loop once the transport has checked the
 * announcement and its push budget ({@link ApproxTransportConfig#maxPushedJobs()}, {@link
 * ApproxTransportConfig#maxPushedMessages()}); {@link IncomingTransfer#announced()} is already
 * complete. It returns the listener for the job's messages, or null to refuse the push (the sender
 * then keeps the data for a pull). It must not block. Throwing a {@code
 * ControlException(REQUEST_REJECTED, message)} refuses with that message.
 *
 * <p>A push the transport refuses itself, before asking {@link #onPush} (over the push budget, too
 * many jobs on the session, the endpoint closing), is reported to {@link #onRefused}, so a receiver
 * that expects the data (it learned of the push another way) can fetch it at once instead of
 * waiting for a push that will not come.
 */
@FunctionalInterface
public interface PushHandler {
    TransferListener onPush(IncomingTransfer transfer);

    /**
     * The transport refused a pushed job without asking {@link #onPush}: its {@code descriptor}
     * (untrusted, as announced) and the reason the pusher was given. Control event loop; must not
     * block. Default: nothing.
     */
    default void onRefused(byte[] descriptor, String reason) {}
}
