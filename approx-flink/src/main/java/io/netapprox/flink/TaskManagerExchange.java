package io.netapprox.flink;

import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.job.Target;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.ApproxTransportConfig;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.PushHandler;
import io.netapprox.core.transport.PushMetrics;
import io.netapprox.core.transport.SendScheduler;
import io.netapprox.core.transport.TransferListener;
import io.netapprox.core.transport.TransportOptions;
import io.netapprox.core.transport.TransportOptions.Style;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NetApprox exchange of one TaskManager: one {@link ApproxTransport} (ATP engine + control
 * server), shared by every approximate sender and receiver running in the TaskManager's slots, and
 * the TaskManager's outboxes (epochs encoded by its senders, waiting to be pulled by receivers).
 *
 * <p>Created by the first operator that needs it ({@link #acquire}), closed when the last operator
 * and the last outbox let go of it. Keyed by TaskManager and by the engine-relevant settings
 * (secret, addresses, rate, mode, faults), so two jobs with different secrets never share an
 * engine. A receiver on the same TaskManager as the sender takes the outbox directly (no network:
 * every message is delivered, the stratum is a census); others send a DATA_REQUEST naming the
 * {@link OutboxKey} to the sender's control address and get the epoch as one ATP job, one ATP group
 * per stratum.
 *
 * <p>Memory: outboxes are bounded by {@code approx.sendBuffer} per TaskManager; {@link #register}
 * blocks the sender (Flink backpressure) until pulls free space.
 */
final class TaskManagerExchange {
    private static final Logger LOG = LoggerFactory.getLogger(TaskManagerExchange.class);
    private static final Map<String, TaskManagerExchange> EXCHANGES = new HashMap<>();

    /** Outboxes nobody pulled for this long are dropped (their receiver is gone). */
    private static final long OUTBOX_TTL_MIN_NANOS = TimeUnit.MINUTES.toNanos(10);

    private final String mapKey;
    private final ApproxConfig config;
    private final String engineId = UUID.randomUUID().toString();
    private final ApproxTransport transport;
    private final String controlHost;
    private final Map<OutboxKey, EpochOutbox> outboxes = new ConcurrentHashMap<>();

    /** Peers by the remote exchange's engine id (one session per pair of TaskManagers). */
    private final Map<String, CompletableFuture<ApproxPeer>> peers = new ConcurrentHashMap<>();

    private final Object space = new Object();
    private final long outboxTtlNanos;
    private final PushTimers timers;
    private long outboxBytes; // guarded by space
    private int refs; // guarded by EXCHANGES

    private TaskManagerExchange(
            String mapKey, ApproxConfig config, String host, PushTimers timers) {
        this.mapKey = mapKey;
        this.config = config;
        this.timers = timers;
        this.controlHost = host;
        this.outboxTtlNanos = Math.max(OUTBOX_TTL_MIN_NANOS, 10 * config.epochTimeout().toNanos());
        this.transport =
                ApproxTransport.start(
                        transportConfig(config, host, engineId),
                        this::serve,
                        new PushHandler() {
                            @Override
                            public TransferListener onPush(IncomingTransfer t) {
                                return TaskManagerExchange.this.onPush(t);
                            }

                            @Override
                            public void onRefused(byte[] descriptor, String reason) {
                                onPushRefused(descriptor, reason);
                            }
                        });
        LOG.info(
                "NetApprox exchange {} started: control {}, dataPlane={}, ATP data port {} (0: no"
                        + " ATP engine)",
                engineId,
                transport.controlAddress(),
                config.transport().dataPlane().label(),
                transport.dataPort());
    }

    /**
     * The exchange of the TaskManager identified by {@code taskManagerId} for {@code config}'s
     * engine settings, created on first use. Every call must be matched by one {@link #release()}.
     *
     * @param defaultHost the TaskManager's address, used when {@code approx.bindAddress} is unset
     */
    static TaskManagerExchange acquire(
            ApproxConfig config, String taskManagerId, String defaultHost) {
        return acquire(config, taskManagerId, defaultHost, PushTimers.REAL);
    }

    /** {@link #acquire(ApproxConfig, String, String)} with the given timers (tests). */
    static TaskManagerExchange acquire(
            ApproxConfig config, String taskManagerId, String defaultHost, PushTimers timers) {
        String host =
                numericHost(
                        config.transport().bindAddress() != null
                                ? config.transport().bindAddress()
                                : defaultHost);
        String key = taskManagerId + "|" + host + "|" + engineSettings(config);
        synchronized (EXCHANGES) {
            TaskManagerExchange x = EXCHANGES.get(key);
            if (x == null) {
                x = new TaskManagerExchange(key, config, host, timers);
                EXCHANGES.put(key, x);
            }
            x.refs++;
            return x;
        }
    }

    /** Drops an operator's reference; the last one closes the transport (on this thread). */
    void release() {
        release(false);
    }

    /**
     * Drops one reference. The last one closes the transport; {@code async} when called on one of
     * the transport's own threads (an outbox removed when its report arrives), which must not wait
     * for themselves to stop.
     */
    private void release(boolean async) {
        boolean close;
        synchronized (EXCHANGES) {
            close = --refs == 0;
            if (close) {
                EXCHANGES.remove(mapKey);
            }
        }
        if (close) {
            if (async) {
                Thread t = new Thread(this::close, "netapprox-exchange-close");
                t.setDaemon(true);
                t.start();
            } else {
                close();
            }
        }
    }

    private void close() {
        LOG.info("NetApprox exchange {} closing", engineId);
        for (CompletableFuture<ApproxPeer> p : peers.values()) {
            p.cancel(false);
        }
        transport.close();
    }

    /** Bytes of outboxes waiting to be pulled in all exchanges of this JVM (tests). */
    static long outboxBytesInJvm() {
        List<TaskManagerExchange> all;
        synchronized (EXCHANGES) {
            all = new ArrayList<>(EXCHANGES.values());
        }
        long bytes = 0;
        for (TaskManagerExchange e : all) {
            bytes += e.outboxBytes();
        }
        return bytes;
    }

    /** Number of live exchanges in this JVM (tests). */
    static int liveExchanges() {
        synchronized (EXCHANGES) {
            return EXCHANGES.size();
        }
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

    // ---- outboxes (sender side)
    // -------------------------------------------------------------------

    /**
     * Makes {@code outbox} available to its receiver, waiting while the TaskManager's outboxes
     * exceed {@code approx.sendBuffer} (an outbox larger than the whole buffer waits until it is
     * alone).
     *
     * @throws InterruptedException the task was cancelled while waiting
     */
    void register(EpochOutbox outbox) throws InterruptedException {
        synchronized (space) {
            dropExpired();
            while (outboxBytes > 0 && outboxBytes + outbox.bytes > config.sendBufferBytes()) {
                space.wait(100);
                dropExpired();
            }
            outboxBytes += outbox.bytes;
        }
        synchronized (EXCHANGES) {
            refs++; // an outbox keeps the exchange open after its sender finished
        }
        outboxes.put(outbox.key, outbox);
    }

    /** Removes an outbox (pulled, taken locally, expired, or its sender failed). */
    private void remove(OutboxKey key) {
        EpochOutbox o = outboxes.remove(key);
        if (o != null) {
            synchronized (space) {
                outboxBytes -= o.bytes;
                space.notifyAll();
            }
            release(true);
        }
    }

    private void dropExpired() {
        long now = System.nanoTime();
        for (Iterator<EpochOutbox> it = outboxes.values().iterator(); it.hasNext(); ) {
            EpochOutbox o = it.next();
            if (now - o.createdNanos > outboxTtlNanos) {
                LOG.warn(
                        "NetApprox: dropping {}, not pulled for {} s",
                        o.key,
                        outboxTtlNanos / 1_000_000_000L);
                // remove() takes the monitor we may hold: it is reentrant
                remove(o.key);
            }
        }
    }

    /**
     * A failed or cancelled sender's outboxes will never be pulled by a live receiver; returns how
     * many were dropped.
     */
    int dropSender(long exchangeId, int sender, int attempt) {
        int dropped = 0;
        for (OutboxKey k : outboxes.keySet()) {
            if (k.exchangeId() == exchangeId && k.sender() == sender && k.attempt() == attempt) {
                remove(k);
                dropped++;
            }
        }
        return dropped;
    }

    /** Receiver on the same TaskManager: takes the outbox without the network, or null. */
    EpochOutbox takeLocal(OutboxKey key) {
        EpochOutbox o = outboxes.get(key);
        if (o != null) {
            remove(key);
        }
        return o;
    }

    /** Control connections with a data-plane session, both directions (tests). */
    int peerCount() {
        return transport.peers().size();
    }

    /** Bytes of outboxes waiting (tests, metrics). */
    long outboxBytes() {
        synchronized (space) {
            return outboxBytes;
        }
    }

    /**
     * Serves one DATA_REQUEST (a serving thread): the outbox as one ATP job, one group per stratum
     * (N_g messages, MSR_g). The engine stops each group at its target {@code ceil(MSR_g N_g)}; the
     * outbox is dropped once its messages are submitted (or the transfer failed), the job's
     * reference on the exchange once the receiver's report is in.
     */
    private void serve(OutgoingTransfer request) throws Exception {
        OutboxKey key;
        try {
            key = OutboxKey.fromBytes(request.payload());
        } catch (IllegalArgumentException e) {
            throw new ControlException(ErrorCode.REQUEST_REJECTED, e.getMessage());
        }
        EpochOutbox o = outboxes.get(key);
        if (o == null) {
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED, "NetApprox: no such epoch " + key);
        }
        if (!request.pushed()) {
            rememberReceiver(key, request.peer());
        }
        if (!o.claimed.compareAndSet(false, true)) {
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED, "NetApprox: " + key + " is already being sent");
        }
        synchronized (EXCHANGES) {
            refs++; // the job keeps the engine open until its report, whatever the outbox
        }
        if (!request.pushed()) {
            whenServed(request, key, o);
        }
        // submit=slack / all: every message, ATP stops each group at its target; slack adds the
        // epoch's deadline (the planned sample escalates as a group falls behind it, the rest goes
        // in the lowest class; docs/protocol.md section 11). submit=target: only the first
        // ceil(MSR_g N_g) messages (a random sample: the records were permuted), reliably (MSR 1):
        // the engine has no "end of submissions", so a group announced with N_g but sent partially
        // could give up losses it can never make good.
        boolean all = config.submit() != ApproxConfig.Submit.TARGET;
        JobSpec.Builder spec = JobSpec.builder();
        if (config.submit() == ApproxConfig.Submit.SLACK) {
            spec.deadline(config.epochDeadline());
        }
        for (int g = 0; g < o.messages.length; g++) {
            int n = o.messages[g].length;
            spec.addGroup(g, all ? n : Target.of(o.msr[g], n), all ? o.msr[g] : 1.0);
        }
        JobSpec js = spec.build();
        OutgoingJob job;
        if (request.pushed()) {
            try {
                job = request.startJob(js);
            } catch (RuntimeException refused) {
                // the receiver refused the push (or it failed before any data): the outbox stays
                // for the receiver's pull
                o.claimed.set(false);
                release(true);
                throw refused;
            }
            pushesStarted.incrementAndGet();
            whenServed(request, key, o);
        } else {
            job = request.startJob(js);
        }
        // approx-core's send order: the groups interleaved by target, each in message order (a
        // random
        // order of its records), until the receiver's completion notice ends the job
        try {
            new SendScheduler(js)
                    .sendAll(
                            job,
                            (g, i, out) -> out.writeBytes(o.messages[g][i]),
                            config.epochTimeout().toMillis(),
                            TimeUnit.MILLISECONDS);
        } finally {
            // every message the job needs is in the engine now (it retransmits from its own
            // bounded send buffer): the outbox's space goes to the next epoch without waiting
            // for the report
            remove(key);
        }
    }

    private void whenServed(OutgoingTransfer request, OutboxKey key, EpochOutbox o) {
        request.report()
                .whenComplete(
                        (r, err) -> {
                            remove(key);
                            if (r != null && r.localReport() != null) {
                                o.onServed.accept(r.localReport());
                            }
                            release(true);
                        });
    }

    // ---- pushing the tail epoch (sender side) ---------------------------------------------------

    /** Receivers (exchange id, receiver subtask) that pulled from this exchange, by their peer. */
    private final Map<Long, ApproxPeer> receiverPeers = new ConcurrentHashMap<>();

    /** Receivers remembered at most (a job has a few; stale entries are replaced). */
    private static final int MAX_RECEIVER_PEERS = 4096;

    private final AtomicLong pushesStarted = new AtomicLong();

    private static long receiverId(OutboxKey key) {
        return key.exchangeId() * 31 + key.receiver();
    }

    private void rememberReceiver(OutboxKey key, ApproxPeer peer) {
        if (receiverPeers.size() >= MAX_RECEIVER_PEERS) {
            receiverPeers.values().removeIf(p -> !p.isActive());
            if (receiverPeers.size() >= MAX_RECEIVER_PEERS) {
                return;
            }
        }
        receiverPeers.put(receiverId(key), peer);
    }

    /**
     * Pushes the registered outbox {@code key} to its receiver without waiting for a request, if
     * this exchange has a session with the receiver's TaskManager (learned from an earlier pull of
     * that receiver). The push is served like a pull ({@link #serve}); refused (the receiver's push
     * budget) or failed before it started, the outbox stays for a pull.
     *
     * @return true when a push was started (the manifest says so), false: the receiver pulls
     */
    boolean push(OutboxKey key) {
        ApproxPeer peer = receiverPeers.get(receiverId(key));
        if (peer == null || !peer.isActive() || !outboxes.containsKey(key)) {
            return false;
        }
        OutgoingTransfer t = peer.push(key.toBytes());
        t.jobStarted()
                .whenComplete(
                        (v, err) -> {
                            if (err != null) {
                                LOG.debug(
                                        "NetApprox: push of {} not taken: {}", key, err.toString());
                            }
                        });
        return !t.report().isCompletedExceptionally();
    }

    /** This exchange's pushed-job counters, both directions (tests, metrics). */
    PushMetrics pushMetrics() {
        return transport.pushMetrics();
    }

    /** Pushes this exchange started (accepted by their receivers; tests, metrics). */
    long pushesStarted() {
        return pushesStarted.get();
    }

    // ---- pushed epochs (receiver side) ---------------------------------------------------------

    /**
     * A pushed epoch that arrived, or a receiver waiting for one. The push usually comes before its
     * manifest (the manifest waits for Flink's network buffer), so until the receiver claims it its
     * messages wait here, bounded by the transport's push budget ({@code approx.maxPushedJobs},
     * {@code approx.maxPushedMessages}) and by the epoch's deadline: {@code approx.epochTimeout}
     * from the push's acceptance, whether or not its job has ended.
     */
    private static final class PushSlot {
        IncomingTransfer transfer; // guarded by this
        TransferListener consumer; // guarded by this
        final List<AtpMessage> early = new ArrayList<>();
        CompletableFuture<IncomingTransfer> waiting; // guarded by this

        /** The push waited for its manifest until its deadline; its messages were released. */
        boolean expired; // guarded by this

        /** This TaskManager's transport refused the push (push budget): the receiver pulls. */
        boolean refused; // guarded by this

        /** The receiver claimed the transfer (or is about to: its claim completed with it). */
        boolean claimed() {
            return consumer != null || (waiting != null && waiting.getNow(null) != null);
        }

        /** The receiver waited for the push and gave up: it pulls this epoch instead. */
        boolean gaveUp() {
            return waiting != null && waiting.isDone() && waiting.getNow(null) == null;
        }
    }

    /**
     * The manifest of a pushed epoch came after the push's deadline: its data had been dropped (the
     * sender's outbox is gone with the push, so a pull cannot get it either).
     */
    static final class PushExpiredException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        PushExpiredException(String message) {
            super(message, null, false, false);
        }
    }

    private final Map<OutboxKey, PushSlot> pushSlots = new ConcurrentHashMap<>();

    private final AtomicLong pushesExpired = new AtomicLong();

    /** Pushed epochs a receiver waits for at most (one per sender and receiver and epoch). */
    private static final int MAX_PUSH_SLOTS = (int) TransportOptions.MAX_PUSHED_JOBS.max();

    /** A peer pushes an epoch to this exchange (control event loop). */
    private TransferListener onPush(IncomingTransfer t) {
        OutboxKey key;
        try {
            key = OutboxKey.fromBytes(t.descriptor());
        } catch (IllegalArgumentException e) {
            throw new ControlException(ErrorCode.REQUEST_REJECTED, e.getMessage());
        }
        if (pushSlots.size() >= MAX_PUSH_SLOTS) {
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED,
                    "NetApprox: " + MAX_PUSH_SLOTS + " pushed epochs wait for their manifests");
        }
        PushSlot slot = pushSlots.computeIfAbsent(key, k -> new PushSlot());
        synchronized (slot) {
            if (slot.transfer != null || slot.gaveUp() || slot.expired) {
                return null; // a second push of the same epoch, or its receiver pulls it
            }
            slot.transfer = t;
            if (slot.waiting != null) {
                slot.waiting.complete(t);
            }
        }
        t.report().whenComplete((r, e) -> forgetIfClaimed(key, slot));
        // its manifest may queue behind Flink's network buffers (seconds under backpressure): it
        // has the epoch's deadline to come, counted from the push's acceptance as a pull's is from
        // its connection - not a fixed wait after the job ended
        timers.after(config.epochTimeout().toMillis(), () -> atDeadline(key, slot));
        return (tr, msg) -> {
            TransferListener c;
            synchronized (slot) {
                c = slot.consumer;
                if (c == null && !slot.expired) {
                    slot.early.add(msg);
                    return;
                }
            }
            if (c == null) {
                msg.release();
                return;
            }
            c.onMessage(tr, msg);
        };
    }

    /**
     * The receiver of {@code key} claims its pushed epoch: completes with the transfer once the
     * push is in (its messages so far, then the rest, go to {@code consumer}); with null if none
     * came within {@code approx.pushWait} - then the receiver pulls; exceptionally with {@link
     * PushExpiredException} if the push came but its deadline passed before this claim.
     */
    CompletableFuture<IncomingTransfer> claimPush(OutboxKey key, TransferListener consumer) {
        PushSlot slot = pushSlots.computeIfAbsent(key, k -> new PushSlot());
        CompletableFuture<IncomingTransfer> f = new CompletableFuture<>();
        synchronized (slot) {
            if (slot.expired) {
                return CompletableFuture.failedFuture(
                        new PushExpiredException(
                                "NetApprox: pushed "
                                        + key
                                        + " was accepted, but its manifest came after its deadline"
                                        + " ("
                                        + ApproxOptions.EPOCH_TIMEOUT.key()
                                        + " = "
                                        + config.epochTimeout().toMillis()
                                        + " ms from the push); its data was dropped"));
            }
            if (slot.waiting != null || slot.refused) {
                return CompletableFuture.completedFuture(null); // pull at once
            }
            slot.waiting = f;
            if (slot.transfer != null) {
                f.complete(slot.transfer);
            }
        }
        if (!f.isDone()) {
            timers.after(
                    config.pushWait().toMillis(),
                    () -> {
                        if (f.complete(null)) {
                            // kept until the epoch's deadline, so a push arriving after this is
                            // refused (the receiver pulls) rather than parked for nobody
                            timers.after(
                                    config.epochTimeout().toMillis(),
                                    () -> pushSlots.remove(key, slot));
                        }
                    });
        }
        return f.thenApply(
                t -> {
                    if (t == null) {
                        return null;
                    }
                    List<AtpMessage> early;
                    synchronized (slot) {
                        early = new ArrayList<>(slot.early);
                        slot.early.clear();
                        slot.consumer = consumer;
                    }
                    for (AtpMessage m : early) {
                        consumer.onMessage(t, m);
                    }
                    forgetIfClaimed(key, slot);
                    return t;
                });
    }

    /**
     * This TaskManager's transport refused a push (over {@code approx.maxPushedJobs} or {@code
     * approx.maxPushedMessages}; control event loop): its receiver pulls the epoch as soon as its
     * manifest comes (or at once, if it is already waiting) instead of waiting {@code
     * approx.pushWait} for a push that will not come.
     */
    private void onPushRefused(byte[] descriptor, String reason) {
        OutboxKey key;
        try {
            key = OutboxKey.fromBytes(descriptor);
        } catch (IllegalArgumentException e) {
            return; // not one of ours; refused anyway
        }
        if (pushSlots.size() >= MAX_PUSH_SLOTS) {
            return; // its receiver waits approx.pushWait, then pulls
        }
        PushSlot slot = pushSlots.computeIfAbsent(key, k -> new PushSlot());
        CompletableFuture<IncomingTransfer> waiting;
        synchronized (slot) {
            if (slot.transfer != null || slot.refused) {
                return; // a second push of an epoch that is already here
            }
            slot.refused = true;
            waiting = slot.waiting;
        }
        LOG.debug("NetApprox: refused pushed {} ({}); its receiver pulls it", key, reason);
        if (waiting != null) {
            waiting.complete(null);
        }
        timers.after(config.epochTimeout().toMillis(), () -> pushSlots.remove(key, slot));
    }

    /** A claimed push whose job ended needs its slot no more. */
    private void forgetIfClaimed(OutboxKey key, PushSlot slot) {
        synchronized (slot) {
            if (slot.consumer == null || !slot.transfer.report().isDone()) {
                return;
            }
        }
        pushSlots.remove(key, slot);
    }

    /**
     * The push's deadline: claimed, its slot goes (the receiver's own epoch deadline governs the
     * transfer); unclaimed, its messages are released, the transfer cancelled, and the slot stays
     * one more deadline so a late manifest learns at once that its data is gone.
     */
    private void atDeadline(OutboxKey key, PushSlot slot) {
        List<AtpMessage> early;
        IncomingTransfer t;
        int held;
        synchronized (slot) {
            if (slot.claimed()) {
                pushSlots.remove(key, slot);
                return;
            }
            slot.expired = true;
            early = new ArrayList<>(slot.early);
            held = early.size();
            slot.early.clear();
            t = slot.transfer;
        }
        pushesExpired.incrementAndGet();
        LOG.warn(
                "NetApprox: pushed {} waited {} ms ({}) for its manifest, which did not come;"
                        + " its {} messages are dropped and its epoch will be answered without them",
                key,
                config.epochTimeout().toMillis(),
                ApproxOptions.EPOCH_TIMEOUT.key(),
                held);
        if (t != null) {
            t.report().cancel(true);
        }
        early.forEach(AtpMessage::release);
        timers.after(config.epochTimeout().toMillis(), () -> pushSlots.remove(key, slot));
    }

    /** Pushes that waited for their manifest until their deadline and were dropped (tests). */
    long pushesExpired() {
        return pushesExpired.get();
    }

    // ---- peers (receiver side)
    // --------------------------------------------------------------------

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
        CompletableFuture<ApproxPeer> f =
                peers.compute(
                        remoteEngineId,
                        (id, old) -> {
                            if (old != null
                                    && (!old.isDone()
                                            || (!old.isCompletedExceptionally()
                                                    && old.join().isActive()))) {
                                return old;
                            }
                            return engineId.compareTo(id) < 0
                                    ? transport.connect(addr)
                                    : awaitIncoming(
                                            id,
                                            addr,
                                            System.nanoTime() + RENDEZVOUS_MS * 1_000_000L);
                        });
        f.whenComplete(
                (p, err) -> {
                    if (err != null) {
                        peers.remove(remoteEngineId, f);
                    }
                });
        return f;
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

    private final Map<String, PullGate> gates = new ConcurrentHashMap<>();

    /** How long the exchange with the larger engine id waits for its peer to connect. */
    static final long RENDEZVOUS_MS = 2000;

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

    // ---- configuration
    // ----------------------------------------------------------------------------

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
