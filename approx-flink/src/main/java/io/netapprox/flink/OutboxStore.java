package io.netapprox.flink;

import io.netapprox.core.transport.ExchangeRegistry;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TaskManager's outboxes: the epochs its senders encoded, waiting to be pulled (or pushed) by
 * their receivers, bounded by {@code approx.sendBuffer} - {@link #register} blocks the sender
 * (Flink backpressure) until pulls free space. Each waiting outbox holds a lease on its {@link
 * TaskManagerExchange}, so the exchange stays open after its sender finished; outboxes nobody
 * pulled for long (their receiver is gone) are dropped.
 */
final class OutboxStore {
    private static final Logger LOG = LoggerFactory.getLogger(OutboxStore.class);

    /** Outboxes nobody pulled for this long are dropped (their receiver is gone). */
    private static final long TTL_MIN_NANOS = TimeUnit.MINUTES.toNanos(10);

    /** An outbox and its hold on the exchange. */
    private record Waiting(EpochOutbox outbox, ExchangeRegistry.Lease<?> hold) {}

    private final long sendBufferBytes;
    private final long ttlNanos;
    private final Supplier<ExchangeRegistry.Lease<?>> hold;
    private final Map<OutboxKey, Waiting> outboxes = new ConcurrentHashMap<>();
    private final Object space = new Object();
    private long bytes; // guarded by space

    /**
     * @param hold a further lease on the exchange, taken for each registered outbox
     */
    OutboxStore(ApproxConfig config, Supplier<ExchangeRegistry.Lease<?>> hold) {
        this.sendBufferBytes = config.sendBufferBytes();
        this.ttlNanos = Math.max(TTL_MIN_NANOS, 10 * config.epochTimeout().toNanos());
        this.hold = hold;
    }

    /**
     * Makes {@code outbox} available to its receiver, waiting while the outboxes exceed {@code
     * approx.sendBuffer} (an outbox larger than the whole buffer waits until it is alone).
     *
     * @throws InterruptedException the task was cancelled while waiting
     */
    void register(EpochOutbox outbox) throws InterruptedException {
        synchronized (space) {
            dropExpired();
            while (bytes > 0 && bytes + outbox.bytes > sendBufferBytes) {
                space.wait(100);
                dropExpired();
            }
            bytes += outbox.bytes;
        }
        outboxes.put(outbox.key, new Waiting(outbox, hold.get()));
    }

    /** The outbox {@code key} if it is waiting, else null. */
    EpochOutbox get(OutboxKey key) {
        Waiting w = outboxes.get(key);
        return w == null ? null : w.outbox();
    }

    /**
     * Removes an outbox (pulled, taken locally, expired, or its sender failed): its space goes to
     * the next epoch, its hold on the exchange is released (a last hold closes the exchange in the
     * background: this may run on one of its transport's threads).
     */
    void remove(OutboxKey key) {
        Waiting w = outboxes.remove(key);
        if (w != null) {
            synchronized (space) {
                bytes -= w.outbox().bytes;
                space.notifyAll();
            }
            w.hold().closeInBackground();
        }
    }

    private void dropExpired() {
        long now = System.nanoTime();
        for (Iterator<Waiting> it = outboxes.values().iterator(); it.hasNext(); ) {
            EpochOutbox o = it.next().outbox();
            if (now - o.createdNanos > ttlNanos) {
                LOG.warn(
                        "NetApprox: dropping {}, not pulled for {} s",
                        o.key,
                        ttlNanos / 1_000_000_000L);
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
        EpochOutbox o = get(key);
        if (o != null) {
            remove(key);
        }
        return o;
    }

    /** Bytes of outboxes waiting (tests, metrics). */
    long bytes() {
        synchronized (space) {
            return bytes;
        }
    }
}
