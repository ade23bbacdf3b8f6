package io.netapprox.flink;

import io.netapprox.core.control.ControlException;
import io.netapprox.core.control.ErrorCode;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.PushHandler;
import io.netapprox.core.transport.TransferListener;
import io.netapprox.core.transport.TransportOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiving side of pushed epochs in a TaskManager's exchange: a sender pushes its tail epoch
 * ({@link OutboxServer#push}) before the receiver's manifest comes; the push waits here until the
 * receiver claims it ({@link #claimPush}), until its deadline, or the receiver gives up waiting and
 * pulls. A push this TaskManager's transport refused (its push budget) is remembered, so its
 * receiver pulls at once. The transport's {@link PushHandler}.
 */
final class PushReceiver implements PushHandler {
    private static final Logger LOG = LoggerFactory.getLogger(PushReceiver.class);

    /** Pushed epochs a receiver waits for at most (one per sender and receiver and epoch). */
    private static final int MAX_PUSH_SLOTS = (int) TransportOptions.MAX_PUSHED_JOBS.max();

    private final ApproxConfig config;
    private final PushTimers timers;
    private final Map<OutboxKey, PushSlot> pushSlots = new ConcurrentHashMap<>();
    private final AtomicLong pushesExpired = new AtomicLong();

    PushReceiver(ApproxConfig config, PushTimers timers) {
        this.config = config;
        this.timers = timers;
    }

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

    /** A peer pushes an epoch to this exchange (control event loop). */
    @Override
    public TransferListener onPush(IncomingTransfer t) {
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
    @Override
    public void onRefused(byte[] descriptor, String reason) {
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
}
