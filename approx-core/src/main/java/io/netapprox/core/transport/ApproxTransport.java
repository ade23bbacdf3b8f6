package io.netapprox.core.transport;

import io.netapprox.core.control.ControlClientFactory;
import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ControlHandler;
import io.netapprox.core.control.ControlMetrics;
import io.netapprox.core.control.ControlServer;
import io.netapprox.core.control.ControlSession;
import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.control.JobDecision;
import io.netapprox.core.control.MsrUpdate;
import io.netapprox.core.engine.AtpEndpoint;
import io.netapprox.core.engine.AtpNative;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.IncomingJobListener;
import io.netapprox.core.job.JobReport;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NetApprox's transport for one process (a Spark executor, a Flink TaskManager, a Kafka relay): one
 * ATP engine ({@link AtpEndpoint}; absent with {@code dataPlane=tcp}, or with {@code auto} where
 * the native library cannot load), a TCP data plane (unless {@code dataPlane=atp}), one control
 * server ({@link ControlServer}, unless disabled) and one control client factory, so that every
 * control connection carries one data-plane session - ATP or TCP, as the two sides agree ({@link
 * ApproxTransportConfig#dataPlane()}, docs/java-api.md "Two data planes").
 *
 * <pre>{@code
 * try (ApproxTransport t = ApproxTransport.start(config, request -> {         // serving side
 *         OutgoingJob job = request.startJob(specFor(request.payload()));
 *         for (...) job.send(groupIndex, index, buf);
 *     })) {
 *     ApproxPeer peer = t.connect(remoteControlAddress).get();                // requesting side
 *     IncomingTransfer in = peer.request(whatIWant, (tr, msg) -> { try { use(msg); } finally { msg.release(); } });
 *     TransferReport report = in.report().get();
 * }
 * }</pre>
 *
 * <p>Per transfer: the requester allocates job id J and sends DATA_REQUEST(J, X); the server's
 * {@link DataRequestHandler} runs on a serving thread, calls {@link OutgoingTransfer#startJob}
 * (JOB_ANNOUNCE, then the ATP job J - at once by default, see {@link
 * ApproxTransportConfig#startBeforeAccept()}, else after the requester's acceptance) and sends; the
 * requester may send MSR_UPDATEs, applied to the running job; the requester's engine report
 * (authoritative delivered / lost ids per group) completes its {@link IncomingTransfer#report()}
 * and goes back as JOB_REPORT, which completes the server's {@link OutgoingTransfer#report()} with
 * the same numbers.
 *
 * <p>{@link #close()} closes every peer (their transfers fail with {@link
 * TransportException.Reason#CLOSED}), the control server and client threads, the serving threads
 * and the engine. Idempotent.
 */
public final class ApproxTransport implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ApproxTransport.class);

    private final ApproxTransportConfig config;
    private final DataRequestHandler requestHandler;
    private final PushHandler pushHandler;
    private final AtpEndpoint endpoint;
    private final TransportDataPlane planes;
    private final String atpUnavailableReason;
    private final java.util.concurrent.atomic.AtomicLong udpProbeFallbacks =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong atpPeers =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong tcpPeers =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicBoolean udpFallbackWarned =
            new java.util.concurrent.atomic.AtomicBoolean();
    private final ControlClientFactory clients;
    private final ControlServer server;
    private final ThreadPoolExecutor serveExecutor;
    private final ScheduledThreadPoolExecutor timer;
    private final Map<Long, ApproxPeer> peers = new ConcurrentHashMap<>();
    private volatile boolean closing;
    // push budget and counters (guarded by pushLock)
    private final Object pushLock = new Object();
    private int pushedJobsOpen;
    private long pushedMessagesOpen;
    private long pushesAccepted;
    private long pushesRefused;
    private long pushesOverBudget;
    private final java.util.concurrent.atomic.AtomicLong pushesSent =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong pushesRefusedByPeer =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong unknownJobMessages =
            new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong requestedJobsRefused =
            new java.util.concurrent.atomic.AtomicLong();

    private ApproxTransport(
            ApproxTransportConfig config,
            DataRequestHandler requestHandler,
            PushHandler pushHandler) {
        this.config = config;
        this.requestHandler = requestHandler;
        this.pushHandler = pushHandler;
        DataPlaneMode mode = config.dataPlane();
        String unavailable = null;
        AtpEndpoint ep = null;
        if (mode != DataPlaneMode.TCP) {
            Throwable cause = AtpNative.isAvailable() ? null : AtpNative.unavailabilityCause();
            if (cause != null) {
                unavailable = String.valueOf(cause.getMessage());
                if (mode == DataPlaneMode.ATP) {
                    throw new TransportException(
                            TransportException.Reason.DATA_PLANE_FAILED,
                            "dataPlane=atp, but the ATP engine cannot run on this platform: "
                                    + unavailable,
                            cause);
                }
                LOG.warn(
                        "dataPlane=auto: the ATP engine cannot run on this platform ({}); every peer"
                                + " of this transport uses the TCP data plane",
                        unavailable);
            } else {
                ep = AtpEndpoint.open(config.atp());
            }
        }
        this.atpUnavailableReason = unavailable;
        ScheduledThreadPoolExecutor tm = null;
        ThreadPoolExecutor serve = null;
        TransportDataPlane dp = null;
        ControlClientFactory cf = null;
        ControlServer srv = null;
        try {
            tm =
                    new ScheduledThreadPoolExecutor(
                            1, new DefaultThreadFactory("netapprox-transport", true));
            tm.prestartCoreThread(); // a fixed thread count from the start, not a thread
            // appearing on first use
            tm.setRemoveOnCancelPolicy(true);
            BlockingQueue<Runnable> queue =
                    config.maxQueuedRequests() == 0
                            ? new SynchronousQueue<>()
                            : new ArrayBlockingQueue<>(config.maxQueuedRequests());
            serve =
                    new ThreadPoolExecutor(
                            config.serveThreads(),
                            config.serveThreads(),
                            60,
                            TimeUnit.SECONDS,
                            queue,
                            new DefaultThreadFactory("netapprox-serve", true));
            serve.allowCoreThreadTimeOut(true);
            dp =
                    new TransportDataPlane(
                            ep != null
                                    ? new AtpDataPlane(
                                            ep,
                                            config.maxPeers(),
                                            config.advertisedDataAddress(),
                                            new AtpCallbacks())
                                    : null,
                            mode != DataPlaneMode.ATP
                                    ? new TcpDataPlane(config.atp(), config.tcpSendPolicy())
                                    : null,
                            config.maxPeers(),
                            new Peers());
            ControlHandler h = new Handler();
            cf = new ControlClientFactory(config.control(), dp, h);
            srv = config.serverEnabled() ? ControlServer.start(config.control(), dp, h) : null;
        } catch (RuntimeException | Error e) {
            closeAll(srv, cf, serve, tm, dp, ep);
            throw e;
        }
        this.endpoint = ep;
        this.timer = tm;
        this.serveExecutor = serve;
        this.planes = dp;
        this.clients = cf;
        this.server = srv;
    }

    /** Starts a transport that serves no data requests (it can still request data from others). */
    public static ApproxTransport start(ApproxTransportConfig config) {
        return start(config, null);
    }

    /**
     * Opens the engine, starts the control server (if enabled) and the client factory.
     *
     * @param handler serves DATA_REQUESTs; null refuses them (UNSUPPORTED)
     */
    public static ApproxTransport start(ApproxTransportConfig config, DataRequestHandler handler) {
        return start(config, handler, null);
    }

    /**
     * Opens the engine, starts the control server (if enabled) and the client factory.
     *
     * @param handler serves DATA_REQUESTs and the jobs this side {@link ApproxPeer#push pushes};
     *     null refuses requests (UNSUPPORTED) and makes pushing fail
     * @param pushHandler receives jobs peers push to this side; null refuses every push
     */
    public static ApproxTransport start(
            ApproxTransportConfig config, DataRequestHandler handler, PushHandler pushHandler) {
        Objects.requireNonNull(config, "config");
        return new ApproxTransport(config, handler, pushHandler);
    }

    /** Counters of pushed jobs, both directions. */
    public PushMetrics pushMetrics() {
        synchronized (pushLock) {
            return new PushMetrics(
                    pushesSent.get(),
                    pushesRefusedByPeer.get(),
                    pushesAccepted,
                    pushesRefused,
                    pushesOverBudget,
                    pushedJobsOpen,
                    pushedMessagesOpen);
        }
    }

    /**
     * Data-plane messages this side received for a job it has no running transfer of (never
     * requested, given up or already ended): released unread. With {@link
     * ApproxTransportConfig#startBeforeAccept()} a server may send before it learns that the
     * requester gave the transfer up, so a few are expected after cancellations.
     */
    public long messagesOfUnknownJobs() {
        return unknownJobMessages.get();
    }

    /**
     * Requested jobs this side started before the requester's acceptance ({@link
     * ApproxTransportConfig#startBeforeAccept()}) and then cancelled because the requester refused
     * them (it had given the transfer up) or did not answer the announcement.
     */
    public long requestedJobsRefused() {
        return requestedJobsRefused.get();
    }

    void countUnknownJobMessage() {
        unknownJobMessages.incrementAndGet();
    }

    void countRequestedJobRefused() {
        requestedJobsRefused.incrementAndGet();
    }

    /**
     * Connects to another transport's control server: TCP, HELLO, authentication (if configured),
     * SESSION_SETUP and the data-plane session. The future fails with a {@link TransportException}
     * of reason {@link TransportException.Reason#CONNECT_FAILED} whose cause is the control plane's
     * error (e.g. a {@code ControlException} with code AUTH_FAILED or VERSION_MISMATCH, a {@code
     * ConnectException}); no session is left on either side.
     */
    public CompletableFuture<ApproxPeer> connect(InetSocketAddress controlAddress) {
        Objects.requireNonNull(controlAddress, "controlAddress");
        if (closing) {
            return CompletableFuture.failedFuture(
                    new TransportException(
                            TransportException.Reason.CLOSED, "transport is closed", null));
        }
        CompletableFuture<ApproxPeer> result = new CompletableFuture<>();
        clients.connect(controlAddress)
                .whenComplete(
                        (client, err) -> {
                            if (err != null) {
                                Throwable c = Errors.unwrap(err);
                                result.completeExceptionally(
                                        new TransportException(
                                                TransportException.Reason.CONNECT_FAILED,
                                                "connecting to "
                                                        + controlAddress
                                                        + " failed: "
                                                        + c.getMessage(),
                                                c));
                                return;
                            }
                            ApproxPeer p = peers.get(client.sessionId());
                            if (p == null || p.failure() != null || !client.isActive()) {
                                client.close();
                                TransportException f = p != null ? p.failure() : null;
                                result.completeExceptionally(
                                        new TransportException(
                                                TransportException.Reason.CONNECT_FAILED,
                                                "connecting to "
                                                        + controlAddress
                                                        + " failed: the session ended during setup"
                                                        + (f != null
                                                                ? " (" + f.getMessage() + ")"
                                                                : ""),
                                                f));
                                return;
                            }
                            // Off the control event loop: the UDP probe starts an engine job.
                            runAsync(() -> choosePlane(client, p, controlAddress, result));
                        });
        return result;
    }

    /**
     * The connecting side chooses the peer's data plane among the agreed ones: ATP when it is
     * agreed and the UDP probe gets through, else TCP (auto), or no connection (ATP only); then
     * DATA_PLANE_SELECT, after which the peer is handed out.
     */
    private void choosePlane(
            ControlSession client,
            ApproxPeer p,
            InetSocketAddress controlAddress,
            CompletableFuture<ApproxPeer> result) {
        Set<DataPlaneKind> agreed = client.dataPlanes();
        CompletableFuture<DataPlaneKind> chosen;
        if (agreed.contains(DataPlaneKind.ATP)) {
            Duration t = config.udpProbeTimeout();
            CompletableFuture<String> probe =
                    t.isZero()
                            ? CompletableFuture.completedFuture(null)
                            : UdpProbe.run(p.atpSession(), t, this::schedule);
            chosen =
                    probe.thenCompose(
                            unreachable -> {
                                if (unreachable == null) {
                                    return select(client, p, DataPlaneKind.ATP, "");
                                }
                                if (!agreed.contains(DataPlaneKind.TCP)) {
                                    throw TransportException.noDataPlane(
                                            "connecting to "
                                                    + controlAddress
                                                    + " failed: the peer is not reachable over UDP"
                                                    + " ("
                                                    + unreachable
                                                    + "), and TCP is not among the data planes"
                                                    + " both ends run (ATP only: dataPlane=atp on"
                                                    + " one side), so there is no fallback");
                                }
                                udpProbeFallbacks.incrementAndGet();
                                String msg =
                                        "peer {} is not reachable over UDP ({}); it uses the TCP"
                                                + " data plane (dataPlane=auto)";
                                if (udpFallbackWarned.compareAndSet(false, true)) {
                                    LOG.warn(msg, p.describe(), unreachable);
                                } else {
                                    LOG.info(msg, p.describe(), unreachable);
                                }
                                planes.closeAtpSession(p.sessionId());
                                return attachTcp(client, p)
                                        .thenCompose(
                                                v ->
                                                        select(
                                                                client,
                                                                p,
                                                                DataPlaneKind.TCP,
                                                                "UDP probe: " + unreachable));
                            });
        } else {
            chosen =
                    attachTcp(client, p)
                            .thenCompose(v -> select(client, p, DataPlaneKind.TCP, tcpReason()));
        }
        chosen.whenComplete(
                (k, err) -> {
                    if (err != null) {
                        Throwable c = Errors.unwrap(err);
                        client.close();
                        result.completeExceptionally(
                                c instanceof TransportException te
                                                && te.reason()
                                                        == TransportException.Reason.CONNECT_FAILED
                                        ? te
                                        : new TransportException(
                                                TransportException.Reason.CONNECT_FAILED,
                                                "connecting to "
                                                        + controlAddress
                                                        + " failed while choosing the data plane: "
                                                        + c.getMessage(),
                                                c));
                        return;
                    }
                    if (!result.complete(p)) {
                        p.close(); // the caller gave up
                    }
                });
    }

    /** Why this side chose TCP without a probe (ATP is not among the agreed planes). */
    private String tcpReason() {
        if (config.dataPlane() == DataPlaneMode.TCP) {
            return "this endpoint runs TCP only (dataPlane=tcp)";
        }
        if (atpUnavailableReason != null) {
            return "the ATP engine cannot run on this endpoint: " + atpUnavailableReason;
        }
        return "the peer runs TCP only";
    }

    /** Client side: opens the session's TCP data connection and binds it to the peer. */
    private CompletableFuture<Void> attachTcp(ControlSession client, ApproxPeer p) {
        TcpDataPlane tcp = planes.tcp();
        return client.openDataConnection(ch -> p.bindTcp(tcp.attach(p.sessionId(), ch, p.listener)))
                .thenApply(ch -> null);
    }

    /** DATA_PLANE_SELECT; the peer is ready once the server took it. */
    private CompletableFuture<DataPlaneKind> select(
            ControlSession client, ApproxPeer p, DataPlaneKind k, String reason) {
        p.chose(k); // before the ACK: a request the server sends right after it finds the peer
        // ready
        countPeer(k);
        // handed out (isActive) only once the server took the select: a request this side sent
        // before could reach a server that had not chosen yet (refused: "no data plane chosen")
        return client.selectDataPlane(k, reason)
                .thenApply(
                        v -> {
                            p.ready();
                            return k;
                        });
    }

    private void countPeer(DataPlaneKind k) {
        (k == DataPlaneKind.ATP ? atpPeers : tcpPeers).incrementAndGet();
    }

    /** The control server's counters (null when the server is disabled); for tests. */
    ControlMetrics controlServerMetrics() {
        return server != null ? server.metrics() : null;
    }

    /** Counters of the data planes (fallbacks, peers per plane, TCP traffic). */
    public DataPlaneMetrics dataPlaneMetrics() {
        TcpDataPlane tcp = planes.tcp();
        TcpDataPlane.Metrics m = tcp != null ? tcp.metrics() : null;
        return new DataPlaneMetrics(
                endpoint != null,
                atpUnavailableReason != null ? 1 : 0,
                atpUnavailableReason,
                udpProbeFallbacks.get(),
                atpPeers.get(),
                tcpPeers.get(),
                m != null ? m.messagesSent.get() : 0,
                m != null ? m.bytesSent.get() : 0,
                m != null ? m.messagesReceived.get() : 0,
                m != null ? m.bytesReceived.get() : 0,
                m != null ? m.messagesDiscarded.get() : 0,
                m != null ? m.sendStalls.get() : 0,
                m != null ? m.readPauses.get() : 0);
    }

    /** Peers whose session is set up and whose data plane is chosen (both directions). */
    public List<ApproxPeer> peers() {
        List<ApproxPeer> out = new ArrayList<>();
        for (ApproxPeer p : peers.values()) {
            if (p.control() != null && p.dataPlane() != null) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * The control server's bound address (what peers {@link #connect} to), or null when the server
     * is disabled.
     */
    public InetSocketAddress controlAddress() {
        return server != null ? server.localAddress() : null;
    }

    /** The engine's UDP port, or 0 when this transport runs no ATP engine. */
    public int dataPort() {
        return endpoint != null ? endpoint.localPort() : 0;
    }

    public ApproxTransportConfig config() {
        return config;
    }

    /** The ATP engine, or null when this transport runs none (TCP only). */
    public AtpEndpoint endpoint() {
        return endpoint;
    }

    /** The ATP data plane (the engine's sessions), or null when this transport runs no engine. */
    public AtpDataPlane dataPlane() {
        return planes.atp();
    }

    /** Both data planes as the control plane sees them (tests, diagnostics). */
    TransportDataPlane planes() {
        return planes;
    }

    /** The control server, or null when disabled. */
    public ControlServer controlServer() {
        return server;
    }

    public ControlClientFactory controlClients() {
        return clients;
    }

    public boolean isOpen() {
        return !closing;
    }

    /**
     * Closes every peer (running transfers fail with {@link TransportException.Reason#CLOSED}),
     * stops the control server and client threads, waits for the serving threads (up to the control
     * shutdown timeout) and closes the engine. Idempotent.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
        }
        for (ApproxPeer p : new ArrayList<>(peers.values())) {
            p.fail(
                    new TransportException(
                            TransportException.Reason.CLOSED,
                            "transport closed (peer " + p.describe() + ")",
                            null));
        }
        closeAll(server, clients, serveExecutor, timer, planes, endpoint);
        LOG.debug("transport closed");
    }

    private void closeAll(
            ControlServer srv,
            ControlClientFactory cf,
            ThreadPoolExecutor serve,
            ScheduledThreadPoolExecutor tm,
            TransportDataPlane dp,
            AtpEndpoint ep) {
        long shutdownMs = config.control().shutdownTimeout().toMillis();
        RuntimeException first = null;
        // Control first: closing connections closes their data-plane sessions, which fails running
        // jobs and so
        // releases serving threads blocked in send().
        for (AutoCloseable c : new AutoCloseable[] {srv, cf}) {
            first = closeQuietly(c, first);
        }
        if (serve != null) {
            serve.shutdown();
            try {
                if (!serve.awaitTermination(shutdownMs, TimeUnit.MILLISECONDS)) {
                    serve.shutdownNow();
                    if (!serve.awaitTermination(shutdownMs, TimeUnit.MILLISECONDS)) {
                        LOG.warn(
                                "serving threads did not stop within {} ms (a DataRequestHandler ignores its"
                                        + " job's failure?)",
                                2 * shutdownMs);
                    }
                }
            } catch (InterruptedException e) {
                serve.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
        first = closeQuietly(dp, first);
        first = closeQuietly(ep, first);
        if (tm != null) {
            tm.shutdownNow();
        }
        peers.clear();
        if (first != null) {
            throw first;
        }
    }

    private static RuntimeException closeQuietly(AutoCloseable c, RuntimeException first) {
        if (c == null) {
            return first;
        }
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("closing {} failed", c, e);
            if (first == null) {
                first = e instanceof RuntimeException r ? r : new IllegalStateException(e);
            }
        }
        return first;
    }

    // ---- internals ------------------------------------------------------------------------------

    boolean isClosing() {
        return closing;
    }

    ScheduledFuture<?> schedule(Runnable r, long delay, TimeUnit unit) {
        try {
            return timer.schedule(r, delay, unit);
        } catch (
                RejectedExecutionException e) { // closing: the transfer fails with the close anyway
            return null;
        }
    }

    void runAsync(Runnable r) {
        try {
            timer.execute(
                    () -> {
                        try {
                            r.run();
                        } catch (RuntimeException e) {
                            LOG.warn("transport task failed", e);
                        }
                    });
        } catch (RejectedExecutionException e) {
            LOG.debug("transport closing; task dropped");
        }
    }

    /**
     * Serves a job this side pushes (ApproxPeer.push) on a serving thread, through the same {@link
     * DataRequestHandler} as a request.
     */
    void servePush(OutgoingTransfer r) {
        if (requestHandler == null) {
            r.fail(
                    new TransportException(
                            TransportException.Reason.REJECTED,
                            "this transport has no DataRequestHandler to serve pushed jobs",
                            null));
            return;
        }
        pushesSent.incrementAndGet();
        try {
            serveExecutor.execute(() -> serve(r));
        } catch (RejectedExecutionException e) {
            r.fail(
                    new TransportException(
                            TransportException.Reason.REJECTED,
                            "too many transfers queued to serve ("
                                    + config.serveThreads()
                                    + " serving threads, "
                                    + config.maxQueuedRequests()
                                    + " queued)",
                            null));
        }
    }

    /**
     * A JOB_ANNOUNCE with the PUSHED flag (control event loop): within the budget and with the push
     * handler's consent, a new incoming transfer; else a rejection naming why.
     */
    private JobDecision acceptPush(ApproxPeer p, JobAnnouncement job) {
        int jobId = job.jobId();
        String refusal = null;
        boolean overBudget = false;
        if (pushHandler == null) {
            refusal = "this endpoint accepts no pushed jobs";
        } else if (closing || p.failure() != null) {
            refusal = "this endpoint is closing";
        } else if (p.incoming.containsKey(jobId)) {
            refusal = "job " + Integer.toUnsignedString(jobId) + " is already running";
        } else if (p.incoming.size() >= config.atp().maxJobsPerSession()) {
            refusal =
                    config.atp().maxJobsPerSession()
                            + " jobs are already running on this session (AtpConfig.maxJobsPerSession)";
            overBudget = true;
        }
        long n = job.totalMessages();
        if (refusal == null) {
            synchronized (pushLock) {
                if (pushedJobsOpen + 1 > config.maxPushedJobs()) {
                    refusal =
                            "push budget: "
                                    + pushedJobsOpen
                                    + " pushed jobs are running (maxPushedJobs "
                                    + config.maxPushedJobs()
                                    + ")";
                    overBudget = true;
                } else if (pushedMessagesOpen + n > config.maxPushedMessages()) {
                    refusal =
                            "push budget: "
                                    + pushedMessagesOpen
                                    + " pushed messages are running, this job has "
                                    + n
                                    + " (maxPushedMessages "
                                    + config.maxPushedMessages()
                                    + ")";
                    overBudget = true;
                } else {
                    pushedJobsOpen++;
                    pushedMessagesOpen += n;
                }
            }
        }
        if (refusal != null) {
            if (pushHandler != null) {
                try {
                    pushHandler.onRefused(job.descriptor(), refusal);
                } catch (RuntimeException e) {
                    LOG.warn(
                            "push handler failed on refused job {}",
                            Integer.toUnsignedString(jobId),
                            e);
                }
            }
            return refusePush(jobId, refusal, overBudget);
        }
        IncomingTransfer t = new IncomingTransfer(p, jobId, null);
        t.report()
                .whenComplete(
                        (r, e) -> {
                            p.incoming.remove(jobId, t);
                            synchronized (pushLock) {
                                pushedJobsOpen--;
                                pushedMessagesOpen -= n;
                            }
                        });
        t.onAnnounce(job);
        TransferListener listener;
        try {
            listener = pushHandler.onPush(t);
        } catch (ControlException e) {
            t.fail(new TransportException(TransportException.Reason.REJECTED, e.getMessage(), e));
            return refusePush(jobId, e.getMessage(), false);
        } catch (RuntimeException e) {
            LOG.warn("push handler failed on job {}", Integer.toUnsignedString(jobId), e);
            t.fail(new TransportException(TransportException.Reason.REJECTED, "handler failed", e));
            return refusePush(jobId, "the receiving endpoint failed to take the job", false);
        }
        if (listener == null) {
            t.fail(new TransportException(TransportException.Reason.REJECTED, "refused", null));
            return refusePush(jobId, "the receiving endpoint does not want this job", false);
        }
        t.pushAccepted(listener);
        if (p.incoming.putIfAbsent(jobId, t) != null) {
            t.fail(new TransportException(TransportException.Reason.REJECTED, "duplicate", null));
            return refusePush(
                    jobId, "job " + Integer.toUnsignedString(jobId) + " is already running", false);
        }
        synchronized (pushLock) {
            pushesAccepted++;
        }
        TransportException f = p.failure();
        if (f != null) { // raced with the peer's end
            t.fail(f);
        }
        return JobDecision.accept();
    }

    void countPushRefusedByPeer() {
        pushesRefusedByPeer.incrementAndGet();
    }

    private JobDecision refusePush(int jobId, String why, boolean overBudget) {
        synchronized (pushLock) {
            pushesRefused++;
            if (overBudget) {
                pushesOverBudget++;
            }
        }
        LOG.debug("refused pushed job {}: {}", Integer.toUnsignedString(jobId), why);
        return JobDecision.reject("pushed job " + Integer.toUnsignedString(jobId) + ": " + why);
    }

    /**
     * A reply that failed because the requester's session ended (it closed, or its data plane
     * failed) is the session's end, logged once by {@link ApproxPeer}, not a failure of the
     * handler: it is refused with the reason instead of being counted and warned as a handler error
     * (a Kafka relay warned once per consumer that closed while being served).
     */
    private static byte[] rethrowReplyFailure(ApproxPeer p, Throwable e) {
        Throwable cause = Errors.unwrap(e);
        TransportException ended = p.failure();
        if (ended != null) {
            LOG.debug(
                    "reply to {} not sent: its session ended ({})", p.describe(), cause.toString());
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED,
                    "the session ended before the reply: " + ended.getMessage(),
                    cause);
        }
        throw cause instanceof RuntimeException re ? re : new CompletionException(cause);
    }

    private ApproxPeer peerOf(ControlSession session) {
        ApproxPeer p = peers.get(session.sessionId());
        if (p == null) {
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED,
                    "no data-plane session "
                            + Long.toHexString(session.sessionId())
                            + " on this endpoint");
        }
        return p;
    }

    private void serve(OutgoingTransfer r) {
        if (r.report().isDone()) { // the peer ended while the request was queued
            r.served(null);
            return;
        }
        Throwable error = null;
        try {
            requestHandler.serve(r);
        } catch (Throwable t) {
            error = t;
        }
        r.served(error);
        if (error instanceof Error e && !(error instanceof AssertionError)) {
            throw e;
        }
    }

    /** The peer registry: one {@link ApproxPeer} per control session, whatever its plane. */
    private final class Peers implements TransportDataPlane.Peers {
        @Override
        public ApproxPeer opening(
                long sessionId,
                InetSocketAddress udpPeer,
                boolean initiator,
                Set<DataPlaneKind> agreed) {
            if (closing) {
                throw new IllegalStateException("transport is closing");
            }
            ApproxPeer p =
                    new ApproxPeer(ApproxTransport.this, sessionId, initiator, udpPeer, agreed);
            if (peers.putIfAbsent(sessionId, p) != null) {
                throw new IllegalStateException(
                        "session " + Long.toHexString(sessionId) + " already exists");
            }
            return p;
        }

        @Override
        public void closing(long sessionId) {
            ApproxPeer p = peers.remove(sessionId);
            if (p != null) {
                p.ended(p.endReason());
            }
        }

        @Override
        public ApproxPeer peer(long sessionId) {
            return peers.get(sessionId);
        }
    }

    /** ATP session hooks: the session belongs to the peer the registry opened. */
    private final class AtpCallbacks implements AtpDataPlane.SessionCallbacks {
        @Override
        public IncomingJobListener sessionOpening(
                long sessionId, InetSocketAddress peer, boolean initiator) {
            ApproxPeer p = peers.get(sessionId);
            if (p == null) {
                throw new IllegalStateException(
                        "no peer for session " + Long.toHexString(sessionId));
            }
            return p.listener;
        }

        @Override
        public void sessionOpened(AtpSession session) {
            ApproxPeer p = peers.get(session.id());
            if (p != null) {
                p.bindData(session);
            }
        }

        @Override
        public void sessionClosing(long sessionId, AtpSession session) {
            ApproxPeer p = peers.get(sessionId);
            if (p != null && session != null) {
                p.unbindData(session);
            }
        }
    }

    /** The control plane's handler, shared by the server and the client factory. */
    private final class Handler implements ControlHandler {
        @Override
        public void onSessionSetup(ControlSession session) {
            ApproxPeer p = peers.get(session.sessionId());
            if (p == null) {
                throw new IllegalStateException(
                        "no data-plane session " + Long.toHexString(session.sessionId()));
            }
            p.bind(session);
        }

        @Override
        public CompletionStage<Void> onDataPlaneSelect(
                ControlSession session, DataPlaneKind plane, String reason) {
            ApproxPeer p = peerOf(session);
            if (plane == DataPlaneKind.ATP) {
                if (p.atpSession() == null) {
                    throw new ControlException(
                            ErrorCode.REQUEST_REJECTED,
                            "session " + Long.toHexString(p.sessionId()) + " has no ATP session");
                }
                p.chose(DataPlaneKind.ATP);
                p.ready(); // the initiator chose before it sent the select
                countPeer(DataPlaneKind.ATP);
                return CompletableFuture.completedFuture(null);
            }
            // TCP: the client sent its data connection's proof before this; the two connections
            // are read independently, so wait for the attach (at most the handshake timeout).
            CompletableFuture<Void> done = new CompletableFuture<>();
            long ms = config.control().handshakeTimeout().toMillis();
            ScheduledFuture<?> t =
                    schedule(
                            () ->
                                    done.completeExceptionally(
                                            new ControlException(
                                                    ErrorCode.REQUEST_REJECTED,
                                                    "the TCP data connection of session "
                                                            + Long.toHexString(p.sessionId())
                                                            + " did not attach within "
                                                            + ms
                                                            + " ms")),
                            ms,
                            TimeUnit.MILLISECONDS);
            p.tcpAttached()
                    .whenComplete(
                            (s, e) -> {
                                if (t != null) {
                                    t.cancel(false);
                                }
                                if (e != null) {
                                    done.completeExceptionally(
                                            new ControlException(
                                                    ErrorCode.REQUEST_REJECTED,
                                                    "session ended before its TCP data connection"
                                                            + " attached"));
                                    return;
                                }
                                planes.closeAtpSession(p.sessionId());
                                p.chose(DataPlaneKind.TCP);
                                p.ready();
                                countPeer(DataPlaneKind.TCP);
                                if (p.planes().contains(DataPlaneKind.ATP)) {
                                    LOG.info(
                                            "peer {} uses the TCP data plane: {}",
                                            p.describe(),
                                            reason);
                                } else {
                                    LOG.debug(
                                            "peer {} uses the TCP data plane: {}",
                                            p.describe(),
                                            reason);
                                }
                                done.complete(null);
                            });
            return done;
        }

        @Override
        public void onSessionClosed(ControlSession session) {
            ApproxPeer p = peers.remove(session.sessionId());
            if (p != null) {
                p.ended(p.endReason());
            }
        }

        @Override
        public CompletionStage<JobDecision> onJobAnnounce(
                ControlSession session, JobAnnouncement job) {
            ApproxPeer p = peerOf(session);
            if (job.pushed()) {
                return CompletableFuture.completedFuture(acceptPush(p, job));
            }
            IncomingTransfer t = p.incoming.get(job.jobId());
            if (t == null) {
                return CompletableFuture.completedFuture(
                        JobDecision.reject(
                                "no outstanding request for job "
                                        + Integer.toUnsignedString(job.jobId())));
            }
            return CompletableFuture.completedFuture(t.onAnnounce(job));
        }

        @Override
        public CompletionStage<byte[]> onDataRequest(
                ControlSession session, int jobId, byte[] request) {
            if (requestHandler == null) {
                throw new ControlException(
                        ErrorCode.UNSUPPORTED, "this endpoint serves no data requests");
            }
            ApproxPeer p = peerOf(session);
            if (closing || p.failure() != null) {
                throw new ControlException(ErrorCode.REQUEST_REJECTED, "this endpoint is closing");
            }
            int maxJobs = config.atp().maxJobsPerSession();
            if (p.outgoing.size() >= maxJobs) {
                throw new ControlException(
                        ErrorCode.OVERLOADED,
                        maxJobs
                                + " jobs are already being served on this"
                                + " session (AtpConfig.maxJobsPerSession)");
            }
            OutgoingTransfer r = new OutgoingTransfer(p, jobId, request);
            if (p.outgoing.putIfAbsent(jobId, r) != null) {
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "job "
                                + Integer.toUnsignedString(jobId)
                                + " is already being served on this session");
            }
            r.report().whenComplete((v, e) -> p.outgoing.remove(jobId, r));
            TransportException f = p.failure();
            if (f != null) {
                r.fail(f);
                return r.dataResponse();
            }
            try {
                serveExecutor.execute(() -> serve(r));
            } catch (RejectedExecutionException e) {
                ControlException ce =
                        new ControlException(
                                ErrorCode.OVERLOADED,
                                "too many data requests queued ("
                                        + config.serveThreads()
                                        + " serving threads, "
                                        + config.maxQueuedRequests()
                                        + " queued)");
                r.fail(
                        new TransportException(
                                TransportException.Reason.REJECTED, ce.getMessage(), ce));
                throw ce;
            }
            return r.dataResponse().exceptionally(e -> rethrowReplyFailure(p, e));
        }

        @Override
        public void onMsrUpdate(ControlSession session, MsrUpdate update) {
            OutgoingTransfer r = peerOf(session).outgoing.get(update.jobId());
            if (r == null) {
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "no job "
                                + Integer.toUnsignedString(update.jobId())
                                + " is being served on this session");
            }
            Map<Integer, Double> m;
            try {
                m = update.byGroupIndex();
            } catch (IllegalArgumentException e) {
                throw new ControlException(ErrorCode.REQUEST_REJECTED, e.getMessage());
            }
            r.applyMsr(m);
        }

        @Override
        public void onJobReport(ControlSession session, JobReport report) {
            OutgoingTransfer r = peerOf(session).outgoing.get(report.jobId());
            if (r == null) {
                throw new ControlException(
                        ErrorCode.REQUEST_REJECTED,
                        "no job "
                                + Integer.toUnsignedString(report.jobId())
                                + " is being served on this session");
            }
            r.onWireReport(report);
        }
    }
}
