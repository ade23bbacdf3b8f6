package io.netapprox.core.transport;

import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ControlSession;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.control.JobDecision;
import io.netapprox.core.engine.AtpJobFailedException;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The serving (sending) side of one transfer - the counterpart of the requester's {@link
 * IncomingTransfer}: a peer's DATA_REQUEST "send me data X as job J", handed to the transport's
 * {@link DataRequestHandler}. The handler reads {@link #payload()} (X), optionally sets a {@link
 * #reply(byte[]) reply}, calls {@link #startJob(JobSpec)} once and sends the messages on the
 * returned {@link OutgoingJob} - the same calls whichever data plane the peer runs on (ATP, or TCP
 * with its send policy). MSR updates from the requester are applied to that job as they arrive
 * (MSR_UPDATE), and {@link #report()} completes with the receiver's authoritative report
 * (JOB_REPORT) - the same numbers the requester's {@link IncomingTransfer#report()} has.
 */
public final class OutgoingTransfer {
    private static final Logger LOG = LoggerFactory.getLogger(OutgoingTransfer.class);
    private static final byte[] EMPTY = new byte[0];

    private final ApproxPeer peer;
    private final int jobId;
    private final byte[] payload;
    private final boolean pushed;
    private final long receivedNanos = System.nanoTime();
    private final CompletableFuture<byte[]> dataResponse = new CompletableFuture<>();
    private final CompletableFuture<TransferReport> report = new CompletableFuture<>();
    private volatile byte[] reply = EMPTY;
    // guarded by this
    private boolean started;
    private OutgoingJob job;
    private final Map<Integer, Double> pendingMsr = new LinkedHashMap<>();
    private boolean outcomeDone;
    private boolean answeredWithoutJob;
    private JobReport senderReport;
    private JobReport wireReport;
    private ScheduledFuture<?> reportTimer;

    OutgoingTransfer(ApproxPeer peer, int jobId, byte[] payload) {
        this(peer, jobId, payload, false);
    }

    OutgoingTransfer(ApproxPeer peer, int jobId, byte[] payload, boolean pushed) {
        this.peer = peer;
        this.jobId = jobId;
        this.payload = payload;
        this.pushed = pushed;
    }

    /**
     * True when this side pushes the job ({@link ApproxPeer#push}): {@link #payload()} is then the
     * descriptor sent with the announcement, and a refusal by the receiver fails {@link #report()}
     * with {@link TransportException.Reason#REJECTED} before anything was sent.
     */
    public boolean pushed() {
        return pushed;
    }

    /**
     * Completes when the job has started (a pushed job: the receiver accepted it); fails with the
     * transfer's failure otherwise, e.g. {@link TransportException.Reason#REJECTED} when the
     * receiver refused a push.
     */
    public CompletableFuture<Void> jobStarted() {
        return dataResponse.handle(
                (v, e) -> {
                    if (e == null) {
                        return null;
                    }
                    Throwable c = Errors.unwrap(e);
                    throw c instanceof TransportException t
                            ? t
                            : new TransportException(
                                    TransportException.Reason.REJECTED, c.getMessage(), c);
                });
    }

    /** The requesting peer. */
    public ApproxPeer peer() {
        return peer;
    }

    /**
     * {@link System#nanoTime()} when the DATA_REQUEST was taken by the control event loop (or the
     * push was created): the start of the serving side's timings.
     */
    public long receivedNanos() {
        return receivedNanos;
    }

    /** J: the job id the requester allocated; {@link #startJob} uses it. */
    public int jobId() {
        return jobId;
    }

    /** X: the integration-defined request (a copy). */
    public byte[] payload() {
        return payload.clone();
    }

    /**
     * Sets the integration-defined DATA_RESPONSE bytes (default empty); sent when the job starts.
     */
    public OutgoingTransfer reply(byte[] bytes) {
        this.reply = Objects.requireNonNull(bytes, "bytes").clone();
        return this;
    }

    /**
     * Answers the request with {@code bytes} (DATA_RESPONSE) and no job: there is nothing to send
     * (e.g. a long poll that found no new data). The requester's transfer completes at once with an
     * empty report ({@link TransferReport#hasJob()} false), and so does {@link #report()}. Call
     * instead of {@link #startJob}, once, from the serving thread.
     *
     * @throws IllegalStateException {@link #startJob} or this method was already called
     * @throws TransportException the transfer already failed (peer ended)
     */
    public void answerWithoutJob(byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        synchronized (this) {
            if (started) {
                throw new IllegalStateException(
                        "job "
                                + Integer.toUnsignedString(jobId)
                                + " was already started or answered");
            }
            started = true;
            answeredWithoutJob = true;
        }
        checkRunning();
        dataResponse.complete(bytes.clone());
        report.complete(TransferReport.withoutJob(jobId));
    }

    /**
     * Announces the job to the requester (JOB_ANNOUNCE with {@code spec}'s groups), starts it - for
     * a requested job at once when {@link ApproxTransportConfig#startBeforeAccept()} (the default;
     * a later refusal cancels it), else (and for a pushed job) after blocking until the receiver
     * accepts, at most the control request timeout - on the peer's data-plane session with job id
     * {@link #jobId()}, answers the DATA_REQUEST and returns the job to send on. MSR updates that
     * arrived before the start are applied to {@code spec}. Call once, from the serving thread.
     *
     * @throws IllegalArgumentException {@code spec} names another job id
     * @throws IllegalStateException called twice
     * @throws ControlException REQUEST_REJECTED: the requester rejected the announcement, or the
     *     job id cannot be used on this session
     * @throws TransportException the peer ended or the announcement got no answer
     */
    public OutgoingJob startJob(JobSpec spec) {
        Objects.requireNonNull(spec, "spec");
        if (spec.jobId() != null && spec.jobId() != jobId) {
            throw new IllegalArgumentException(
                    "the request is for job "
                            + Integer.toUnsignedString(jobId)
                            + ", the spec names job "
                            + Integer.toUnsignedString(spec.jobId()));
        }
        synchronized (this) {
            if (started) {
                throw new IllegalStateException(
                        "startJob was already called for job " + Integer.toUnsignedString(jobId));
            }
            started = true;
        }
        checkRunning();
        ControlSession c = peer.control();
        JobAnnouncement a =
                pushed
                        ? JobAnnouncement.of(jobId, spec, payload).asPushed()
                        : JobAnnouncement.of(jobId, spec, null);
        CompletableFuture<JobDecision> decision = c.announceJob(a);
        // The requester asked for job J itself: start at once; its decision only says whether it
        // gave the transfer up meanwhile (then the job is cancelled, see onDecision).
        boolean beforeAccept = !pushed && peer.transport.config().startBeforeAccept();
        if (!beforeAccept) {
            awaitAcceptance(decision);
        }
        OutgoingJob j = start(spec);
        if (beforeAccept) {
            decision.whenComplete((d, e) -> onDecision(j, d, e));
        }
        j.outcome().whenComplete(this::onOutcome);
        dataResponse.complete(reply);
        return j;
    }

    /**
     * Starts the job on the peer's data-plane session (ATP or TCP) with the MSR updates received so
     * far.
     */
    private OutgoingJob start(JobSpec spec) {
        OutgoingJob j;
        synchronized (this) {
            checkRunning();
            Map<Integer, Double> msr = new LinkedHashMap<>(pendingMsr);
            for (Iterator<Integer> it = msr.keySet().iterator(); it.hasNext(); ) {
                int gi = it.next();
                if (gi >= spec.groups().size()) {
                    LOG.warn(
                            "job {}: ignoring an MSR update for group index {} (the job has {} groups)",
                            Integer.toUnsignedString(jobId),
                            gi,
                            spec.groups().size());
                    it.remove();
                }
            }
            JobSpec withId = spec.withJobId(jobId).withMsrs(msr);
            try {
                j = peer.startDataJob(withId);
            } catch (IllegalStateException e) {
                if (!peer.dataSessionOpen()) {
                    throw e;
                }
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "job id "
                                + Integer.toUnsignedString(jobId)
                                + " cannot be used on this session: "
                                + e.getMessage());
            }
            job = j;
        }
        return j;
    }

    /** Waits for the receiver's decision on the announcement; throws unless it accepted. */
    private void awaitAcceptance(CompletableFuture<JobDecision> decision) {
        JobDecision d;
        try {
            d = decision.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransportException(
                    TransportException.Reason.CLOSED,
                    "interrupted while announcing job " + Integer.toUnsignedString(jobId),
                    e);
        } catch (ExecutionException e) {
            TransportException t =
                    Errors.fromControl(
                            e,
                            "announcing job "
                                    + Integer.toUnsignedString(jobId)
                                    + " to "
                                    + peer.describe());
            fail(t);
            throw t;
        }
        if (!d.accepted()) {
            if (pushed) {
                peer.transport.countPushRefusedByPeer();
                TransportException t =
                        new TransportException(
                                TransportException.Reason.REJECTED,
                                "the receiver refused pushed job "
                                        + Integer.toUnsignedString(jobId)
                                        + ": "
                                        + d.reason(),
                                null);
                fail(t);
                throw t;
            }
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED,
                    "the requester rejected job "
                            + Integer.toUnsignedString(jobId)
                            + ": "
                            + d.reason());
        }
    }

    /**
     * The requester's decision on a job started before it (control event loop): a refusal (it gave
     * the transfer up, or never asked) or no answer cancels the job and fails the transfer.
     */
    private void onDecision(OutgoingJob j, JobDecision d, Throwable err) {
        if (err == null && d.accepted()) {
            return;
        }
        TransportException t =
                err != null
                        ? Errors.fromControl(
                                err,
                                "announcing job "
                                        + Integer.toUnsignedString(jobId)
                                        + " to "
                                        + peer.describe())
                        : new TransportException(
                                TransportException.Reason.REJECTED,
                                "the requester refused job "
                                        + Integer.toUnsignedString(jobId)
                                        + " after it started: "
                                        + d.reason(),
                                null);
        if (report.isDone()) {
            return; // the transfer already ended (peer gone, job failed)
        }
        if (t.reason() == TransportException.Reason.REJECTED
                || t.reason() == TransportException.Reason.TIMEOUT) {
            peer.transport.countRequestedJobRefused();
        }
        LOG.debug("job {}: {}", Integer.toUnsignedString(jobId), t.getMessage());
        fail(t);
        try {
            j.cancel();
        } catch (RuntimeException e) {
            LOG.debug("cancelling job {}: {}", Integer.toUnsignedString(jobId), e.toString());
        }
    }

    /** The job, once started (else null). */
    public synchronized OutgoingJob job() {
        return job;
    }

    /**
     * Completes with the receiver's report (JOB_REPORT) once the sender's job has ended too; fails
     * with a {@link TransportException} when the job failed, the requester reports a failure, the
     * peer ended, or no JOB_REPORT came within {@link ApproxTransportConfig#reportTimeout()} after
     * the job ended.
     */
    public CompletableFuture<TransferReport> report() {
        return report;
    }

    @Override
    public String toString() {
        return "OutgoingTransfer{job="
                + Integer.toUnsignedString(jobId)
                + ", peer="
                + peer.describe()
                + ", payload="
                + payload.length
                + "B"
                + (report.isDone() ? ", done" : "")
                + "}";
    }

    // ---- transport side -------------------------------------------------------------------------

    CompletableFuture<byte[]> dataResponse() {
        return dataResponse;
    }

    private synchronized boolean answered() {
        return answeredWithoutJob;
    }

    synchronized boolean started() {
        return started;
    }

    private void checkRunning() {
        if (report.isCompletedExceptionally()) {
            try {
                report.join();
            } catch (java.util.concurrent.CompletionException e) {
                Throwable c = Errors.unwrap(e);
                throw c instanceof TransportException t
                        ? t
                        : new TransportException(
                                TransportException.Reason.CLOSED,
                                "transfer of job " + Integer.toUnsignedString(jobId) + " ended",
                                c);
            } catch (java.util.concurrent.CancellationException e) {
                throw new TransportException(
                        TransportException.Reason.CLOSED,
                        "transfer of job " + Integer.toUnsignedString(jobId) + " was cancelled",
                        e);
            }
        }
    }

    /** MSR_UPDATE from the requester (control event loop). */
    void applyMsr(Map<Integer, Double> msr) {
        OutgoingJob j;
        synchronized (this) {
            if (report.isDone()) {
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "job " + Integer.toUnsignedString(jobId) + " already finished");
            }
            j = job;
            if (j == null) {
                pendingMsr.putAll(msr);
                return;
            }
        }
        try {
            j.updateMsr(msr);
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED,
                    "MSR update of job "
                            + Integer.toUnsignedString(jobId)
                            + " not applied: "
                            + e.getMessage());
        }
    }

    /** JOB_REPORT from the requester (control event loop). */
    void onWireReport(JobReport wire) {
        boolean finish;
        synchronized (this) {
            if (job == null) {
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "job " + Integer.toUnsignedString(jobId) + " has not started");
            }
            if (wireReport != null) {
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "job " + Integer.toUnsignedString(jobId) + " was already reported");
            }
            wireReport = wire;
            finish = outcomeDone;
        }
        if (!wire.isSuccess()) {
            AtpStatus st = wire.status();
            fail(
                    new TransportException(
                            TransportException.Reason.JOB_FAILED,
                            "the requester reports that job "
                                    + Integer.toUnsignedString(jobId)
                                    + " ended with "
                                    + st,
                            null,
                            st,
                            new TransferReport(wire, senderReportSnapshot())));
        } else if (finish) {
            finish();
        } // else: the sender's engine has not reported yet (DONE crosses UDP); onOutcome finishes
    }

    private synchronized JobReport senderReportSnapshot() {
        return senderReport;
    }

    /** The sender's engine outcome (endpoint event thread, or a closing thread). */
    private void onOutcome(JobReport r, Throwable err) {
        Throwable cause = err == null ? null : Errors.unwrap(err);
        AtpJobFailedException failed = cause instanceof AtpJobFailedException f ? f : null;
        boolean haveWire;
        synchronized (this) {
            outcomeDone = true;
            senderReport = r != null ? r : failed != null ? failed.report() : null;
            haveWire = wireReport != null && wireReport.isSuccess();
            if (!haveWire && err == null && !report.isDone()) {
                long ms = peer.transport.config().reportTimeout().toMillis();
                reportTimer =
                        peer.transport.schedule(
                                () ->
                                        fail(
                                                new TransportException(
                                                        TransportException.Reason.TIMEOUT,
                                                        "no JOB_REPORT for job "
                                                                + Integer.toUnsignedString(jobId)
                                                                + " from "
                                                                + peer.describe()
                                                                + " within "
                                                                + ms
                                                                + " ms after the job ended",
                                                        null)),
                                ms,
                                TimeUnit.MILLISECONDS);
            }
        }
        if (haveWire) {
            finish(); // the receiver already said the job completed
        } else if (err != null) {
            AtpStatus st = failed != null ? failed.status() : null;
            fail(
                    new TransportException(
                            TransportException.Reason.JOB_FAILED,
                            "job "
                                    + Integer.toUnsignedString(jobId)
                                    + " to "
                                    + peer.describe()
                                    + " ended with "
                                    + (st != null ? st : String.valueOf(cause)),
                            cause,
                            st,
                            null));
        }
    }

    private void finish() {
        TransferReport tr;
        synchronized (this) {
            if (reportTimer != null) {
                reportTimer.cancel(false);
            }
            tr = new TransferReport(wireReport, senderReport);
        }
        report.complete(tr);
    }

    void fail(TransportException e) {
        synchronized (this) {
            if (reportTimer != null) {
                reportTimer.cancel(false);
            }
        }
        dataResponse.completeExceptionally(e);
        report.completeExceptionally(e);
    }

    /** The handler returned or threw (serving thread). */
    void served(Throwable error) {
        OutgoingJob j = job();
        if (error == null) {
            if (j == null && !answered()) {
                ControlException e =
                        new ControlException(
                                ErrorCode.REQUEST_REJECTED,
                                "the serving endpoint started no"
                                        + " job for request "
                                        + Integer.toUnsignedString(jobId));
                dataResponse.completeExceptionally(e);
                report.completeExceptionally(
                        new TransportException(
                                TransportException.Reason.REJECTED, e.getMessage(), e));
            }
            return;
        }
        if (j != null) {
            if (report.isDone()) { // the transfer had already failed (peer gone, job failed):
                // expected
                LOG.debug(
                        "serving job {} to {} ended: {}",
                        Integer.toUnsignedString(jobId),
                        peer.describe(),
                        String.valueOf(error));
            } else {
                LOG.warn(
                        "serving job {} to {} failed after it started; cancelling it",
                        Integer.toUnsignedString(jobId),
                        peer.describe(),
                        error);
            }
            j.cancel();
            fail(
                    new TransportException(
                            TransportException.Reason.JOB_FAILED,
                            "serving job " + Integer.toUnsignedString(jobId) + " failed: " + error,
                            error));
            return;
        }
        dataResponse.completeExceptionally(
                error); // ControlException: its message reaches the requester
        report.completeExceptionally(
                error instanceof TransportException t
                        ? t
                        : new TransportException(
                                TransportException.Reason.REJECTED,
                                "serving job "
                                        + Integer.toUnsignedString(jobId)
                                        + " failed: "
                                        + error,
                                error));
    }
}
