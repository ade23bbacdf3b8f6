package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.Messages.AckMsg;
import io.netapprox.core.control.Messages.Msg;
import io.netapprox.core.control.Messages.PongMsg;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * The request/response correlation of a control connection ({@link PendingRequests}) on its own,
 * with timers the test fires by hand: timeouts, responses by id, ERRORs, the connection's end and
 * the bound on pending requests. The same over a real connection: ControlLifecycleTest,
 * ControlFloodTest.
 */
class PendingRequestsTest {
    /** Timers that fire when the test says so. */
    private static final class ManualTimers implements PendingRequests.Timers {
        final List<Runnable> tasks = new ArrayList<>();
        final List<Long> delays = new ArrayList<>();
        final List<Boolean> cancelled = new ArrayList<>();

        @Override
        public Runnable schedule(Runnable onTimeout, long delayMillis) {
            int i = tasks.size();
            tasks.add(onTimeout);
            delays.add(delayMillis);
            cancelled.add(false);
            return () -> cancelled.set(i, true);
        }

        void fire(int i) {
            tasks.get(i).run();
        }
    }

    private final ManualTimers timers = new ManualTimers();
    private final ControlMetrics metrics = new ControlMetrics();
    private final PendingRequests requests =
            new PendingRequests(3, timers, metrics, () -> "peer-x");

    private static Throwable failure(CompletableFuture<Msg> f) {
        assertTrue(f.isCompletedExceptionally(), "failed");
        try {
            f.get();
            throw new AssertionError("not failed");
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void requestIdsStartAtOneAndNeverRepeat() {
        long first = requests.nextId();
        assertEquals(1, first, "id 0 is a keepalive's or a connection-level ERROR's");
        assertNotEquals(first, requests.nextId());
    }

    @Test
    void aResponseCompletesItsRequestAndCancelsItsTimeout() throws Exception {
        long id = requests.nextId();
        CompletableFuture<Msg> f = requests.add(id, MessageType.PING, 250);
        assertEquals(List.of(250L), timers.delays);
        assertFalse(f.isDone());
        PongMsg pong = new PongMsg();
        assertEquals(
                PendingRequests.Outcome.COMPLETED, requests.complete(id, MessageType.PONG, pong));
        assertSame(pong, f.get());
        assertTrue(timers.cancelled.get(0), "the timeout is cancelled");
        assertEquals(0, requests.size());
    }

    @Test
    void aRequestWithNoResponseTimesOutAndItsLateResponseIsCounted() {
        long id = requests.nextId();
        CompletableFuture<Msg> f = requests.add(id, MessageType.JOB_REPORT, 40);
        timers.fire(0);
        ControlTimeoutException e = assertInstanceOf(ControlTimeoutException.class, failure(f));
        assertTrue(e.getMessage().contains("JOB_REPORT request " + id), e.getMessage());
        assertTrue(e.getMessage().contains("peer-x"), e.getMessage());
        assertTrue(e.getMessage().contains("40 ms"), e.getMessage());
        assertEquals(1, metrics.requestTimeouts());
        assertEquals(0, requests.size(), "a timed-out request leaves the table");
        assertEquals(
                PendingRequests.Outcome.LATE, requests.complete(id, MessageType.ACK, new AckMsg()));
        assertEquals(1, metrics.lateResponses());
        timers.fire(0); // a timer that fires after the response (cancel raced): no effect
        assertEquals(1, metrics.requestTimeouts());
    }

    @Test
    void aResponseOfTheWrongTypeFailsItsRequest() {
        long id = requests.nextId();
        CompletableFuture<Msg> f = requests.add(id, MessageType.DATA_REQUEST, 1000);
        assertEquals(
                PendingRequests.Outcome.MISMATCH,
                requests.complete(id, MessageType.ACK, new AckMsg()));
        ControlException e = assertInstanceOf(ControlException.class, failure(f));
        assertEquals(ErrorCode.UNEXPECTED_MESSAGE, e.code());
        assertTrue(e.getMessage().contains("ACK is not a response to DATA_REQUEST"));
        assertTrue(timers.cancelled.get(0));
        assertEquals(0, requests.size());
    }

    @Test
    void failFailsOnlyAPendingRequest() {
        long id = requests.nextId();
        CompletableFuture<Msg> f = requests.add(id, MessageType.MSR_UPDATE, 1000);
        ControlException why = new ControlException(ErrorCode.REQUEST_REJECTED, "no");
        assertFalse(requests.fail(id + 1, why), "unknown id");
        assertTrue(requests.fail(id, why));
        assertSame(why, failure(f));
        assertTrue(timers.cancelled.get(0));
        assertFalse(requests.fail(id, why), "already failed");
    }

    @Test
    void theConnectionsEndFailsEveryPendingRequest() {
        List<CompletableFuture<Msg>> futures = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            futures.add(requests.add(requests.nextId(), MessageType.PING, 1000));
        }
        ControlClosedException closed = new ControlClosedException("closed", null);
        requests.failAll(closed);
        for (CompletableFuture<Msg> f : futures) {
            assertSame(closed, failure(f));
        }
        assertEquals(List.of(true, true, true), timers.cancelled);
        assertEquals(0, requests.size());
    }

    @Test
    void theTableIsBoundedByMaxPending() {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            assertFalse(requests.full(), "room for request " + i);
            long id = requests.nextId();
            ids.add(id);
            requests.add(id, MessageType.PING, 1000);
        }
        assertTrue(requests.full(), "3 of 3 pending");
        assertEquals(3, requests.maxPending());
        requests.complete(ids.get(1), MessageType.PONG, new PongMsg());
        assertFalse(requests.full(), "an answered request frees its slot");
        timers.fire(0);
        assertEquals(1, requests.size(), "so does a timed-out one");
    }

    @Test
    void responsesMatchTheirRequests() {
        assertTrue(
                PendingRequests.responseMatches(MessageType.JOB_ANNOUNCE, MessageType.JOB_ACCEPT));
        assertTrue(
                PendingRequests.responseMatches(MessageType.JOB_ANNOUNCE, MessageType.JOB_REJECT));
        assertTrue(
                PendingRequests.responseMatches(
                        MessageType.DATA_REQUEST, MessageType.DATA_RESPONSE));
        assertTrue(PendingRequests.responseMatches(MessageType.MSR_UPDATE, MessageType.ACK));
        assertTrue(PendingRequests.responseMatches(MessageType.JOB_REPORT, MessageType.ACK));
        assertTrue(PendingRequests.responseMatches(MessageType.DATA_PLANE_SELECT, MessageType.ACK));
        assertTrue(PendingRequests.responseMatches(MessageType.PING, MessageType.PONG));
        assertFalse(PendingRequests.responseMatches(MessageType.PING, MessageType.ACK));
        assertFalse(PendingRequests.responseMatches(MessageType.JOB_ANNOUNCE, MessageType.ACK));
        assertFalse(PendingRequests.responseMatches(MessageType.HELLO, MessageType.HELLO_ACK));
    }
}
