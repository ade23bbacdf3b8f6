package io.netapprox.core.control;

import io.netapprox.core.control.Messages.Msg;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Request/response correlation of one control connection: the request ids, the bounded table of
 * requests waiting for their response, each with its timeout. A response or an ERROR completes its
 * request by id; a request with no answer within its timeout fails with a {@link
 * ControlTimeoutException}; the connection's end fails every request still pending. Thread-safe:
 * requests are added from any thread, answered on the event loop.
 */
final class PendingRequests {
    /** Schedules a request's timeout; the returned {@link Runnable} cancels it. */
    @FunctionalInterface
    interface Timers {
        Runnable schedule(Runnable onTimeout, long delayMillis);
    }

    /** What became of a response. */
    enum Outcome {
        /** It completed its request. */
        COMPLETED,
        /** No request with its id is pending (answered already, timed out or failed). */
        LATE,
        /** Its type does not answer its request's type: the request failed. */
        MISMATCH
    }

    private record Pending(
            MessageType requestType, CompletableFuture<Msg> future, Runnable cancelTimer) {}

    private final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong nextRequestId = new AtomicLong(1);
    private final int maxPending;
    private final Timers timers;
    private final ControlMetrics metrics;
    private final Supplier<String> peer;

    /**
     * @param maxPending the bound on pending requests ({@link ControlConfig#maxPendingRequests})
     * @param peer describes the peer in exception messages
     */
    PendingRequests(int maxPending, Timers timers, ControlMetrics metrics, Supplier<String> peer) {
        this.maxPending = maxPending;
        this.timers = timers;
        this.metrics = metrics;
        this.peer = peer;
    }

    /** A fresh request id (never 0: id 0 is a keepalive's or a connection-level ERROR's). */
    long nextId() {
        return nextRequestId.getAndIncrement();
    }

    /** The table holds {@code maxPending} requests: a new one must be refused. */
    boolean full() {
        return pending.size() >= maxPending;
    }

    int size() {
        return pending.size();
    }

    int maxPending() {
        return maxPending;
    }

    /**
     * Adds request {@code id} of {@code requestType}; its future fails with a {@link
     * ControlTimeoutException} unless answered within {@code timeoutMillis}.
     */
    CompletableFuture<Msg> add(long id, MessageType requestType, long timeoutMillis) {
        CompletableFuture<Msg> f = new CompletableFuture<>();
        Runnable cancel =
                timers.schedule(
                        () -> {
                            Pending p = pending.remove(id);
                            if (p != null) {
                                metrics.requestTimeouts.incrementAndGet();
                                p.future()
                                        .completeExceptionally(
                                                new ControlTimeoutException(
                                                        requestType
                                                                + " request "
                                                                + id
                                                                + " to "
                                                                + peer.get()
                                                                + " got no response within "
                                                                + timeoutMillis
                                                                + " ms"));
                            }
                        },
                        timeoutMillis);
        pending.put(id, new Pending(requestType, f, cancel));
        return f;
    }

    /**
     * Fails request {@code id} with {@code cause} if it is still pending; returns whether it was.
     */
    boolean fail(long id, Throwable cause) {
        Pending p = pending.remove(id);
        if (p == null) {
            return false;
        }
        p.cancelTimer().run();
        p.future().completeExceptionally(cause);
        return true;
    }

    /**
     * Completes request {@code id} with {@code response} of {@code responseType}. A response that
     * does not answer the request's type fails the request (the caller treats the frame as
     * unexpected); one for no pending request is counted late.
     */
    Outcome complete(long id, MessageType responseType, Msg response) {
        Pending p = pending.remove(id);
        if (p == null) {
            metrics.lateResponses.incrementAndGet();
            return Outcome.LATE;
        }
        p.cancelTimer().run();
        if (!responseMatches(p.requestType(), responseType)) {
            p.future()
                    .completeExceptionally(
                            new ControlException(
                                    ErrorCode.UNEXPECTED_MESSAGE,
                                    responseType + " is not a response to " + p.requestType()));
            return Outcome.MISMATCH;
        }
        p.future().complete(response);
        return Outcome.COMPLETED;
    }

    /** Fails every pending request with {@code cause} (the connection ended). */
    void failAll(Throwable cause) {
        for (Long id : pending.keySet()) {
            fail(id, cause);
        }
    }

    /** Whether a response of type {@code response} answers a request of type {@code request}. */
    static boolean responseMatches(MessageType request, MessageType response) {
        return switch (request) {
            case JOB_ANNOUNCE ->
                    response == MessageType.JOB_ACCEPT || response == MessageType.JOB_REJECT;
            case DATA_REQUEST -> response == MessageType.DATA_RESPONSE;
            case MSR_UPDATE, JOB_REPORT, DATA_PLANE_SELECT -> response == MessageType.ACK;
            case PING -> response == MessageType.PONG;
            default -> false;
        };
    }
}
