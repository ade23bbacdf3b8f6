package io.netapprox.core.transport;

import io.netapprox.core.control.ControlSession;
import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.control.JobDecision;
import io.netapprox.core.control.MsrUpdate;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobReport;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The requesting (receiving) side of one transfer, returned by {@link ApproxPeer#request}. Three
 * futures follow its progress, all failing with the same {@link TransportException} when the
 * transfer fails:
 *
 * <ol>
 *   <li>{@link #announced()}: the serving side's JOB_ANNOUNCE (groups with N_g and MSR_g, in
 *       message-id order), accepted by this side before any data is sent;
 *   <li>{@link #response()}: the serving side's integration-defined DATA_RESPONSE bytes, once the
 *       job started;
 *   <li>{@link #report()}: the receiver's final report (authoritative per-group delivered / lost
 *       ids) - also sent to the serving side as JOB_REPORT, so both sides end with the same
 *       numbers.
 * </ol>
 *
 * Futures complete on control-plane or engine threads: do not block in their callbacks.
 */
public final class IncomingTransfer {
    private static final Logger LOG = LoggerFactory.getLogger(IncomingTransfer.class);

    private final ApproxPeer peer;
    private final int jobId;
    private volatile TransferListener listener;
    private final CompletableFuture<JobAnnouncement> announced = new CompletableFuture<>();
    private final CompletableFuture<byte[]> response = new CompletableFuture<>();
    private final CompletableFuture<TransferReport> report = new CompletableFuture<>();
    // Data that arrived before the announcement (the server started the job without waiting for
    // our acceptance, ApproxTransportConfig.startBeforeAccept): held in arrival order and handed
    // to the listener once the announcement is applied, so the listener always sees the groups
    // first. Bounded by the engine's receive buffer: held messages are unreleased and so throttle
    // the sender; held loss notices by the job's message count (one per message given up, and the
    // first comes a loss-detection delay after the data). Guarded by this; `live` turns true (never
    // back) once nothing is held any more.
    private volatile boolean live;
    // per group the longest time without a delivery while short of target (set at the announcement)
    private volatile GroupWaits waits;
    private List<Object> early;
    private JobReport earlyReport;

    /** A loss notice held until the announcement. */
    private record Lost(int messageId, long groupId) {}

    IncomingTransfer(ApproxPeer peer, int jobId, TransferListener listener) {
        this.peer = peer;
        this.jobId = jobId;
        this.listener = listener;
        // However the transfer ends (given up by cancelling report(), failed, answered without a
        // job), data held for an announcement that will not be applied is released.
        report.whenComplete((r, e) -> releaseHeld());
    }

    public ApproxPeer peer() {
        return peer;
    }

    /** The job id (unsigned 32-bit), allocated by the requesting side. */
    public int jobId() {
        return jobId;
    }

    TransferListener listener() {
        return listener;
    }

    /**
     * The job's announcement (groups in message-id order: group g owns ids {@code [base_g, base_g +
     * N_g)}); null when the serving side answered without a job.
     */
    public CompletableFuture<JobAnnouncement> announced() {
        return announced;
    }

    /** The groups as announced, or null before the announcement. */
    public List<GroupSpec> groups() {
        JobAnnouncement a = announced.getNow(null);
        return a != null ? a.groups() : null;
    }

    /**
     * The serving side's DATA_RESPONSE payload (a copy per call), completing once the job has
     * started.
     */
    public CompletableFuture<byte[]> response() {
        return response.thenApply(byte[]::clone);
    }

    /**
     * The final report. Completes normally when the job completed (every group reached its target);
     * exceptionally with a {@link TransportException} otherwise ({@link
     * TransportException#report()} has the failed job's report when there is one). Cancelling it
     * gives the transfer up: later messages are released unseen.
     */
    public CompletableFuture<TransferReport> report() {
        return report;
    }

    public boolean isDone() {
        return report.isDone();
    }

    /** MSR_UPDATE for one group; see {@link #updateMsr(Map)}. */
    public CompletableFuture<Void> updateMsr(int groupIndex, double msr) {
        return updateMsr(Map.of(groupIndex, msr));
    }

    /**
     * Sends new MSRs (by group index, the position in {@link #groups()}) to the serving side, which
     * applies them to the running job ({@code OutgoingJob.updateMsr}; before the job starts, to the
     * job it is about to start). The future completes when the sender has applied them, or fails
     * with a {@link TransportException} ({@link TransportException.Reason#REJECTED} when the job
     * already finished or an index is out of range).
     */
    public CompletableFuture<Void> updateMsr(Map<Integer, Double> msrByGroupIndex) {
        Objects.requireNonNull(msrByGroupIndex, "msrByGroupIndex");
        if (report.isDone()) {
            return CompletableFuture.failedFuture(
                    new TransportException(
                            TransportException.Reason.REJECTED,
                            "transfer of job "
                                    + Integer.toUnsignedString(jobId)
                                    + " already finished",
                            null));
        }
        List<GroupSpec> groups = groups();
        for (Integer gi : msrByGroupIndex.keySet()) {
            if (gi == null || gi < 0 || (groups != null && gi >= groups.size())) {
                return CompletableFuture.failedFuture(
                        new IllegalArgumentException(
                                "group index "
                                        + gi
                                        + " out of range [0, "
                                        + (groups != null ? groups.size() : "?")
                                        + ")"));
            }
        }
        ControlSession c = peer.control();
        if (c == null) {
            return CompletableFuture.failedFuture(peer.failure());
        }
        GroupWaits w = waits;
        if (w != null) {
            msrByGroupIndex.forEach(w::msrChanged);
        }
        try {
            return c.updateMsr(MsrUpdate.of(jobId, msrByGroupIndex))
                    .exceptionallyCompose(
                            e ->
                                    CompletableFuture.failedFuture(
                                            Errors.fromControl(
                                                    e,
                                                    "MSR update for job "
                                                            + Integer.toUnsignedString(jobId))));
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ---- transport side -------------------------------------------------------------------------

    /**
     * A pushed job was accepted (control event loop): its messages go to {@code l}; there is no
     * DATA_RESPONSE, so {@link #response()} completes empty.
     */
    void pushAccepted(TransferListener l) {
        this.listener = l;
        response.complete(new byte[0]);
    }

    /** True for a job the peer pushed (its id has bit 31 set), false for a requested one. */
    public boolean pushed() {
        return (jobId & JobAnnouncement.PUSHED_JOB_ID_BIT) != 0;
    }

    /** The pushed job's descriptor (what the data is), or null before the announcement. */
    public byte[] descriptor() {
        JobAnnouncement a = announced.getNow(null);
        return a != null ? a.descriptor() : null;
    }

    /** JOB_ANNOUNCE from the serving side (control event loop). */
    JobDecision onAnnounce(JobAnnouncement a) {
        if (report.isDone()) {
            return JobDecision.reject(
                    "transfer of job "
                            + Integer.toUnsignedString(jobId)
                            + " was given up or has failed");
        }
        JobReport held;
        synchronized (this) {
            if (!announced.complete(a)) {
                return JobDecision.reject(
                        "job " + Integer.toUnsignedString(jobId) + " was already announced");
            }
            waits = new GroupWaits(a.groups(), System.nanoTime());
            List<Object> e = early;
            early = null;
            if (e != null) {
                for (Object o : e) {
                    if (o instanceof AtpMessage m) {
                        dispatch(m);
                    } else {
                        Lost l = (Lost) o;
                        dispatchLost(l.messageId(), l.groupId());
                    }
                }
            }
            held = earlyReport;
            earlyReport = null;
            live = true;
        }
        if (held != null) {
            onReceiverReport(held);
        }
        return JobDecision.accept();
    }

    /**
     * A data-plane message of this transfer (endpoint event thread): to the listener, or held until
     * the announcement.
     */
    void onMessage(AtpMessage m) {
        if (!live) {
            synchronized (this) {
                if (!live) {
                    if (report.isDone()) {
                        m.release();
                    } else {
                        if (early == null) {
                            early = new ArrayList<>();
                        }
                        early.add(m);
                    }
                    return;
                }
            }
        }
        dispatch(m);
    }

    /** A loss notice (endpoint event thread): as {@link #onMessage}. */
    void onMessageLost(int messageId, long groupId) {
        if (!live) {
            synchronized (this) {
                if (!live) {
                    if (!report.isDone()) {
                        if (early == null) {
                            early = new ArrayList<>();
                        }
                        early.add(new Lost(messageId, groupId));
                    }
                    return;
                }
            }
        }
        dispatchLost(messageId, groupId);
    }

    /** Messages held for the announcement (for tests and diagnostics). */
    synchronized int heldMessages() {
        int n = 0;
        if (early != null) {
            for (Object o : early) {
                if (o instanceof AtpMessage) {
                    n++;
                }
            }
        }
        return n;
    }

    private void dispatch(AtpMessage m) {
        if (report.isDone()) {
            m.release();
            return;
        }
        GroupWaits w = waits;
        if (w != null) {
            w.delivered(m.groupId(), System.nanoTime());
        }
        listener.onMessage(this, m);
    }

    private void dispatchLost(int messageId, long groupId) {
        if (!report.isDone()) {
            listener.onMessageLost(this, messageId, groupId);
        }
    }

    /**
     * DATA_RESPONSE (control event loop). The serving side announces a job before it answers, and
     * JOB_ANNOUNCE arrives first on the same connection: a response to a transfer that was not
     * announced means no job follows ({@link OutgoingTransfer#answerWithoutJob}).
     */
    void responded(byte[] reply) {
        response.complete(reply);
        if (!announced.isDone()) {
            announced.complete(null);
            report.complete(TransferReport.withoutJob(jobId));
        }
    }

    /**
     * The receiver's engine report (endpoint event thread): completes the transfer and sends
     * JOB_REPORT.
     */
    void onReceiverReport(JobReport r) {
        if (!live) {
            synchronized (this) {
                if (!live && !report.isDone()) {
                    earlyReport = r; // the job ended before its announcement: applied with it
                    return;
                }
            }
        }
        JobReport wire;
        try {
            wire = r.forPeer();
        } catch (RuntimeException e) {
            fail(
                    new TransportException(
                            TransportException.Reason.JOB_FAILED,
                            "the report of job "
                                    + Integer.toUnsignedString(jobId)
                                    + " cannot be converted: "
                                    + e.getMessage(),
                            e));
            return;
        }
        GroupWaits w = waits;
        TransferReport tr =
                new TransferReport(wire, r, w != null ? w.longestNanos(System.nanoTime()) : null);
        ControlSession c = peer.control();
        if (c != null && c.isActive()) {
            c.sendReport(wire)
                    .whenComplete(
                            (v, e) -> {
                                Throwable cause = e == null ? null : Errors.unwrap(e);
                                if (cause
                                        instanceof
                                        IllegalArgumentException) { // does not fit the control
                                    // frame limit
                                    LOG.warn(
                                            "JOB_REPORT of job {} to {} not sent ({}); the serving side will time out waiting"
                                                    + " for it",
                                            Integer.toUnsignedString(jobId),
                                            peer.describe(),
                                            cause.getMessage());
                                } else if (cause != null) {
                                    LOG.debug(
                                            "JOB_REPORT of job {} to {} not taken: {}",
                                            Integer.toUnsignedString(jobId),
                                            peer.describe(),
                                            String.valueOf(cause));
                                }
                            });
        }
        if (r.isSuccess()) {
            report.complete(tr);
        } else {
            fail(
                    new TransportException(
                            TransportException.Reason.JOB_FAILED,
                            "job "
                                    + Integer.toUnsignedString(jobId)
                                    + " from "
                                    + peer.describe()
                                    + " ended with "
                                    + r.status(),
                            null,
                            r.status(),
                            tr));
        }
    }

    void fail(TransportException e) {
        announced.completeExceptionally(e);
        response.completeExceptionally(e);
        report.completeExceptionally(e);
    }

    /** Releases the messages held for an announcement that will not be applied. */
    private void releaseHeld() {
        List<Object> e;
        synchronized (this) {
            e = early;
            early = null;
            earlyReport = null;
        }
        if (e != null) {
            for (Object o : e) {
                if (o instanceof AtpMessage m) {
                    m.release();
                }
            }
        }
    }

    @Override
    public String toString() {
        return "IncomingTransfer{job="
                + Integer.toUnsignedString(jobId)
                + ", peer="
                + peer.describe()
                + (report.isDone() ? ", done" : "")
                + "}";
    }
}
