package io.netapprox.core.control;

import io.netapprox.core.job.JobReport;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One authenticated control connection with its data-plane session. Requests may be sent from any
 * thread; their futures complete on the connection's event-loop thread (do not block in callbacks),
 * exceptionally with {@link ControlException} (the peer answered ERROR or REJECTED the request),
 * {@link ControlTimeoutException} (no response in time; the connection stays open) or {@link
 * ControlClosedException} (the connection ended first).
 */
public interface ControlSession extends AutoCloseable {
    /** The data-plane session id (random, non-zero). */
    long sessionId();

    String localEndpointId();

    String peerEndpointId();

    /** The peer's data-plane (UDP) address. */
    InetSocketAddress peerDataAddress();

    /** The peer's control (TCP) address. */
    SocketAddress remoteAddress();

    /** The negotiated control protocol version. */
    int protocolVersion();

    /**
     * The data planes both ends can run (HELLO / HELLO_ACK): the choices for {@link
     * #selectDataPlane}. Never empty.
     */
    Set<DataPlaneKind> dataPlanes();

    /**
     * Client side, once: DATA_PLANE_SELECT, the plane this session's jobs run on (one of {@link
     * #dataPlanes()}) and why; completes when the server has taken it (its {@link
     * ControlHandler#onDataPlaneSelect} completed). Fails with {@link IllegalStateException} on the
     * server side or for a second call, {@link IllegalArgumentException} for a plane not agreed.
     */
    CompletableFuture<Void> selectDataPlane(DataPlaneKind plane, String reason);

    /**
     * Client side, once, when TCP is among {@link #dataPlanes()}: opens the session's TCP data
     * connection to the server's control address (over TLS when the control plane uses it) and
     * proves with the session's data-connection key that it belongs to this session (DATA_ATTACH,
     * DATA_ATTACH_ACK, DATA_ATTACH_PROOF; the key never travels). {@code install} then gets the
     * channel on its event loop to add its handlers at the end of the pipeline; the future
     * completes with the channel, which the caller owns from then on. Fails with {@link
     * ControlException} (AUTH_FAILED, SESSION_FAILED: refused by the server), a connect error or
     * {@link ControlClosedException}.
     */
    CompletableFuture<Channel> openDataConnection(Consumer<Channel> install);

    boolean isActive();

    /**
     * JOB_ANNOUNCE with the default request timeout. Completes with the peer's accept / reject
     * decision.
     */
    CompletableFuture<JobDecision> announceJob(JobAnnouncement job);

    CompletableFuture<JobDecision> announceJob(JobAnnouncement job, Duration timeout);

    /**
     * DATA_REQUEST: "send me data X as job J"; completes with the peer's integration-defined reply.
     */
    CompletableFuture<byte[]> requestData(int jobId, byte[] request);

    CompletableFuture<byte[]> requestData(int jobId, byte[] request, Duration timeout);

    /** MSR_UPDATE; completes when the peer's handler has taken it. */
    CompletableFuture<Void> updateMsr(MsrUpdate update);

    CompletableFuture<Void> updateMsr(MsrUpdate update, Duration timeout);

    /** JOB_REPORT; completes when the peer's handler has taken it. */
    CompletableFuture<Void> sendReport(JobReport report);

    CompletableFuture<Void> sendReport(JobReport report, Duration timeout);

    /** PING; completes with the round-trip time. */
    CompletableFuture<Duration> ping();

    /**
     * Completes (normally) when the connection has closed and every pending request has been
     * failed.
     */
    CompletableFuture<Void> closeFuture();

    /** Closes the connection (and its data-plane session); pending requests fail. Idempotent. */
    @Override
    void close();
}
