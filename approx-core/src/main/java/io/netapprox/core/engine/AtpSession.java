package io.netapprox.core.engine;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session of an {@link AtpEndpoint} with one peer (authenticated with the key the control plane
 * handed out). Start outgoing jobs with {@link #startJob(JobSpec)}; incoming jobs go to the
 * session's {@link IncomingJobListener}. {@link #close()} fails its running jobs (status CLOSED)
 * and tells the peer (best effort); closing twice is harmless; using a closed session throws {@link
 * IllegalStateException}.
 */
public final class AtpSession implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AtpSession.class);

    final EndpointCore core;
    private final long id;
    private volatile InetSocketAddress peer;
    private volatile IncomingJobListener listener;
    private volatile boolean closed;
    private volatile AtpStatus failure;
    private final AtomicInteger nextJobId = new AtomicInteger(1);
    private final ConcurrentHashMap<Integer, AtpOutgoingJob> jobs = new ConcurrentHashMap<>();
    boolean readPending; // event thread only

    AtpSession(EndpointCore core, long id, InetSocketAddress peer, IncomingJobListener listener) {
        this.core = core;
        this.id = id;
        this.peer = peer;
        this.listener = listener;
    }

    public long id() {
        return id;
    }

    public InetSocketAddress peer() {
        return peer;
    }

    public IncomingJobListener listener() {
        return listener;
    }

    /** Sets the listener for incoming jobs (null: incoming messages are released at once). */
    public AtpSession listener(IncomingJobListener l) {
        this.listener = l;
        return this;
    }

    public boolean isOpen() {
        return !closed && !core.isClosed();
    }

    /** The error that failed the session (PEER_DEAD, IDLE_TIMEOUT, PROTOCOL), or null. */
    public AtpStatus failure() {
        return failure;
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("AtpSession " + Long.toUnsignedString(id) + " closed");
        }
        core.ensureOpen();
    }

    /** Points the session at a new peer address. */
    public void setPeer(InetSocketAddress newPeer) {
        ensureOpen();
        Objects.requireNonNull(newPeer, "peer");
        String host =
                newPeer.getAddress() != null
                        ? newPeer.getAddress().getHostAddress()
                        : newPeer.getHostString();
        AtpException.check(
                NativeEngine.sessionSetPeer(core.handle, id, host, newPeer.getPort()), "setPeer");
        peer = newPeer;
    }

    /**
     * Announces a job and returns its handle; messages are then given with {@link
     * OutgoingJob#send}. The job id is {@link JobSpec#jobId()} or, when absent, the next free id of
     * this session.
     */
    public AtpOutgoingJob startJob(JobSpec spec) {
        ensureOpen();
        Objects.requireNonNull(spec, "spec");
        List<GroupSpec> gs = spec.groups();
        int n = gs.size();
        long[] ids = new long[n];
        int[] sizes = new int[n];
        double[] msrs = new double[n];
        for (int i = 0; i < n; i++) {
            ids[i] = gs.get(i).groupId();
            sizes[i] = gs.get(i).size();
            msrs[i] = gs.get(i).msr();
        }
        for (int attempt = 0; ; attempt++) {
            int jobId = spec.jobId() != null ? spec.jobId() : nextJobId.getAndIncrement();
            AtpOutgoingJob job = new AtpOutgoingJob(this, jobId, spec);
            if (jobs.putIfAbsent(jobId, job) != null) {
                if (spec.jobId() != null) {
                    throw new IllegalStateException(
                            "job "
                                    + jobId
                                    + " is already running on session "
                                    + Long.toUnsignedString(id));
                }
                continue;
            }
            int rc =
                    NativeEngine.jobStart(
                            core.handle,
                            id,
                            jobId,
                            ids,
                            sizes,
                            msrs,
                            n,
                            spec.mrdf(),
                            spec.deadlineNanos());
            if (rc == 0) {
                return job;
            }
            jobs.remove(jobId, job);
            if (rc == AtpStatus.ALREADY_EXISTS.code() && spec.jobId() == null && attempt < 1024) {
                continue;
            }
            if (rc == AtpStatus.NOT_FOUND.code()) {
                throw new IllegalStateException(
                        "AtpSession "
                                + Long.toUnsignedString(id)
                                + " closed (the engine no longer"
                                + " knows it"
                                + (failure != null ? ": " + failure : "")
                                + ")");
            }
            if (rc == AtpStatus.LIMIT_EXCEEDED.code()) {
                throw new AtpException(
                        AtpStatus.LIMIT_EXCEEDED,
                        "starting "
                                + spec
                                + " exceeds a configured limit"
                                + " (maxJobsPerSession / maxMessagesPerJob / maxGroupsPerJob)");
            }
            throw AtpException.map(rc, "starting job " + jobId);
        }
    }

    /** Jobs started on this session that have not finished yet. */
    public List<AtpOutgoingJob> runningJobs() {
        return new ArrayList<>(jobs.values());
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!core.isClosed()) {
            NativeEngine.sessionClose(core.handle, id);
        }
        core.unregister(this);
        failJobs(AtpStatus.CLOSED, "session " + Long.toUnsignedString(id) + " closed");
    }

    /** Endpoint close: the engine goes away right after. */
    void closeForEndpoint() {
        if (!closed) {
            closed = true;
            NativeEngine.sessionClose(core.handle, id);
        }
        core.unregister(this);
        failJobs(AtpStatus.CLOSED, "endpoint closed");
    }

    private void failJobs(AtpStatus status, String why) {
        for (AtpOutgoingJob j : new ArrayList<>(jobs.values())) {
            j.completeExceptionally(
                    new AtpJobFailedException(status, "job " + j.id() + ": " + why));
        }
        jobs.clear();
    }

    void jobFinished(AtpOutgoingJob j) {
        jobs.remove(j.id(), j);
    }

    // ---- event dispatch (event thread) ----------------------------------------------------------
    void fireJobStarted(int jobId) {
        IncomingJobListener l = listener;
        if (l != null) {
            l.onJobStarted(this, jobId);
        }
    }

    void fireMessageLost(int jobId, int messageId, long groupId) {
        IncomingJobListener l = listener;
        if (l != null) {
            l.onMessageLost(this, jobId, messageId, groupId);
        }
    }

    void fireReadComplete() {
        IncomingJobListener l = listener;
        if (l != null) {
            l.onReadComplete(this);
        }
    }

    void fireJobDone(int jobId, AtpStatus status, JobReport report) {
        if (report == null) {
            log.warn(
                    "session {}: job {} ended ({}) without a readable report",
                    Long.toUnsignedString(id),
                    jobId,
                    status);
        }
        if (report != null && report.isSender() || report == null && jobs.containsKey(jobId)) {
            AtpOutgoingJob j = jobs.get(jobId);
            if (j != null) {
                j.complete(report, status);
            }
            return;
        }
        IncomingJobListener l = listener;
        if (l != null && report != null) {
            l.onJobDone(this, report);
        }
    }

    void fireSessionError(AtpStatus status) {
        failure = status;
        IncomingJobListener l = listener;
        if (l != null) {
            String what = status == AtpStatus.CLOSED ? " was closed by the peer" : " failed";
            l.onSessionError(
                    this, new AtpException(status, "session " + Long.toUnsignedString(id) + what));
        }
    }

    @Override
    public String toString() {
        return "AtpSession{id="
                + Long.toUnsignedString(id)
                + ", peer="
                + peer
                + (closed ? ", closed" : "")
                + "}";
    }
}
