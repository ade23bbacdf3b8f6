package io.netapprox.flink;

import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.ExchangeRegistry;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.PeerCache;
import io.netapprox.core.transport.PushMetrics;
import io.netapprox.core.transport.TransferListener;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NetApprox exchange of one TaskManager: one {@link ApproxTransport} (ATP engine + control
 * server), shared by every approximate sender and receiver running in the TaskManager's slots. Its
 * parts: the {@link OutboxStore} (epochs encoded by the TaskManager's senders, waiting for their
 * receivers), the {@link OutboxServer} (serves them when pulled, pushes tail epochs), the {@link
 * PushReceiver} (epochs pushed to this TaskManager's receivers), and the receivers' side kept here:
 * one connection per remote TaskManager ({@link PeerCache}) and its pull slots ({@link PullGate}).
 *
 * <p>Opened by the first operator that needs it ({@link #acquire}: a lease of approx-core's {@link
 * ExchangeRegistry}), closed when the last operator, the last waiting outbox and the last running
 * job let go of it. Keyed by TaskManager and by the engine-relevant settings (secret, addresses,
 * rate, mode, faults), so two jobs with different secrets never share an engine. A receiver on the
 * same TaskManager as the sender takes the outbox directly (no network: every message is delivered,
 * the stratum is a census); others send a DATA_REQUEST naming the {@link OutboxKey} to the sender's
 * control address and get the epoch as one ATP job, one ATP group per stratum.
 */
final class TaskManagerExchange implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TaskManagerExchange.class);

    private static final ExchangeRegistry<String, TaskManagerExchange> EXCHANGES =
            new ExchangeRegistry<>("NetApprox TaskManager exchange");

    /** How long the exchange with the larger engine id waits for its peer to connect. */
    static final long RENDEZVOUS_MS = 2000;

    private final String key;
    private final ApproxConfig config;
    private final String engineId = UUID.randomUUID().toString();
    private final String controlHost;
    private final OutboxStore outboxes;
    private final OutboxServer server;
    private final PushReceiver pushes;
    private final ApproxTransport transport;

    /** Peers by the remote exchange's engine id (one session per pair of TaskManagers). */
    private final PeerCache<String> peers = new PeerCache<>();

    private final Map<String, PullGate> gates = new ConcurrentHashMap<>();

    private TaskManagerExchange(String key, ApproxConfig config, String host, PushTimers timers) {
        this.key = key;
        this.config = config;
        this.controlHost = host;
        this.outboxes = new OutboxStore(config, this::retain);
        this.server = new OutboxServer(config, outboxes, this::retain);
        this.pushes = new PushReceiver(config, timers);
        this.transport =
                ApproxTransport.start(transportConfig(config, host, engineId), server, pushes);
        LOG.info(
                "NetApprox exchange {} started: control {}, dataPlane={}, ATP data port {} (0: no"
                        + " ATP engine)",
                engineId,
                transport.controlAddress(),
                config.transport().dataPlane().label(),
                transport.dataPort());
    }

    /**
     * A lease on the exchange of the TaskManager identified by {@code taskManagerId} for {@code
     * config}'s engine settings, opened on first use. The operator closes it when it closes.
     *
     * @param defaultHost the TaskManager's address, used when {@code approx.bindAddress} is unset
     */
    static ExchangeRegistry.Lease<TaskManagerExchange> acquire(
            ApproxConfig config, String taskManagerId, String defaultHost) {
        return acquire(config, taskManagerId, defaultHost, PushTimers.REAL);
    }

    /** {@link #acquire(ApproxConfig, String, String)} with the given timers (tests). */
    static ExchangeRegistry.Lease<TaskManagerExchange> acquire(
            ApproxConfig config, String taskManagerId, String defaultHost, PushTimers timers) {
        String host =
                numericHost(
                        config.transport().bindAddress() != null
                                ? config.transport().bindAddress()
                                : defaultHost);
        return EXCHANGES.acquire(
                taskManagerId + "|" + host + "|" + engineSettings(config),
                k -> new TaskManagerExchange(k, config, host, timers));
    }

    /** A further lease on this exchange, for an outbox waiting or a job running. */
    private ExchangeRegistry.Lease<?> retain() {
        return EXCHANGES.retain(key, this);
    }

    /** Closes the transport (the registry calls this when the last lease is released). */
    @Override
    public void close() {
        LOG.info("NetApprox exchange {} closing", engineId);
        peers.close();
        transport.close();
    }

    /** Bytes of outboxes waiting to be pulled in all exchanges of this JVM (tests). */
    static long outboxBytesInJvm() {
        long bytes = 0;
        for (TaskManagerExchange e : EXCHANGES.exchanges()) {
            bytes += e.outboxes.bytes();
        }
        return bytes;
    }

    /** Number of open exchanges in this JVM (tests). */
    static int liveExchanges() {
        return EXCHANGES.size();
    }

    String engineId() {
        return engineId;
    }

    String controlHost() {
        return controlHost;
    }

    int controlPort() {
        return transport.controlAddress().getPort();
    }

    /** The epochs this TaskManager's senders wait to send. */
    OutboxStore outboxes() {
        return outboxes;
    }

    /** Serves the outboxes to pulls, and pushes tail epochs. */
    OutboxServer server() {
        return server;
    }

    /** The epochs pushed to this TaskManager's receivers. */
    PushReceiver pushes() {
        return pushes;
    }

    /** This exchange's pushed-job counters, both directions (tests, metrics). */
    PushMetrics pushMetrics() {
        return transport.pushMetrics();
    }

    /** Control connections with a data-plane session, both directions (tests). */
    int peerCount() {
        return transport.peers().size();
    }

    // ---- peers and pulls (receiver side) --------------------------------------------------------

    /**
     * The peer for the exchange {@code remoteEngineId} (at {@code addr}): one control connection
     * and one ATP session per pair of TaskManagers, used for pulls in both directions. The exchange
     * with the smaller engine id connects; the other first waits up to {@link #RENDEZVOUS_MS} for
     * that connection and connects itself only if none comes (its peer may never need to pull from
     * it). Two sessions in opposite directions between the same two engines, both carrying data,
     * stalled transfers in the engine (see docs/flink.md, Gaps); with one session per pair they do
     * not.
     */
    CompletableFuture<ApproxPeer> peer(String remoteEngineId, InetSocketAddress addr) {
        ApproxPeer existing = activePeer(remoteEngineId);
        if (existing != null) {
            return CompletableFuture.completedFuture(existing);
        }
        return peers.get(
                remoteEngineId,
                id ->
                        engineId.compareTo(id) < 0
                                ? transport.connect(addr)
                                : awaitIncoming(
                                        id, addr, System.nanoTime() + RENDEZVOUS_MS * 1_000_000L));
    }

    /**
     * Pulls the epoch {@code key} from the exchange {@code remoteEngineId} over {@code peer}, once
     * a pull slot to that peer is free: at most {@code approx.concurrentPulls} pulls per peer fill
     * at once ({@link PullGate}), the others wait their turn (bounded by the peer's outboxes, i.e.
     * by its {@code approx.sendBuffer}). A pull gives its slot to the next one as soon as every
     * stratum has its target ({@code targets[g]} messages of group g delivered, counted here as
     * they pass to {@code listener}), not at its job's report.
     *
     * @param givenUp checked when the slot comes: true skips the pull (the epoch expired)
     * @return the transfer, once the pull started (null if given up or the peer refused it)
     */
    CompletableFuture<IncomingTransfer> pull(
            String remoteEngineId,
            ApproxPeer peer,
            OutboxKey key,
            int[] targets,
            TransferListener listener,
            BooleanSupplier givenUp) {
        CompletableFuture<IncomingTransfer> started = new CompletableFuture<>();
        gate(remoteEngineId)
                .submit(
                        () -> {
                            if (givenUp.getAsBoolean()) {
                                started.complete(null);
                                return PullGate.Pull.NONE;
                            }
                            TargetCount count = new TargetCount(targets);
                            IncomingTransfer t;
                            try {
                                t =
                                        peer.request(
                                                key.toBytes(),
                                                (tr, msg) -> {
                                                    count.delivered(msg.groupId());
                                                    listener.onMessage(tr, msg);
                                                });
                            } catch (RuntimeException e) {
                                started.completeExceptionally(e);
                                return PullGate.Pull.NONE;
                            }
                            started.complete(t);
                            return new PullGate.Pull(count.reached(), t.report());
                        });
        return started;
    }

    /** The pull gate of one peer (created on first use). */
    PullGate gate(String remoteEngineId) {
        return gates.computeIfAbsent(remoteEngineId, k -> new PullGate(config.concurrentPulls()));
    }

    private CompletableFuture<ApproxPeer> awaitIncoming(
            String remoteEngineId, InetSocketAddress addr, long deadlineNanos) {
        ApproxPeer p = activePeer(remoteEngineId);
        if (p != null) {
            return CompletableFuture.completedFuture(p);
        }
        if (System.nanoTime() >= deadlineNanos || !transport.isOpen()) {
            return transport.connect(addr);
        }
        return CompletableFuture.supplyAsync(
                        () -> null, CompletableFuture.delayedExecutor(20, TimeUnit.MILLISECONDS))
                .thenCompose(x -> awaitIncoming(remoteEngineId, addr, deadlineNanos));
    }

    /** An active peer (connected by either side) whose control endpoint id names that exchange. */
    private ApproxPeer activePeer(String remoteEngineId) {
        String endpoint = endpointId(remoteEngineId);
        for (ApproxPeer p : transport.peers()) {
            if (p.isActive() && endpoint.equals(p.peerEndpointId())) {
                return p;
            }
        }
        return null;
    }

    /** The control endpoint id an exchange announces in HELLO: its engine id. */
    private static String endpointId(String engineId) {
        return "netapprox-flink-" + engineId;
    }

    // ---- configuration --------------------------------------------------------------------------

    private static String numericHost(String host) {
        try {
            return InetAddress.getByName(host).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalStateException(
                    "NetApprox: cannot resolve "
                            + host
                            + " (set "
                            + Style.FLINK.key(TransportOptions.BIND_ADDRESS)
                            + " to a numeric address)",
                    e);
        }
    }

    private static String engineSettings(ApproxConfig c) {
        return String.join(
                "|",
                c.authSecret(),
                c.transport().canonical(),
                c.submit().name(),
                c.epochDeadline().toString(),
                String.valueOf(c.sendBufferBytes()),
                c.epochTimeout().toString(),
                String.valueOf(c.concurrentPulls()),
                c.pushWait().toString());
    }

    /**
     * The transport of the exchange: the job's transport options bound to {@code host} (the
     * configured bind address or the TaskManager's), the job's secret unless one is configured, and
     * control requests and transfer reports that wait out an epoch.
     */
    static ApproxTransportConfig transportConfig(ApproxConfig c, String host, String engineId) {
        Duration request = c.epochTimeout().plus(c.transport().connectTimeout());
        return c.transport()
                .toConfig(
                        new TransportOptions.Context()
                                .defaultHost(host)
                                .requestTimeout(request)
                                .reportTimeout(request)
                                .endpointId(endpointId(engineId))
                                .defaultSecret(c.authSecret().getBytes(StandardCharsets.UTF_8)));
    }
}
