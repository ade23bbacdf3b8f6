package io.netapprox.kafka.relay;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpStats;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.DataPlaneMetrics;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.TransportException;
import io.netapprox.core.transport.TransportOptions;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthenticationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The relay beside a broker: serves approximate consumers the partitions its broker leads, read
 * over loopback and sampled per window and stratum. Embeddable ({@link #start}); {@code RelayMain}
 * runs it as a process.
 *
 * <p>Consumers reach it through NetApprox's transport ({@link ApproxTransport}: a control server at
 * {@link #address()}, authenticated by the shared secret when one is configured, and an ATP
 * endpoint). Each consumer connection carries one stream ({@link RelaySession}): the consumer's
 * OPEN request says how to sample, each PULL is a DATA_REQUEST answered by the segment header
 * (coverage mark, exact per-cell counts) in the DATA_RESPONSE and the segment's records as one ATP
 * job ({@link SegmentSender}); see {@link RelayProtocol}. A connection that ends ends its stream.
 *
 * <p>Exposed to every consumer host, it trusts a holder of the shared secret with asking, not with
 * data (docs/security.md section 6): with {@link RelayConfig.Authorization#KAFKA} a stream's log
 * readers log in with the consumer's delegation token, so the broker authorizes each of its reads
 * as the consumer's own principal; a client (the IP address of its connections) holds at most
 * {@link RelayConfig#maxPullsPerClient()} serving threads and {@link
 * RelayConfig#maxStreamsPerClient()} streams; a pull waits at most {@link
 * RelayConfig#maxPullWaitMs()}.
 */
public final class KafkaRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KafkaRelay.class);
    private static final AtomicInteger ids = new AtomicInteger();

    /** Beyond its own wait, how long a pull may take to be answered by the log reader. */
    private static final long PULL_SLACK_MS = 60_000;

    /** How long a delegation token the broker does not accept yet is tried again at OPEN. */
    static final long TOKEN_CHECK_MS = 15_000;

    private final RelayConfig config;
    private final ApproxTransport transport;
    private final Map<Long, RelaySession> sessions = new ConcurrentHashMap<>();
    private final Map<RelaySession, String> owners = new ConcurrentHashMap<>();
    private final Map<String, ClientLoad> clients = new HashMap<>();
    private volatile Function<ApproxPeer, String> clientIdentity = KafkaRelay::addressOf;
    private final RelayMetrics metrics = new RelayMetrics();
    private final Object lock = new Object();
    private boolean closed;
    private volatile PullHook pullHook = PullHook.NONE;

    /**
     * Test seam: runs on the serving thread around a PULL's or RELEASE's hand-over to its session,
     * so a test can force the order in which concurrently served requests reach the session; and on
     * a log reader's thread between its poll and the use of what it fetched, so a test can widen
     * that window (a slow poll).
     */
    interface PullHook {
        PullHook NONE = new PullHook() {};

        /** Before the request reaches its session. */
        default void before(RelayProtocol.Request request) throws InterruptedException {}

        /** After the session took (or refused) the request. */
        default void registered(RelayProtocol.Request request) {}

        /** A log reader's poll of these partitions returned; its results are applied next. */
        default void polled(Set<TopicPartition> fetched) throws InterruptedException {}
    }

    void pullHook(PullHook hook) {
        this.pullHook = hook;
    }

    /**
     * Test seam: which client a connection belongs to (default {@link #addressOf}: its IP address),
     * so a test on one host can play several clients.
     */
    void clientIdentity(Function<ApproxPeer, String> identity) {
        this.clientIdentity = identity;
    }

    PullHook pullHook() {
        return pullHook;
    }

    private KafkaRelay(RelayConfig config) {
        this.config = config;
        InetAddress host;
        try {
            host = InetAddress.getByName(config.listenHost());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(
                    "relay listen host " + config.listenHost() + " does not resolve", e);
        }
        // the transport options (approx-core's one translation), then what the relay's own
        // settings say: where it listens, its secret, data plane, send policy and threads
        ApproxTransportConfig base =
                config.transport()
                        .toConfig(
                                new TransportOptions.Context()
                                        .defaultHost(host.getHostAddress())
                                        .endpointId("netapprox-kafka-relay-" + config.brokerId())
                                        .defaultSecret(config.secret()));
        AtpConfig atp =
                (config.atp() != null ? config.atp() : base.atp())
                        .toBuilder()
                                .bindAddress(host.getHostAddress())
                                .bindPort(config.dataPort())
                                .build();
        ControlConfig control = base.control().toBuilder().port(config.listenPort()).build();
        this.transport =
                ApproxTransport.start(
                        base.toBuilder()
                                .atp(atp)
                                .maxPeers(atp.maxSessions())
                                .control(control)
                                .dataPlane(config.dataPlane())
                                .tcpSendPolicy(config.tcpSendPolicy())
                                .serveThreads(config.serveThreads())
                                .maxQueuedRequests(4096)
                                .build(),
                        this::serve);
        log.info(
                "Kafka relay for broker {} at {} serves {} (control {}, dataPlane={}, ATP data"
                        + " port {}, {}, authorization {})",
                config.brokerId(),
                address(),
                config.bootstrap(),
                transport.controlAddress(),
                config.dataPlane().label(),
                transport.dataPort(),
                config.secret() != null ? "authenticated" : "NOT authenticated",
                config.authorization());
        if (config.authorization() == RelayConfig.Authorization.NONE) {
            log.warn(
                    "relay at {} reads as its own Kafka identity: every client with the secret"
                            + " reads what that identity may read (authorization=none; only for a"
                            + " cluster without ACLs)",
                    address());
        }
    }

    /** Starts the relay: binds its control server and ATP endpoint. */
    public static KafkaRelay start(RelayConfig config) {
        return new KafkaRelay(config);
    }

    public RelayConfig config() {
        return config;
    }

    /** {@code host:port} consumers reach the relay at ({@code approx.relay.address.<id>}). */
    public String address() {
        InetSocketAddress a = transport.controlAddress();
        String h =
                config.listenHost().contains(":")
                        ? "[" + config.listenHost() + "]"
                        : config.listenHost();
        return h + ":" + a.getPort();
    }

    /** The ATP endpoint's UDP port, or 0 when the relay runs no ATP engine. */
    public int dataPort() {
        return transport.dataPort();
    }

    /**
     * The ATP engine's counters (datagrams, drops, sessions, jobs), or null when the relay runs no
     * ATP engine ({@code --data-plane tcp}, or {@code auto} where the native library cannot load).
     */
    /** The configuration the relay's transport runs with (tests). */
    ApproxTransportConfig transportConfig() {
        return transport.config();
    }

    public AtpStats engineStats() {
        return transport.endpoint() != null ? transport.endpoint().stats() : null;
    }

    /** The data planes' counters: peers per plane, fallbacks, TCP traffic. */
    public DataPlaneMetrics dataPlaneMetrics() {
        return transport.dataPlaneMetrics();
    }

    public RelayMetrics metrics() {
        return metrics;
    }

    public int sessionCount() {
        return sessions.size();
    }

    /** Partitions the open streams keep any state for (their memory is bounded by it). */
    int trackedPartitions() {
        return sessions.values().stream().mapToInt(RelaySession::trackedPartitions).sum();
    }

    /** Serves one DATA_REQUEST (a serving thread of the transport). */
    private void serve(OutgoingTransfer t) throws Exception {
        RelayProtocol.Request req;
        try {
            req = RelayProtocol.decodeRequest(t.payload());
        } catch (IllegalArgumentException e) {
            metrics.badRequests.increment();
            t.answerWithoutJob(
                    RelayProtocol.failure(
                            new RelayException(
                                    RelayException.Reason.READ_FAILED,
                                    "bad request: " + e.getMessage())));
            return;
        }
        String client = clientIdentity.apply(t.peer());
        // a RELEASE only drops state, at once: never refused, so the stream's view stays right
        boolean limited = !(req instanceof RelayProtocol.Release);
        if (limited && !acquireRequest(client)) {
            metrics.throttled.increment();
            t.answerWithoutJob(
                    RelayProtocol.failure(
                            new RelayException(
                                    RelayException.Reason.THROTTLED,
                                    "client "
                                            + client
                                            + " has "
                                            + config.maxPullsPerClient()
                                            + " requests on this relay's serving threads already"
                                            + " (maxPullsPerClient); retry later")));
            return;
        }
        // A request's slot is given back before its answer goes out: a client that sends its next
        // request as soon as it has the answer must not find this one still counted (THROTTLED).
        boolean[] holding = {limited};
        Runnable giveBack =
                () -> {
                    if (holding[0]) {
                        holding[0] = false;
                        releaseRequest(client);
                    }
                };
        try {
            if (req instanceof RelayProtocol.Open o) {
                open(t.peer(), o, client);
                giveBack.run();
                t.answerWithoutJob(RelayProtocol.ok());
            } else if (req instanceof RelayProtocol.Release r) {
                PullHook hook = pullHook;
                hook.before(r);
                RelaySession s = sessions.get(t.peer().sessionId());
                if (s != null) {
                    s.release(r.partitions(), r.seq());
                }
                hook.registered(r);
                t.answerWithoutJob(RelayProtocol.ok());
            } else {
                servePull(t, (RelayProtocol.Pull) req);
            }
        } catch (RelayException e) {
            metrics.failedPulls.increment();
            if (e.reason() == RelayException.Reason.NOT_AUTHORIZED) {
                metrics.notAuthorized.increment();
            } else if (e.reason() == RelayException.Reason.UNKNOWN_TOPIC) {
                metrics.unknownTopics.increment();
            }
            giveBack.run();
            t.answerWithoutJob(RelayProtocol.failure(e));
        } catch (TransportException e) {
            // the consumer's connection ended while its pull waited (it closed or died)
            log.debug("{}: pull abandoned: {}", t.peer(), e.getMessage());
        } finally {
            giveBack.run();
        }
    }

    private void open(ApproxPeer peer, RelayProtocol.Open o, String client) {
        StreamSpec spec = o.spec();
        DelegatedToken token = o.token();
        if (config.authorization() == RelayConfig.Authorization.KAFKA) {
            if (token == null) {
                throw new RelayException(
                        RelayException.Reason.NOT_AUTHORIZED,
                        "relay at "
                                + address()
                                + " reads each consumer's partitions as the consumer's own Kafka"
                                + " principal: the consumer must delegate its identity"
                                + " (approx.relay.delegation=token)");
            }
            verifyToken(token);
        }
        long id = peer.sessionId();
        RelaySession s;
        RelaySession old;
        synchronized (lock) {
            if (closed) {
                throw new RelayException(RelayException.Reason.UNAVAILABLE, "relay closed");
            }
            old = sessions.get(id);
            if (old == null && sessions.size() >= config.maxSessions()) {
                metrics.streamsRefused.increment();
                throw new RelayException(
                        RelayException.Reason.UNAVAILABLE,
                        "relay at "
                                + address()
                                + " serves "
                                + config.maxSessions()
                                + " streams already");
            }
            // a re-OPEN on the same connection replaces its stream: the old one is uncounted
            // when it has closed
            if (!reserveStream(client, old == null)) {
                metrics.streamsRefused.increment();
                throw new RelayException(
                        RelayException.Reason.UNAVAILABLE,
                        "client "
                                + client
                                + " has "
                                + config.maxStreamsPerClient()
                                + " streams open on relay "
                                + address()
                                + " already (maxStreamsPerClient)");
            }
            try {
                s =
                        new RelaySession(
                                this,
                                spec,
                                config.readerProperties(token),
                                "netapprox-relay-" + ids.incrementAndGet());
            } catch (RuntimeException e) {
                releaseStream(client);
                throw e;
            }
            sessions.put(id, s);
            owners.put(s, client);
        }
        if (old != null) {
            old.close(); // the consumer re-opened its stream with another spec
        }
        metrics.sessionsOpened.increment();
        peer.closeFuture().whenComplete((v, e) -> s.close());
    }

    /**
     * Checks that the broker accepts the consumer's delegation token, as the stream's readers will
     * use it. A token just created reaches the brokers' token caches asynchronously, so an
     * authentication failure is retried for {@link #TOKEN_CHECK_MS}; then the stream is refused.
     */
    private void verifyToken(DelegatedToken token) {
        Map<String, Object> p = new HashMap<>();
        config.readerProperties(token)
                .forEach(
                        (k, v) -> {
                            if (AdminClientConfig.configNames().contains(k)) {
                                p.put(k, v);
                            }
                        });
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, config.bootstrap());
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "netapprox-relay-token-check");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TOKEN_CHECK_MS);
        try (Admin admin = Admin.create(p)) {
            while (true) {
                try {
                    admin.describeCluster().clusterId().get(10, TimeUnit.SECONDS);
                    return;
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof AuthenticationException && System.nanoTime() < deadline) {
                        Thread.sleep(250);
                        continue;
                    }
                    throw new RelayException(
                            RelayException.Reason.NOT_AUTHORIZED,
                            "the broker refused the delegated token "
                                    + token.tokenId()
                                    + ": "
                                    + c.getMessage(),
                            -1,
                            null);
                } catch (TimeoutException e) {
                    throw new RelayException(
                            RelayException.Reason.UNAVAILABLE,
                            "the broker did not answer the check of the delegated token "
                                    + token.tokenId());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RelayException(RelayException.Reason.UNAVAILABLE, "relay closing");
        }
    }

    private void servePull(OutgoingTransfer t, RelayProtocol.Pull p) throws Exception {
        metrics.pulls.increment();
        RelaySession s = sessions.get(t.peer().sessionId());
        if (s == null || s.isClosed()) {
            throw new RelayException(
                    RelayException.Reason.UNAVAILABLE, "no stream is open on this connection");
        }
        String invalid = invalidTopicName(p.partition().topic());
        if (invalid != null) {
            // refused here: a Kafka consumer given such a name fails as a whole (the stream)
            throw new RelayException(
                    RelayException.Reason.UNKNOWN_TOPIC,
                    "invalid topic name \"" + p.partition().topic() + "\": " + invalid);
        }
        long wait = p.maxWaitMs();
        if (wait > config.maxPullWaitMs()) {
            wait = config.maxPullWaitMs(); // a serving thread is held at most this long
            metrics.clampedWaits.increment();
        }
        Segment seg;
        try {
            PullHook hook = pullHook;
            hook.before(p);
            CompletableFuture<Segment> answer =
                    s.pull(p.partition(), p.from(), Duration.ofMillis(wait), p.seq());
            hook.registered(p);
            seg = answer.get(wait + PULL_SLACK_MS, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RelayException re) {
                throw re;
            }
            throw new RelayException(
                    RelayException.Reason.READ_FAILED,
                    "read failed: " + e.getCause(),
                    -1,
                    e.getCause());
        } catch (TimeoutException e) {
            throw new RelayException(
                    RelayException.Reason.READ_FAILED,
                    p.partition() + ": no segment within " + (wait + PULL_SLACK_MS) + " ms");
        }
        if (seg.records().isEmpty()) {
            metrics.emptyAnswers.increment();
            t.answerWithoutJob(RelayProtocol.header(seg));
            return;
        }
        metrics.segmentsSent.increment();
        if (t.peer().dataPlane() == DataPlaneKind.TCP) {
            metrics.segmentsSentOverTcp.increment();
        }
        metrics.recordsSent.add(seg.records().size());
        t.report()
                .whenComplete(
                        (r, e) -> {
                            if (r != null) {
                                metrics.recordsDelivered.add(r.delivered());
                            }
                        });
        SegmentSender.send(t, seg, s.spec().seed(), config.segmentDeadlineMs());
    }

    /** Why Kafka would refuse {@code topic} as a name, or null when it is a valid one. */
    static String invalidTopicName(String topic) {
        if (topic.isEmpty() || topic.length() > 249) {
            return "a topic name has 1 to 249 characters";
        }
        if (topic.equals(".") || topic.equals("..")) {
            return "a topic name cannot be \".\" or \"..\"";
        }
        for (int i = 0; i < topic.length(); i++) {
            char c = topic.charAt(i);
            boolean legal =
                    (c >= 'a' && c <= 'z')
                            || (c >= 'A' && c <= 'Z')
                            || (c >= '0' && c <= '9')
                            || c == '.'
                            || c == '_'
                            || c == '-';
            if (!legal) {
                return "a topic name has only ASCII letters, digits, '.', '_' and '-'";
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- per-client limits

    /** The client a connection belongs to: the IP address it comes from. */
    static String addressOf(ApproxPeer peer) {
        SocketAddress a = peer.peerControlAddress();
        if (a instanceof InetSocketAddress i && i.getAddress() != null) {
            return i.getAddress().getHostAddress();
        }
        return String.valueOf(a);
    }

    /** Streams and requests one client holds (guarded by {@link #clients}). */
    private static final class ClientLoad {
        int streams;
        int requests;
    }

    /** What a client holds at the relay (a snapshot). */
    public record ClientUsage(int streams, int requests) {}

    /** Per client (IP address), its open streams and requests on serving threads now. */
    public Map<String, ClientUsage> clients() {
        synchronized (clients) {
            Map<String, ClientUsage> out = new HashMap<>();
            clients.forEach((k, c) -> out.put(k, new ClientUsage(c.streams, c.requests)));
            return out;
        }
    }

    private boolean acquireRequest(String client) {
        synchronized (clients) {
            ClientLoad c = clients.computeIfAbsent(client, k -> new ClientLoad());
            if (c.requests >= config.maxPullsPerClient()) {
                return false;
            }
            c.requests++;
            return true;
        }
    }

    private void releaseRequest(String client) {
        synchronized (clients) {
            ClientLoad c = clients.get(client);
            if (c != null) {
                c.requests--;
                forgetIfIdle(client, c);
            }
        }
    }

    /** Counts a new stream of the client, unless it is at its limit and {@code limited}. */
    private boolean reserveStream(String client, boolean limited) {
        synchronized (clients) {
            ClientLoad c = clients.computeIfAbsent(client, k -> new ClientLoad());
            if (limited && c.streams >= config.maxStreamsPerClient()) {
                forgetIfIdle(client, c);
                return false;
            }
            c.streams++;
            return true;
        }
    }

    private void releaseStream(String client) {
        synchronized (clients) {
            ClientLoad c = clients.get(client);
            if (c != null) {
                c.streams--;
                forgetIfIdle(client, c);
            }
        }
    }

    private void forgetIfIdle(String client, ClientLoad c) {
        if (c.streams <= 0 && c.requests <= 0) {
            clients.remove(client);
        }
    }

    void sessionClosed(RelaySession s) {
        String client;
        synchronized (lock) { // after open() registered its owner, if it is still opening
            sessions.values().remove(s);
            client = owners.remove(s);
        }
        if (client != null) {
            releaseStream(client);
        }
    }

    /** Closes every stream and connection and the transport. Idempotent. */
    @Override
    public void close() {
        List<RelaySession> open;
        synchronized (lock) {
            if (closed) {
                return;
            }
            closed = true;
            open = new ArrayList<>(sessions.values());
        }
        transport.close(); // consumers see the connection end; their streams close with it
        open.forEach(RelaySession::close);
        log.info("Kafka relay at {} closed", config.listenHost() + ":" + config.listenPort());
    }
}
