package io.netapprox.kafka.relay;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpStats;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.TransportException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;
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
 */
public final class KafkaRelay implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(KafkaRelay.class);
    private static final AtomicInteger ids = new AtomicInteger();

    /** Beyond its own wait, how long a pull may take to be answered by the log reader. */
    private static final long PULL_SLACK_MS = 60_000;

    private final RelayConfig config;
    private final ApproxTransport transport;
    private final Map<Long, RelaySession> sessions = new ConcurrentHashMap<>();
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
        AtpConfig atp =
                config.atp().toBuilder()
                        .bindAddress(host.getHostAddress())
                        .bindPort(config.dataPort())
                        .build();
        ControlConfig control =
                ControlConfig.builder()
                        .bindAddress(host)
                        .port(config.listenPort())
                        .authSecret(config.secret())
                        .endpointId("netapprox-kafka-relay-" + config.brokerId())
                        .build();
        this.transport =
                ApproxTransport.start(
                        ApproxTransportConfig.builder()
                                .atp(atp)
                                .control(control)
                                .serveThreads(config.serveThreads())
                                .maxQueuedRequests(4096)
                                .build(),
                        this::serve);
        log.info(
                "Kafka relay for broker {} at {} serves {} (control {}, ATP data port {}, {})",
                config.brokerId(),
                address(),
                config.bootstrap(),
                transport.controlAddress(),
                transport.dataPort(),
                config.secret() != null ? "authenticated" : "NOT authenticated");
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

    /** The ATP endpoint's UDP port. */
    public int dataPort() {
        return transport.dataPort();
    }

    /** The ATP engine's counters (datagrams, drops, sessions, jobs). */
    public AtpStats engineStats() {
        return transport.endpoint().stats();
    }

    public RelayMetrics metrics() {
        return metrics;
    }

    public int sessionCount() {
        return sessions.size();
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
        try {
            if (req instanceof RelayProtocol.Open o) {
                open(t.peer(), o.spec());
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
            t.answerWithoutJob(RelayProtocol.failure(e));
        } catch (TransportException e) {
            // the consumer's connection ended while its pull waited (it closed or died)
            log.debug("{}: pull abandoned: {}", t.peer(), e.getMessage());
        }
    }

    private void open(ApproxPeer peer, StreamSpec spec) {
        long id = peer.sessionId();
        RelaySession s;
        RelaySession old;
        synchronized (lock) {
            if (closed) {
                throw new RelayException(RelayException.Reason.UNAVAILABLE, "relay closed");
            }
            old = sessions.get(id);
            if (old == null && sessions.size() >= config.maxSessions()) {
                throw new RelayException(
                        RelayException.Reason.UNAVAILABLE,
                        "relay at "
                                + address()
                                + " serves "
                                + config.maxSessions()
                                + " streams already");
            }
            s = new RelaySession(this, spec, "netapprox-relay-" + ids.incrementAndGet());
            sessions.put(id, s);
        }
        if (old != null) {
            old.close(); // the consumer re-opened its stream with another spec
        }
        metrics.sessionsOpened.increment();
        peer.closeFuture().whenComplete((v, e) -> s.close());
    }

    private void servePull(OutgoingTransfer t, RelayProtocol.Pull p) throws Exception {
        metrics.pulls.increment();
        RelaySession s = sessions.get(t.peer().sessionId());
        if (s == null || s.isClosed()) {
            throw new RelayException(
                    RelayException.Reason.UNAVAILABLE, "no stream is open on this connection");
        }
        Segment seg;
        try {
            PullHook hook = pullHook;
            hook.before(p);
            CompletableFuture<Segment> answer =
                    s.pull(p.partition(), p.from(), Duration.ofMillis(p.maxWaitMs()), p.seq());
            hook.registered(p);
            seg = answer.get(p.maxWaitMs() + PULL_SLACK_MS, TimeUnit.MILLISECONDS);
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
                    p.partition()
                            + ": no segment within "
                            + (p.maxWaitMs() + PULL_SLACK_MS)
                            + " ms");
        }
        if (seg.records().isEmpty()) {
            metrics.emptyAnswers.increment();
            t.answerWithoutJob(RelayProtocol.header(seg));
            return;
        }
        metrics.segmentsSent.increment();
        metrics.recordsSent.add(seg.records().size());
        t.report()
                .whenComplete(
                        (r, e) -> {
                            if (r != null) {
                                metrics.recordsDelivered.add(r.delivered());
                            }
                        });
        SegmentSender.send(t, seg, s.spec().seed());
    }

    void sessionClosed(RelaySession s) {
        sessions.values().remove(s);
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
