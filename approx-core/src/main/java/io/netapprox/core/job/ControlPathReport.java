package io.netapprox.core.job;

/**
 * How a job's control path went (docs/protocol.md section 14): the counters that tell why a job
 * waited to start or to end. Part of the engine's {@link JobReport} on both sides; a report that
 * crossed the control plane (JOB_REPORT) carries {@link #NONE}.
 *
 * @param announcesSent sender: ANNOUNCE datagrams, first copies and repeats
 * @param updatesSent sender: UPDATE datagrams
 * @param donesSent sender: which transmission of the receiver's DONE arrived first (1 = the first;
 *     0 = none)
 * @param startToRunningNanos sender: start to announce acknowledged; receiver: the job's first
 *     packet to its group table complete
 * @param lastDataToDoneNanos sender: last DATA sent to DONE received; receiver: last DATA received
 *     to completion
 * @param announceProbes sender: ANNOUNCE copies sent by the probe timeout (the other repeats
 *     followed a declared loss)
 * @param acksWhileStarting sender: ACKs that arrived before the announce was acknowledged (0 or 1
 *     with repeats: the acknowledgements were late, not ignored)
 * @param announcesReceived receiver: ANNOUNCE datagrams that reached the engine, repeats included
 * @param announcesDuplicate receiver: of those, after the group table was complete
 * @param announcesAcked receiver: acknowledged at once (not: receive buffer or event queue full)
 * @param earlyDataPackets receiver: DATA held before the group table was complete
 */
public record ControlPathReport(
        int announcesSent,
        int updatesSent,
        int donesSent,
        long startToRunningNanos,
        long lastDataToDoneNanos,
        int announceProbes,
        int acksWhileStarting,
        int announcesReceived,
        int announcesDuplicate,
        int announcesAcked,
        long earlyDataPackets) {

    /** All zero: a report without control-path counters. */
    public static final ControlPathReport NONE =
            new ControlPathReport(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    public ControlPathReport {
        if (announcesSent < 0
                || updatesSent < 0
                || donesSent < 0
                || startToRunningNanos < 0
                || lastDataToDoneNanos < 0
                || announceProbes < 0
                || acksWhileStarting < 0
                || announcesReceived < 0
                || announcesDuplicate < 0
                || announcesAcked < 0
                || earlyDataPackets < 0) {
            throw new IllegalArgumentException("control-path counters must be >= 0");
        }
    }
}
