package io.netapprox.core.transport;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A process's shared exchanges (an {@link ApproxTransport}, or an integration's object around one),
 * one per key, handed out as reference-counted {@link Lease}s - the pattern of Flink's {@code
 * PartitionRequestClientFactory}. The key is the configuration: what makes two users' exchanges
 * interchangeable (a Kafka consumer's secret and transport options, a Flink TaskManager and its
 * job's engine settings, a Spark executor's shuffle manager).
 *
 * <ul>
 *   <li>The first {@link #acquire} of a key opens its exchange; later ones share it; the last
 *       lease's {@link Lease#close} closes it. Closing a lease twice is a no-op.
 *   <li>An open that fails is not kept: the caller gets its exception and the next acquire opens
 *       again. Concurrent acquires of one key open it once; other keys are not held up.
 *   <li>An exchange reopened while its predecessor of the same key is still closing opens only once
 *       that close has finished (a fixed port is free again; at most one exchange per key exists).
 * </ul>
 *
 * @param <K> the configuration key ({@code equals} and {@code hashCode} decide sharing)
 * @param <X> the exchange
 */
public final class ExchangeRegistry<K, X extends AutoCloseable> {
    private static final Logger LOG = LoggerFactory.getLogger(ExchangeRegistry.class);

    private final String name;
    private final Map<K, Entry<K, X>> entries = new HashMap<>(); // guarded by this
    private final Map<K, Entry<K, X>> closing = new HashMap<>(); // guarded by this
    private final AtomicLong opened = new AtomicLong();

    /**
     * @param name what the exchanges are, for log messages (e.g. "Kafka client transport")
     */
    public ExchangeRegistry(String name) {
        this.name = Objects.requireNonNull(name, "name");
    }

    /**
     * A lease on the exchange of {@code key}, opened with {@code open} if none is open. The caller
     * must close the lease; if {@code open} throws, no lease is taken and the exception propagates.
     */
    public Lease<X> acquire(K key, Function<? super K, ? extends X> open) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(open, "open");
        Entry<K, X> e;
        synchronized (this) {
            e = entries.get(key);
            if (e == null) {
                e = new Entry<>(key, closing.get(key));
                entries.put(key, e);
            }
            e.users++; // reserved: the entry stays while this thread opens or waits for it
        }
        X value;
        try {
            value = e.openOnce(open, opened);
        } catch (RuntimeException | Error failed) {
            release(e, null, false);
            throw failed;
        }
        return lease(e, value);
    }

    /**
     * Another lease on {@code exchange}, the open exchange of {@code key}: for an exchange that
     * keeps itself open while it has work of its own (an outbox waiting, a job running).
     *
     * @throws IllegalStateException when {@code exchange} is not open under {@code key} (every
     *     lease was released)
     */
    public synchronized Lease<X> retain(K key, X exchange) {
        Entry<K, X> e = entries.get(key);
        if (e == null || e.value != exchange || exchange == null) {
            throw new IllegalStateException(name + " " + key + " is closed");
        }
        e.users++;
        return lease(e, exchange);
    }

    private Lease<X> lease(Entry<K, X> e, X exchange) {
        return new Lease<>(name, exchange, inBackground -> release(e, exchange, inBackground));
    }

    /** Exchanges open now (opened and not closed). */
    public synchronized int size() {
        int n = 0;
        for (Entry<K, X> e : entries.values()) {
            if (e.value != null) {
                n++;
            }
        }
        return n;
    }

    /** The exchanges open now (a snapshot). */
    public synchronized List<X> exchanges() {
        List<X> out = new ArrayList<>();
        for (Entry<K, X> e : entries.values()) {
            if (e.value != null) {
                out.add(e.value);
            }
        }
        return out;
    }

    /** Leases not yet released, over every key. */
    public synchronized int users() {
        int n = 0;
        for (Entry<K, X> e : entries.values()) {
            n += e.users;
        }
        return n;
    }

    /** Exchanges this registry has opened since it was created (never decreases). */
    public long opened() {
        return opened.get();
    }

    /**
     * Drops one user of {@code e}; the last one closes {@code value} (null: nothing was opened).
     */
    private void release(Entry<K, X> e, X value, boolean inBackground) {
        synchronized (this) {
            if (--e.users > 0) {
                return;
            }
            entries.remove(e.key, e);
            if (e.value == null) {
                return; // its open failed: nothing to close
            }
            closing.put(e.key, e);
        }
        X x = value != null ? value : e.value;
        if (inBackground) {
            Thread t = new Thread(() -> close(e, x), "netapprox-exchange-close");
            t.setDaemon(true);
            t.start();
        } else {
            close(e, x);
        }
    }

    private void close(Entry<K, X> e, X x) {
        try {
            x.close();
        } catch (Exception failed) {
            LOG.warn("closing the {} of {} failed", name, e.key, failed);
        } finally {
            synchronized (this) {
                closing.remove(e.key, e);
            }
            e.closed.complete(null);
        }
    }

    /** One key's exchange while it has users. */
    private static final class Entry<K, X> {
        final K key;
        final Entry<K, X> predecessor; // the same key's exchange still closing, or null
        final CompletableFuture<Void> closed = new CompletableFuture<>();
        int users; // guarded by the registry
        volatile X value; // written under this entry's monitor; null until opened

        Entry(K key, Entry<K, X> predecessor) {
            this.key = key;
            this.predecessor = predecessor;
        }

        /** Opens the exchange unless an earlier user did (one opener at a time per key). */
        synchronized X openOnce(Function<? super K, ? extends X> open, AtomicLong opened) {
            X v = value;
            if (v == null) {
                if (predecessor != null) {
                    predecessor.closed.join(); // completes however its close ended
                }
                v = Objects.requireNonNull(open.apply(key), "the exchange opened is null");
                value = v;
                opened.incrementAndGet();
            }
            return v;
        }
    }

    /** One user's hold on a shared exchange. */
    public static final class Lease<X extends AutoCloseable> implements AutoCloseable {
        private final String name;
        private final X exchange;
        private final Consumer<Boolean> release;
        private final AtomicBoolean released = new AtomicBoolean();

        private Lease(String name, X exchange, Consumer<Boolean> release) {
            this.name = name;
            this.exchange = exchange;
            this.release = release;
        }

        /**
         * The shared exchange.
         *
         * @throws IllegalStateException after this lease was released
         */
        public X get() {
            if (released.get()) {
                throw new IllegalStateException("lease of the " + name + " released");
            }
            return exchange;
        }

        /** Releases this hold; the last one closes the exchange, on this thread. Idempotent. */
        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                release.accept(false);
            }
        }

        /**
         * {@link #close} for a caller on one of the exchange's own threads (a serving thread, an
         * event loop), which must not wait for itself to stop: the last hold closes the exchange on
         * a new thread. Idempotent.
         */
        public void closeInBackground() {
            if (released.compareAndSet(false, true)) {
                release.accept(true);
            }
        }
    }
}
