package io.netapprox.core.transport;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * An exchange's connections to other processes' exchanges, one per remote (keyed by its control
 * address, or by its id), shared by every task of the process: a connection being set up or active
 * is handed to every caller; one that failed is evicted as soon as it fails, and one that ended
 * (the peer closed or died) is replaced, so the next caller connects anew.
 *
 * @param <K> what names a remote exchange
 */
public final class PeerCache<K> {
    private final Map<K, CompletableFuture<ApproxPeer>> peers = new ConcurrentHashMap<>();

    /**
     * The connection to {@code remote}: the cached one if it is being set up or active, else a new
     * one from {@code connect} (called at most once per call, never blocking: it returns the
     * connection's future).
     */
    public CompletableFuture<ApproxPeer> get(
            K remote, Function<? super K, CompletableFuture<ApproxPeer>> connect) {
        CompletableFuture<ApproxPeer> f =
                peers.compute(remote, (k, old) -> usable(old) ? old : connect.apply(k));
        f.whenComplete(
                (p, err) -> {
                    if (err != null) {
                        peers.remove(remote, f);
                    }
                });
        return f;
    }

    private static boolean usable(CompletableFuture<ApproxPeer> f) {
        return f != null && (!f.isDone() || (!f.isCompletedExceptionally() && f.join().isActive()));
    }

    /** Connections cached (being set up, active, or ended and not yet replaced). */
    public int size() {
        return peers.size();
    }

    /**
     * Gives up the connections still being set up (a connection completing after that is closed by
     * its transport) and forgets every entry; the transport's close ends the active ones.
     */
    public void close() {
        for (CompletableFuture<ApproxPeer> f : peers.values()) {
            f.cancel(false);
        }
        peers.clear();
    }
}
