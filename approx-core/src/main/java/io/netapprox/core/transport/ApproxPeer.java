package io.netapprox.core.transport;

import io.netapprox.core.control.ControlSession;
import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.engine.AtpException;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.IncomingJobListener;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One peer of an {@link ApproxTransport}: a control connection ({@link #control()}) and its
 * data-plane session - ATP ({@link #dataSession()}) or TCP, whichever the two sides chose ({@link
 * #dataPlane()}) - which live and die together. Its transfers work alike on both planes. Obtained
 * from {@link ApproxTransport#connect} (we are the client) or {@link OutgoingTransfer#peer()} /
 * {@link ApproxTransport#peers()} (the peer connected to us); once set up the two sides are
 * symmetric: either may {@link #request} data from the other.
 *
 * <p>The peer ends when its control connection ends (closed by either side, peer death, control
 * idle timeout), when its data-plane session fails (ATP peer death or idle timeout: the control
 * connection is then closed too), or on {@link #close()}. Every transfer still running then fails
 * with a {@link TransportException} saying which.
 */
public final class ApproxPeer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApproxPeer.class);

    final ApproxTransport transport;
    private final long sessionId;
    private final boolean initiator;
    private final InetSocketAddress peerData;
    private volatile ControlSession control;
    private volatile AtpSession atp;
    private volatile TcpSession tcp;
    private final Set<DataPlaneKind> planes;
    private volatile DataPlaneKind plane;

    /** Both sides have chosen the plane: the peer may be handed out ({@link #isActive}). */
    private volatile boolean ready;

    private final CompletableFuture<TcpSession> tcpAttached = new CompletableFuture<>();
    final ConcurrentHashMap<Integer, IncomingTransfer> incoming = new ConcurrentHashMap<>();
    final ConcurrentHashMap<Integer, OutgoingTransfer> outgoing = new ConcurrentHashMap<>();
    private final AtomicInteger nextJobId = new AtomicInteger(1);
    private final AtomicInteger nextPushId = new AtomicInteger(1);
    private volatile TransportException failure;
    private volatile boolean closingLocally;
    private final CompletableFuture<Void> closeFuture = new CompletableFuture<>();
    final IncomingJobListener listener = new Listener();

    ApproxPeer(
            ApproxTransport transport,
            long sessionId,
            boolean initiator,
            InetSocketAddress peerData) {
        this(transport, sessionId, initiator, peerData, EnumSet.of(DataPlaneKind.ATP));
    }

    ApproxPeer(
            ApproxTransport transport,
            long sessionId,
            boolean initiator,
            InetSocketAddress peerData,
            Set<DataPlaneKind> planes) {
        this.transport = transport;
        this.sessionId = sessionId;
        this.initiator = initiator;
        this.peerData = peerData;
        this.planes = EnumSet.copyOf(planes);
    }

    // ---- identity -------------------------------------------------------------------------------

    /** The data-plane session id (shared by both sides). */
    public long sessionId() {
        return sessionId;
    }

    /** True when this side opened the connection (it is the data-plane session's initiator). */
    public boolean isInitiator() {
        return initiator;
    }

    /** The control connection (to send other control requests; closing it ends the peer). */
    public ControlSession control() {
        return control;
    }

    /**
     * The ATP session when the peer runs on ATP ({@link #dataPlane()}), else null (a TCP peer, or
     * while the plane is being chosen).
     */
    public AtpSession dataSession() {
        return plane == DataPlaneKind.ATP ? atp : null;
    }

    /**
     * The data plane this peer's jobs run on, as both sides agreed (HELLO / HELLO_ACK, then
     * DATA_PLANE_SELECT); null until it is chosen (a peer is handed out only after).
     */
    public DataPlaneKind dataPlane() {
        return plane;
    }

    /** The planes both ends can run (the choices). */
    Set<DataPlaneKind> planes() {
        return planes;
    }

    public String peerEndpointId() {
        ControlSession c = control;
        return c != null ? c.peerEndpointId() : null;
    }

    public SocketAddress peerControlAddress() {
        ControlSession c = control;
        return c != null ? c.remoteAddress() : null;
    }

    public InetSocketAddress peerDataAddress() {
        return peerData;
    }

    /**
     * True until the peer ends, from the moment both sides have chosen its data plane (on the
     * initiator, once the server acknowledged DATA_PLANE_SELECT: a request sent before it could
     * reach a server that had not chosen yet and be refused).
     */
    public boolean isActive() {
        ControlSession c = control;
        return ready && failure == null && c != null && c.isActive() && dataSessionOpen();
    }

    /** Whether the chosen plane's session is open. */
    boolean dataSessionOpen() {
        DataPlaneKind k = plane;
        if (k == DataPlaneKind.ATP) {
            AtpSession a = atp;
            return a != null && a.isOpen();
        }
        TcpSession t = tcp;
        return k == DataPlaneKind.TCP && t != null && t.isOpen();
    }

    /**
     * Starts job {@code spec} (with its id) on the chosen plane's session: the engine's or the TCP
     * plane's {@link OutgoingJob}.
     *
     * @throws IllegalStateException the id is in use or the session is closed
     */
    OutgoingJob startDataJob(JobSpec spec) {
        DataPlaneKind k = plane;
        if (k == DataPlaneKind.ATP) {
            AtpSession a = atp;
            if (a == null) {
                throw new IllegalStateException("peer " + describe() + " has no ATP session");
            }
            return a.startJob(spec);
        }
        TcpSession t = tcp;
        if (k != DataPlaneKind.TCP || t == null) {
            throw new IllegalStateException(
                    "peer " + describe() + " has no data plane" + (k == null ? " chosen yet" : ""));
        }
        return t.startJob(spec);
    }

    /** Why the peer ended, or null while it is active. */
    public TransportException failure() {
        return failure;
    }

    /** Completes when the peer has ended and every transfer of it has completed. */
    public CompletableFuture<Void> closeFuture() {
        return closeFuture;
    }

    /** Requested transfers (we receive) still running. */
    public int incomingTransfers() {
        return incoming.size();
    }

    /** Served transfers (we send) still running. */
    public int outgoingTransfers() {
        return outgoing.size();
    }

    // ---- requesting -----------------------------------------------------------------------------

    /**
     * DATA_REQUEST: asks the peer to send the data described by {@code payload}
     * (integration-defined, e.g. a Spark shuffle block range) as a new job. The job id is allocated
     * here (unique on this session, never reused); the peer's {@link DataRequestHandler} announces
     * the job's groups (JOB_ANNOUNCE, see {@link IncomingTransfer#announced()}) and sends it over
     * ATP. Messages go to {@code listener}; the final report is {@link IncomingTransfer#report()},
     * sent back to the serving side as JOB_REPORT as well.
     *
     * <p>Never blocks. Failures (peer refused, connection lost, ...) complete the transfer's
     * futures exceptionally with a {@link TransportException}. To give up, cancel {@link
     * IncomingTransfer#report()} (later messages are released unseen); bound the wait with {@code
     * report().orTimeout(...)} if needed.
     */
    public IncomingTransfer request(byte[] payload, TransferListener listener) {
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(listener, "listener");
        ControlSession c = control;
        TransportException f = cannotStart(c, incoming.size(), "transfers from");
        // Requested jobs have ids in [1, 2^31); pushed jobs (allocated by the pushing side) have
        // bit 31 set, so the two never collide on a session.
        int jobId = nextJobId.getAndIncrement() & ~JobAnnouncement.PUSHED_JOB_ID_BIT;
        if (jobId == 0) { // wrapped around (2^31 requests): 0 is skipped
            jobId = nextJobId.getAndIncrement() & ~JobAnnouncement.PUSHED_JOB_ID_BIT;
        }
        IncomingTransfer t = new IncomingTransfer(this, jobId, listener);
        if (f != null) {
            t.fail(f);
            return t;
        }
        incoming.put(jobId, t);
        final int id = jobId;
        t.report().whenComplete((r, e) -> incoming.remove(id, t));
        f = failure;
        if (f != null) { // raced with the peer's end
            t.fail(f);
            return t;
        }
        byte[] copy = payload.clone();
        c.requestData(jobId, copy)
                .whenComplete(
                        (reply, err) -> {
                            if (err != null) {
                                // A local close also ends the control connection: report the close,
                                // not the connection's end.
                                TransportException ended = failure;
                                t.fail(
                                        ended != null
                                                ? ended
                                                : closingLocally
                                                        ? endReason()
                                                        : mapControlError(
                                                                err,
                                                                "data request for job "
                                                                        + Integer.toUnsignedString(
                                                                                id)));
                            } else {
                                t.responded(reply);
                            }
                        });
        return t;
    }

    // ---- pushing --------------------------------------------------------------------------------

    /**
     * Pushes a job to the peer without waiting for its request: the transport's {@link
     * DataRequestHandler} serves the returned transfer on a serving thread exactly as it serves a
     * DATA_REQUEST ({@link OutgoingTransfer#payload()} is {@code descriptor}); its {@link
     * OutgoingTransfer#startJob} announces the job with the PUSHED flag and {@code descriptor}, and
     * the receiver's {@link PushHandler} accepts it within its push budget or refuses. A refused
     * push fails {@link OutgoingTransfer#jobStarted()} and {@link OutgoingTransfer#report()} with
     * {@link TransportException.Reason#REJECTED} before any data was sent, so the caller can keep
     * the data for a pull. Never blocks.
     */
    public OutgoingTransfer push(byte[] descriptor) {
        Objects.requireNonNull(descriptor, "descriptor");
        int jobId = JobAnnouncement.PUSHED_JOB_ID_BIT | nextPushId.getAndIncrement();
        OutgoingTransfer r = new OutgoingTransfer(this, jobId, descriptor.clone(), true);
        TransportException f = cannotStart(control, outgoing.size(), "jobs to");
        if (f == null && outgoing.putIfAbsent(jobId, r) != null) {
            f =
                    new TransportException(
                            TransportException.Reason.REJECTED,
                            "pushed job id " + Integer.toUnsignedString(jobId) + " is in use",
                            null);
        }
        if (f != null) {
            r.fail(f);
            return r;
        }
        r.report().whenComplete((v, e) -> outgoing.remove(jobId, r));
        f = failure;
        if (f != null) { // raced with the peer's end
            r.fail(f);
            return r;
        }
        transport.servePush(r);
        return r;
    }

    /**
     * Why a new transfer cannot start on this peer now ({@code running} of its kind are running),
     * or null.
     */
    private TransportException cannotStart(ControlSession c, int running, String what) {
        TransportException f = failure;
        if (f != null) {
            return f;
        }
        if (c == null) {
            return new TransportException(
                    TransportException.Reason.CLOSED,
                    "peer session " + Long.toHexString(sessionId) + " is not set up",
                    null);
        }
        int maxJobs = transport.config().atp().maxJobsPerSession();
        if (running >= maxJobs) {
            return new TransportException(
                    TransportException.Reason.REJECTED,
                    maxJobs
                            + " "
                            + what
                            + " "
                            + describe()
                            + " are already running (AtpConfig.maxJobsPerSession)",
                    null);
        }
        return null;
    }

    // ---- life cycle -----------------------------------------------------------------------------

    /**
     * Closes the control connection and the data-plane session; running transfers fail with {@link
     * TransportException.Reason#CLOSED}. Idempotent; waits (up to the control shutdown timeout)
     * until the connection has closed unless called on its event loop.
     */
    @Override
    public void close() {
        closingLocally = true;
        // Fail the transfers first: closing the control session ends the data-plane session, whose
        // job-done events would otherwise race this and report a local close as JOB_FAILED.
        fail(
                new TransportException(
                        TransportException.Reason.CLOSED,
                        "peer " + describe() + " closed locally",
                        null));
        ControlSession c = control;
        if (c != null) {
            c.close();
        }
        closeFuture.complete(null);
    }

    void bind(ControlSession session) {
        TransportException f = failure;
        if (f != null) {
            throw new IllegalStateException(
                    "session "
                            + Long.toHexString(sessionId)
                            + " failed during setup: "
                            + f.getMessage());
        }
        this.control = session;
    }

    void bindData(AtpSession session) {
        this.atp = session;
    }

    /** The ATP session, whatever the chosen plane (the UDP probe runs on it). */
    AtpSession atpSession() {
        return atp;
    }

    /** The ATP session closed (the peer ended, or it went to TCP). */
    void unbindData(AtpSession session) {
        if (atp == session) {
            atp = null;
        }
    }

    /** The TCP data connection of this session attached. */
    void bindTcp(TcpSession session) {
        this.tcp = session;
        tcpAttached.complete(session);
    }

    TcpSession tcpSession() {
        return tcp;
    }

    /** Completes when the session's TCP data connection has attached (server side waits for it). */
    CompletableFuture<TcpSession> tcpAttached() {
        return tcpAttached;
    }

    /**
     * This side chose {@code k}: requests from the peer are served on it. The initiator chooses
     * before it sends DATA_PLANE_SELECT (the server's first requests may come before the ACK), the
     * server when it takes the select.
     */
    void chose(DataPlaneKind k) {
        this.plane = k;
    }

    /** Both sides chose the plane: the peer is handed out ({@link #isActive}). */
    void ready() {
        this.ready = true;
    }

    /**
     * The control connection or the transport ended this peer (data-plane session about to close).
     */
    void ended(TransportException why) {
        fail(why);
        closeFuture.complete(null);
    }

    TransportException endReason() {
        if (transport.isClosing()) {
            return new TransportException(
                    TransportException.Reason.CLOSED,
                    "transport closed (peer " + describe() + ")",
                    null);
        }
        if (closingLocally) {
            return new TransportException(
                    TransportException.Reason.CLOSED,
                    "peer " + describe() + " closed locally",
                    null);
        }
        return new TransportException(
                TransportException.Reason.CONTROL_CLOSED,
                "control connection to " + describe() + " closed",
                null);
    }

    /** Fails the peer: the first failure is kept; every running transfer fails with it. */
    void fail(TransportException why) {
        TransportException f;
        synchronized (this) {
            if (failure == null) {
                failure = why;
            }
            f = failure;
        }
        tcpAttached.completeExceptionally(f);
        for (IncomingTransfer t : new ArrayList<>(incoming.values())) {
            t.fail(f);
        }
        for (OutgoingTransfer r : new ArrayList<>(outgoing.values())) {
            r.fail(f);
        }
    }

    static TransportException mapControlError(Throwable err, String what) {
        return Errors.fromControl(err, what);
    }

    String describe() {
        ControlSession c = control;
        String id = c != null ? c.peerEndpointId() : null;
        return (id != null ? id + " " : "")
                + "("
                + (c != null ? c.remoteAddress() : peerData)
                + ", session "
                + Long.toHexString(sessionId)
                + ")";
    }

    @Override
    public String toString() {
        return "ApproxPeer{"
                + describe()
                + (initiator ? ", initiator" : "")
                + (plane != null ? ", " + plane.label() : "")
                + ", in="
                + incoming.size()
                + ", out="
                + outgoing.size()
                + (failure != null ? ", ended: " + failure.reason() : "")
                + "}";
    }

    // ---- data-plane events (endpoint event thread) ----------------------------------------------

    /**
     * What the peer's data-plane session delivers, on either plane (the TCP plane passes a null
     * session).
     */
    private final class Listener implements IncomingJobListener {
        @Override
        public void onMessage(AtpMessage message) {
            if (message.jobId() == UdpProbe.JOB_ID && message.session() != null) {
                message.release(); // the connecting side's UDP probe
                return;
            }
            IncomingTransfer t = incoming.get(message.jobId());
            if (t == null || t.report().isDone()) {
                message.release();
                transport.countUnknownJobMessage();
                return;
            }
            t.onMessage(message);
        }

        @Override
        public void onMessageLost(AtpSession session, int jobId, int messageId, long groupId) {
            IncomingTransfer t = incoming.get(jobId);
            if (t != null && !t.report().isDone()) {
                t.onMessageLost(messageId, groupId);
            }
        }

        @Override
        public void onJobDone(AtpSession session, JobReport report) {
            if (report.jobId() == UdpProbe.JOB_ID && session != null) {
                return;
            }
            IncomingTransfer t = incoming.get(report.jobId());
            if (t == null) {
                LOG.debug(
                        "peer {}: report of job {} that was not requested (or was given up): {}",
                        describe(),
                        report.jobId(),
                        report);
                return;
            }
            t.onReceiverReport(report);
        }

        @Override
        public void onSessionError(AtpSession session, AtpException error) {
            DataPlaneKind from = session != null ? DataPlaneKind.ATP : DataPlaneKind.TCP;
            if (plane != from) {
                // The ATP session failing while the plane is chosen (the probe sees it) or after
                // the peer went to TCP is not the peer's end.
                LOG.debug(
                        "peer {}: {} session failed ({}) but it is not (yet) the chosen plane",
                        describe(),
                        from.label(),
                        error.status());
                return;
            }
            LOG.info(
                    "peer {}: data-plane session failed ({}); closing the control connection",
                    describe(),
                    error.status());
            fail(
                    new TransportException(
                            TransportException.Reason.DATA_PLANE_FAILED,
                            from.label()
                                    + " data-plane session with "
                                    + describe()
                                    + " failed: "
                                    + error.status(),
                            error,
                            error.status(),
                            null));
            ControlSession c = control;
            if (c != null) {
                transport.runAsync(
                        c::close); // not on the event thread: close waits for the connection
            }
        }
    }
}
