package io.netapprox.flink;

import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.job.Target;
import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.DataRequestHandler;
import io.netapprox.core.transport.ExchangeRegistry;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.SendScheduler;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sending side of a TaskManager's exchange: serves its {@link OutboxStore}'s epochs to their
 * receivers, each as one ATP job with one group per stratum - when a receiver pulls it (a
 * DATA_REQUEST naming the {@link OutboxKey}) or when the sender pushes the tail epoch to a receiver
 * whose session it knows from an earlier pull ({@link #push}). An outbox is sent once (claimed by
 * the first transfer), dropped from the store once its messages are in the engine, and each job
 * holds a lease on the exchange until its report.
 */
final class OutboxServer implements DataRequestHandler {
    private static final Logger LOG = LoggerFactory.getLogger(OutboxServer.class);

    private final ApproxConfig config;
    private final OutboxStore outboxes;
    private final Supplier<ExchangeRegistry.Lease<?>> hold;

    /** Receivers (exchange id, receiver subtask) that pulled from this exchange, by their peer. */
    private final Map<Long, ApproxPeer> receiverPeers = new ConcurrentHashMap<>();

    /** Receivers remembered at most (a job has a few; stale entries are replaced). */
    private static final int MAX_RECEIVER_PEERS = 4096;

    /**
     * @param hold a further lease on the exchange, taken for each job until its report
     */
    OutboxServer(
            ApproxConfig config, OutboxStore outboxes, Supplier<ExchangeRegistry.Lease<?>> hold) {
        this.config = config;
        this.outboxes = outboxes;
        this.hold = hold;
    }

    /**
     * Serves one DATA_REQUEST (a serving thread): the outbox as one ATP job, one group per stratum
     * (N_g messages, MSR_g). The engine stops each group at its target {@code ceil(MSR_g N_g)}; the
     * outbox is dropped once its messages are submitted (or the transfer failed), the job's
     * reference on the exchange once the receiver's report is in.
     */
    @Override
    public void serve(OutgoingTransfer request) throws Exception {
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
        boolean claimed =
                request.pushed()
                        ? o.claimForPush()
                        : o.claimForPull(config.epochTimeout().toMillis());
        if (!claimed) {
            throw new ControlException(
                    ErrorCode.REQUEST_REJECTED, "NetApprox: " + key + " is already being sent");
        }
        // the job keeps the exchange open until its report, whatever the outbox
        ExchangeRegistry.Lease<?> jobHold = hold.get();
        if (!request.pushed()) {
            whenServed(request, key, o, jobHold);
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
                // for the receiver's pull, which may already be waiting for this answer
                o.pushDecided(false);
                jobHold.closeInBackground();
                throw refused;
            }
            o.pushDecided(true);
            whenServed(request, key, o, jobHold);
        } else {
            job = request.startJob(js);
        }
        // approx-core's send order: the groups interleaved by target, each in message order (a
        // random order of its records), until the receiver's completion notice ends the job
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
            outboxes.remove(key);
        }
    }

    private void whenServed(
            OutgoingTransfer request,
            OutboxKey key,
            EpochOutbox o,
            ExchangeRegistry.Lease<?> jobHold) {
        request.report()
                .whenComplete(
                        (r, err) -> {
                            outboxes.remove(key);
                            if (r != null && r.localReport() != null) {
                                o.onServed.accept(r.localReport());
                            }
                            jobHold.closeInBackground();
                        });
    }

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
        if (peer == null || !peer.isActive() || outboxes.get(key) == null) {
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
}
