package io.netapprox.core.transport;

/**
 * Counters of pushed jobs ({@link ApproxPeer#push}) of one {@link ApproxTransport}.
 *
 * @param pushesSent pushed jobs this side announced
 * @param pushesRefusedByPeer of those, refused by the receiving peer (the data stays for a pull)
 * @param pushesAccepted pushed jobs this side accepted from peers
 * @param pushesRefused pushed jobs this side refused: over budget, no {@link PushHandler}, the
 *     handler said no, or a bad job id
 * @param pushesOverBudget of the refused, those refused for the push budget
 * @param pushedJobsOpen accepted pushed jobs still running
 * @param pushedMessagesOpen their announced messages
 */
public record PushMetrics(
        long pushesSent,
        long pushesRefusedByPeer,
        long pushesAccepted,
        long pushesRefused,
        long pushesOverBudget,
        int pushedJobsOpen,
        long pushedMessagesOpen) {}
