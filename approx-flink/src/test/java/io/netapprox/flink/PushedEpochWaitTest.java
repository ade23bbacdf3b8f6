package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ApproxPeer;
import io.netapprox.core.transport.ExchangeRegistry.Lease;
import io.netapprox.core.transport.IncomingTransfer;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * How long the two sides of a pushed epoch wait for each other. A pushed epoch that arrived whole
 * before its manifest waits for the manifest until the epoch's deadline ({@code
 * approx.epochTimeout} from the push's acceptance), not a hidden constant. Two real exchanges over
 * loopback; the receiver's push timers are moved by hand ({@link ManualTimers}), so "the manifest
 * comes 2.5 s after the push" needs no sleep and no clock.
 *
 * <p>Before the fix a pushed epoch was forgotten 2 s after its job ended (the slot was removed, its
 * messages released at the deadline): a manifest 2.5 s late found nothing, waited 2 s more, pulled
 * an outbox the push had already emptied and the epoch was answered without its data
 * (approxEpochsFailed). Both tests failed then: the claim did not complete.
 */
class PushedEpochWaitTest {
    private static final long DEADLINE_MS = 10_000;
    private static final long PUSH_WAIT_MS = 2_000;
    private static final int RACES = 20;

    /** The manifest comes after the old 2 s but within the deadline: the epoch has its data. */
    @Test
    void aManifestLaterThanTheOldConstantButWithinTheDeadlineFindsItsPushedData() throws Exception {
        withPushedEpoch(
                "late",
                (b, key, timers) -> {
                    timers.advance(2_500);
                    AtomicInteger received = new AtomicInteger();
                    CompletableFuture<IncomingTransfer> claim =
                            b.pushes()
                                    .claimPush(
                                            key,
                                            (t, m) -> {
                                                received.incrementAndGet();
                                                m.release();
                                            });
                    assertTrue(claim.isDone(), "the parked push was forgotten");
                    assertNotNull(claim.join(), "the parked push was forgotten");
                    assertEquals(3, received.get(), "every pushed message reaches the receiver");
                    assertEquals(0, b.pushes().pushesExpired());
                });
    }

    /** The manifest comes after the deadline: answered without the data, and counted as such. */
    @Test
    void aManifestAfterTheDeadlineIsAnsweredAtOnceAndCountedAsAnExpiredPush() throws Exception {
        withPushedEpoch(
                "expired",
                (b, key, timers) -> {
                    timers.advance(DEADLINE_MS + 500);
                    assertEquals(1, b.pushes().pushesExpired(), "the expired push is counted");
                    CompletableFuture<IncomingTransfer> claim =
                            b.pushes()
                                    .claimPush(
                                            key,
                                            (t, m) -> {
                                                throw new AssertionError("expired data delivered");
                                            });
                    assertTrue(
                            claim.isDone(),
                            "the receiver waited for a push that had expired (then pulled an"
                                    + " emptied outbox)");
                    CompletionException e =
                            org.junit.jupiter.api.Assertions.assertThrows(
                                    CompletionException.class, claim::join);
                    assertInstanceOf(PushReceiver.PushExpiredException.class, e.getCause());
                    assertTrue(e.getCause().getMessage().contains(key.toString()), e.getMessage());
                });
    }

    /**
     * A push this TaskManager's transport refuses (its push budget, here 0) is pulled as soon as
     * its manifest comes. Before, the receiver waited approx.pushWait (2 s) for a push that could
     * not come: the claim stayed open until the timers moved (this test failed then).
     */
    @Test
    void aPushRefusedForTheBudgetIsPulledAtOnceWithoutWaitingForIt() throws Exception {
        withPush(
                "refused",
                "0",
                false,
                (b, key, timers) -> {
                    assertEquals(1, b.pushMetrics().pushesOverBudget());
                    CompletableFuture<IncomingTransfer> claim =
                            b.pushes()
                                    .claimPush(
                                            key,
                                            (t, m) -> {
                                                throw new AssertionError(
                                                        "a refused push delivered");
                                            });
                    assertTrue(claim.isDone(), "the receiver waits for a refused push");
                    org.junit.jupiter.api.Assertions.assertNull(claim.join(), "then it pulls");
                });
    }

    /**
     * The receiver stopped waiting for a push ({@code approx.pushWait}) just before it came, so it
     * refuses the push and pulls: the pull must get the epoch even when it reaches the sender while
     * the refused push still holds the outbox (pushes come late when the sender's serving threads
     * are busy). Before, such a pull was rejected ("already being sent") and the epoch answered
     * without its data: a CI run of PushedTailEpochTest ended with 2 groups below target. Pushed
     * and pulled at once, {@link #RACES} times; before the fix most of them lost the race.
     */
    @Test
    void aPullRacingTheRefusalOfItsLatePushStillGetsTheEpoch() throws Exception {
        withExchanges(
                "race",
                "16",
                (a, b, p, timers) -> {
                    int rejected = 0;
                    String firstRejection = "";
                    for (int i = 1; i <= RACES; i++) {
                        OutboxKey key = new OutboxKey(9, 0, 0, 1 + i, 0);
                        a.outboxes().register(outbox(key));
                        CompletableFuture<IncomingTransfer> claim =
                                b.pushes().claimPush(key, (t, m) -> m.release());
                        timers.advance(PUSH_WAIT_MS);
                        assertTrue(claim.isDone(), "the receiver still waits for the push");
                        org.junit.jupiter.api.Assertions.assertNull(claim.join());
                        // the push comes now, is refused (its receiver gave up), and the pull goes
                        // push() says false when the refusal is back before it returns (CI saw
                        // it): the push was sent either way
                        a.server().push(key);
                        AtomicInteger received = new AtomicInteger();
                        try {
                            b.pull(
                                            a.engineId(),
                                            p,
                                            key,
                                            new int[] {3},
                                            (t, m) -> {
                                                received.incrementAndGet();
                                                m.release();
                                            },
                                            () -> false)
                                    .get(30, TimeUnit.SECONDS)
                                    .report()
                                    .get(30, TimeUnit.SECONDS);
                        } catch (java.util.concurrent.ExecutionException e) {
                            if (rejected++ == 0) {
                                firstRejection = "race " + i + ": " + e.getCause();
                            }
                            continue;
                        }
                        assertEquals(3, received.get(), "race " + i + ": the pulled epoch");
                    }
                    assertEquals(
                            0,
                            rejected,
                            "pulls rejected while a refused push held the outbox; first: "
                                    + firstRejection);
                });
    }

    @FunctionalInterface
    private interface PushedEpochBody {
        void run(TaskManagerExchange receiver, OutboxKey key, ManualTimers timers) throws Exception;
    }

    /**
     * Sender exchange a, receiver exchange b (hand-moved timers): b pulls one epoch from a (so a
     * knows b's session), then a pushes the next epoch (3 messages, MSR 1) and the test waits until
     * b has accepted it and its job ended - the whole epoch is parked at b, no manifest yet.
     */
    private static void withPushedEpoch(String name, PushedEpochBody body) throws Exception {
        withPush(name, "16", true, body);
    }

    /**
     * {@link #withPushedEpoch} with the receiver's {@code approx.maxPushedJobs}; the test waits
     * until b accepted the push and its job ended ({@code accepted}) or b refused it.
     */
    private static void withPush(
            String name, String maxPushedJobs, boolean accepted, PushedEpochBody body)
            throws Exception {
        withExchanges(
                name,
                maxPushedJobs,
                (a, b, p, timers) -> {
                    OutboxKey pushed = new OutboxKey(9, 0, 0, 1, 0);
                    a.outboxes().register(outbox(pushed));
                    assertTrue(a.server().push(pushed), "a knows b's session from the pull");
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (!(accepted
                            ? b.pushMetrics().pushesAccepted() == 1
                                    && b.pushMetrics().pushedJobsOpen() == 0
                            : b.pushMetrics().pushesRefused() == 1)) {
                        assertTrue(
                                System.nanoTime() < until,
                                "the push did not end: " + b.pushMetrics());
                        Thread.sleep(5);
                    }
                    body.run(b, pushed, timers);
                });
    }

    @FunctionalInterface
    private interface ExchangesBody {
        void run(
                TaskManagerExchange sender,
                TaskManagerExchange receiver,
                ApproxPeer toSender,
                ManualTimers timers)
                throws Exception;
    }

    /**
     * Sender exchange a, receiver exchange b (hand-moved timers, {@code approx.maxPushedJobs}): b
     * has pulled one epoch from a, so a knows b's session and can push to it.
     */
    private static void withExchanges(String name, String maxPushedJobs, ExchangesBody body)
            throws Exception {
        ManualTimers timers = new ManualTimers();
        try (Lease<TaskManagerExchange> la =
                        TaskManagerExchange.acquire(
                                config(name, "16"), "tm-pw-a-" + name, "127.0.0.1");
                Lease<TaskManagerExchange> lb =
                        TaskManagerExchange.acquire(
                                config(name, maxPushedJobs),
                                "tm-pw-b-" + name,
                                "127.0.0.1",
                                timers)) {
            TaskManagerExchange a = la.get();
            TaskManagerExchange b = lb.get();
            OutboxKey pulled = new OutboxKey(9, 0, 0, 0, 0);
            a.outboxes().register(outbox(pulled));
            ApproxPeer p =
                    b.peer(a.engineId(), new InetSocketAddress(a.controlHost(), a.controlPort()))
                            .get(30, TimeUnit.SECONDS);
            b.pull(a.engineId(), p, pulled, new int[] {3}, (t, m) -> m.release(), () -> false)
                    .get(30, TimeUnit.SECONDS)
                    .report()
                    .get(30, TimeUnit.SECONDS);
            body.run(a, b, p, timers);
        }
    }

    private static ApproxConfig config(String name, String maxPushedJobs) {
        return ApproxConfig.parse(
                Map.of(
                        "approx.authSecret",
                        "0123456789abcdef-" + name,
                        "approx.sendBuffer",
                        "64 mb",
                        "approx.epochTimeout",
                        DEADLINE_MS + " ms",
                        "approx.maxPushedJobs",
                        maxPushedJobs,
                        "approx.pushWait",
                        PUSH_WAIT_MS + " ms"));
    }

    private static EpochOutbox outbox(OutboxKey key) {
        return new EpochOutbox(
                key,
                new byte[][][] {{new byte[64], new byte[64], new byte[64]}},
                new double[] {1.0});
    }

    /** Timers run by {@link #advance}: a virtual clock starting at 0. */
    static final class ManualTimers implements PushTimers {
        private record Task(long due, Runnable run) {}

        private final List<Task> tasks = new ArrayList<>();
        private long now;

        @Override
        public synchronized void after(long delayMillis, Runnable task) {
            tasks.add(new Task(now + delayMillis, task));
        }

        /** Moves the clock by {@code millis}, running every task that falls due, in due order. */
        void advance(long millis) {
            long target;
            synchronized (this) {
                target = now + millis;
            }
            while (true) {
                Task next = null;
                synchronized (this) {
                    for (Task t : tasks) {
                        if (t.due <= target && (next == null || t.due < next.due)) {
                            next = t;
                        }
                    }
                    if (next == null) {
                        now = target;
                        return;
                    }
                    tasks.remove(next);
                    now = next.due;
                }
                next.run.run();
            }
        }
    }
}
