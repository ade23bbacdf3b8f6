package io.netapprox.kafka.relay;

import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ApproxTransport;
import io.netapprox.core.transport.IncomingTransfer;
import io.netapprox.core.transport.TransportException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.common.TopicPartition;

/**
 * A consumer's stream through one relay over NetApprox's transport: one connection ({@link
 * ApproxPeer}: control plane, authenticated when the relay asks, plus an ATP session), opened with
 * the stream's sampling spec (OPEN). Each pull is a DATA_REQUEST; its DATA_RESPONSE is the segment
 * header and its records arrive as one ATP job ({@link SegmentReceiver}). Every failure - the relay
 * unreachable, refusing the secret, dying mid-segment, answering garbage - fails the pull with a
 * {@link RelayException}; a segment whose records did not all arrive as reported is never returned.
 */
final class RemoteStream implements RelayStream {
    private final String address;
    private final CompletableFuture<ApproxPeer> connecting;
    private final CompletableFuture<ApproxPeer> opened;
    private volatile boolean failed;

    /**
     * Numbers PULLs and RELEASEs in the order the consumer makes them (not the order they are sent:
     * a pull made before the stream is open is sent from a callback), so the relay can tell a
     * request that reached it late from a newer one.
     */
    private final AtomicLong requests = new AtomicLong();

    RemoteStream(
            ApproxTransport transport,
            String address,
            InetSocketAddress where,
            StreamSpec spec,
            DelegatedToken token) {
        this.address = address;
        byte[] open = RelayProtocol.encode(new RelayProtocol.Open(spec, token));
        this.connecting = transport.connect(where);
        this.opened =
                connecting.thenCompose(
                        peer ->
                                peer.request(open, (t, m) -> m.release())
                                        .response()
                                        .thenApply(
                                                answer -> {
                                                    RelayProtocol.checkOk(answer);
                                                    return peer;
                                                }));
        opened.whenComplete(
                (p, e) -> {
                    if (e != null) {
                        failed = true;
                    }
                });
    }

    @Override
    public CompletableFuture<Segment> pull(TopicPartition partition, long from, Duration maxWait) {
        CompletableFuture<Segment> out = new CompletableFuture<>();
        byte[] request =
                RelayProtocol.encode(
                        new RelayProtocol.Pull(
                                partition,
                                from,
                                (int) Math.min(maxWait.toMillis(), 600_000),
                                requests.incrementAndGet()));
        opened.whenComplete(
                (peer, err) -> {
                    if (err != null) {
                        out.completeExceptionally(failure(err));
                        return;
                    }
                    if (out.isDone()) {
                        return; // given up before the stream was open
                    }
                    SegmentReceiver rx = new SegmentReceiver(partition, from);
                    IncomingTransfer t = peer.request(request, rx);
                    out.whenComplete(
                            (s, e) -> {
                                if (out.isCancelled()) {
                                    t.report().cancel(false); // later records are released unseen
                                }
                            });
                    t.response()
                            .thenCombine(t.report(), rx::assemble)
                            .whenComplete(
                                    (seg, e) -> {
                                        if (out.isDone()) {
                                            // given up (cancelled) by the consumer: its answer
                                            // says nothing about the stream
                                            return;
                                        }
                                        if (e != null) {
                                            out.completeExceptionally(failure(e));
                                        } else {
                                            out.complete(seg);
                                        }
                                    });
                });
        return out;
    }

    /** The relay's answer as a {@link RelayException} naming the relay. */
    private RelayException failure(Throwable e) {
        Throwable c = e;
        while (c instanceof CompletionException && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof CancellationException) {
            // a pull the consumer gave up; the stream is fine (marking it failed would make the
            // consumer replace it and lose the other partitions' pulls in flight on it)
            return new RelayException(
                    RelayException.Reason.SUPERSEDED, "relay at " + address + ": pull given up");
        }
        if (c instanceof RelayException re) {
            return new RelayException(
                    re.reason(), "relay at " + address + ": " + re.getMessage(), re.leaderId(), re);
        }
        if (c instanceof TransportException te) {
            failed = true;
            return new RelayException(
                    RelayException.Reason.UNAVAILABLE,
                    "relay at " + address + " unreachable or gone: " + te.getMessage(),
                    -1,
                    te);
        }
        if (c instanceof IllegalArgumentException) {
            return new RelayException(
                    RelayException.Reason.READ_FAILED,
                    "relay at " + address + ": " + c.getMessage(),
                    -1,
                    c);
        }
        failed = true;
        return new RelayException(
                RelayException.Reason.UNAVAILABLE, "relay at " + address + ": " + c, -1, c);
    }

    @Override
    public void release(Collection<TopicPartition> partitions) {
        byte[] request =
                RelayProtocol.encode(
                        new RelayProtocol.Release(
                                List.copyOf(partitions), requests.incrementAndGet()));
        opened.thenAccept(
                peer -> {
                    if (peer.isActive()) {
                        peer.request(request, (t, m) -> m.release()); // answer not needed
                    }
                });
    }

    @Override
    public boolean isClosed() {
        if (failed) {
            return true;
        }
        ApproxPeer p = opened.getNow(null);
        return p != null && !p.isActive();
    }

    @Override
    public void close() {
        failed = true;
        connecting.cancel(false); // a connection still being set up is closed when it completes
        connecting.thenAccept(ApproxPeer::close);
    }
}
