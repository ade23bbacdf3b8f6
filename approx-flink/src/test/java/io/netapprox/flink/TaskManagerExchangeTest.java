package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.transport.ExchangeRegistry.Lease;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The per-TaskManager exchange alone (real engines over loopback, no Flink). */
class TaskManagerExchangeTest {
    private static ApproxConfig config(String secret, String sendBuffer) {
        return ApproxConfig.parse(
                Map.of("approx.authSecret", secret, "approx.sendBuffer", sendBuffer));
    }

    private static EpochOutbox outbox(long epoch, int bytes) {
        return new EpochOutbox(
                new OutboxKey(1, 0, 0, epoch, 0),
                new byte[][][] {{new byte[bytes]}},
                new double[] {1.0});
    }

    @Test
    void oneExchangePerTaskManagerAndSettingsClosedByTheLastReference() {
        ApproxConfig c = config("0123456789abcdef-one", "1 mb");
        int before = TaskManagerExchange.liveExchanges();
        Lease<TaskManagerExchange> a = TaskManagerExchange.acquire(c, "tm-a", "127.0.0.1");
        Lease<TaskManagerExchange> a2 = TaskManagerExchange.acquire(c, "tm-a", "127.0.0.1");
        Lease<TaskManagerExchange> b = TaskManagerExchange.acquire(c, "tm-b", "127.0.0.1");
        Lease<TaskManagerExchange> other =
                TaskManagerExchange.acquire(
                        config("0123456789abcdef-two", "1 mb"), "tm-a", "127.0.0.1");
        try {
            assertSame(a.get(), a2.get(), "slots of one TaskManager share its exchange");
            assertNotSame(a.get(), b.get(), "TaskManagers have their own");
            assertNotSame(a.get(), other.get(), "another job's secret gets another engine");
            assertEquals(before + 3, TaskManagerExchange.liveExchanges());
            a2.close();
            assertEquals(before + 3, TaskManagerExchange.liveExchanges());
        } finally {
            a.close();
            b.close();
            other.close();
        }
        assertEquals(before, TaskManagerExchange.liveExchanges());
    }

    /**
     * A waiting outbox holds its exchange open after the last operator released it (its receiver
     * may still pull it); taking it releases that hold and the exchange closes.
     */
    @Test
    void aWaitingOutboxKeepsTheExchangeOpenAfterTheLastOperator() throws Exception {
        int before = TaskManagerExchange.liveExchanges();
        Lease<TaskManagerExchange> op =
                TaskManagerExchange.acquire(
                        config("0123456789abcdef-hold", "1 mb"), "tm-hold", "127.0.0.1");
        TaskManagerExchange x = op.get();
        EpochOutbox o = outbox(0, 100);
        x.outboxes().register(o);
        op.close();
        assertEquals(before + 1, TaskManagerExchange.liveExchanges(), "the outbox holds it");
        assertSame(o, x.outboxes().takeLocal(o.key));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (TaskManagerExchange.liveExchanges() != before) {
            assertTrue(System.nanoTime() < until, "the exchange did not close with its outbox");
            Thread.sleep(5);
        }
    }

    @Test
    void outboxesAreBoundedBySendBufferAndASenderWaitsForSpace() throws Exception {
        Lease<TaskManagerExchange> lease =
                TaskManagerExchange.acquire(
                        config("0123456789abcdef-bound", "1 mb"), "tm-c", "127.0.0.1");
        try {
            OutboxStore x = lease.get().outboxes();
            EpochOutbox first = outbox(0, 700_000);
            x.register(first);
            CompletableFuture<Void> second = new CompletableFuture<>();
            Thread t =
                    new Thread(
                            () -> {
                                try {
                                    x.register(outbox(1, 700_000));
                                    second.complete(null);
                                } catch (Throwable e) {
                                    second.completeExceptionally(e);
                                }
                            });
            t.start();
            assertThrows(
                    java.util.concurrent.TimeoutException.class,
                    () -> second.get(300, TimeUnit.MILLISECONDS),
                    "the second outbox must wait: 1.4 MB > 1 MB");
            assertTrue(x.bytes() <= (1 << 20));
            assertSame(first, x.takeLocal(first.key)); // the receiver takes it: space frees
            second.get(10, TimeUnit.SECONDS);
            assertNull(x.takeLocal(first.key), "taken once");
            x.dropSender(1, 0, 0);
            assertEquals(0, x.bytes());
        } finally {
            lease.close();
        }
    }

    @Test
    void aPeerWithAnotherSecretCannotConnect() throws Exception {
        Lease<TaskManagerExchange> la =
                TaskManagerExchange.acquire(
                        config("0123456789abcdef-aaaa", "1 mb"), "tm-d", "127.0.0.1");
        Lease<TaskManagerExchange> lb =
                TaskManagerExchange.acquire(
                        config("0123456789abcdef-bbbb", "1 mb"), "tm-e", "127.0.0.1");
        try {
            TaskManagerExchange a = la.get();
            CompletableFuture<?> f =
                    lb.get()
                            .peer(
                                    a.engineId(),
                                    new InetSocketAddress(a.controlHost(), a.controlPort()));
            ExecutionException e =
                    assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
            assertTrue(
                    String.valueOf(e.getCause()).contains("CONNECT_FAILED"),
                    e.getCause().toString());
        } finally {
            la.close();
            lb.close();
        }
    }

    /**
     * Regression: two TaskManagers pulling from each other at once used two ATP sessions between
     * the same two engines (one per direction), and in a fresh JVM the transfers stalled (messages
     * stopped or the jobs never completed; reproduced 3 of 3 times with 8 transfers of ~130 groups,
     * never with one direction or one session). Now both directions share one session, and every
     * pull completes.
     */
    @Test
    void pullsInBothDirectionsShareOneSessionAndComplete() throws Exception {
        ApproxConfig c = config("0123456789abcdef-both", "64 mb");
        withTwoExchanges(
                c,
                "tm-f",
                "tm-g",
                (a, b) -> {
                    InetSocketAddress aAddr =
                            new InetSocketAddress(a.controlHost(), a.controlPort());
                    InetSocketAddress bAddr =
                            new InetSocketAddress(b.controlHost(), b.controlPort());
                    java.util.List<CompletableFuture<?>> reports = new java.util.ArrayList<>();
                    java.util.concurrent.atomic.AtomicInteger delivered =
                            new java.util.concurrent.atomic.AtomicInteger();
                    int total = 0;
                    for (int k = 0; k < 8; k++) {
                        int groups = 120 + 4 * k;
                        byte[][][] msgs = new byte[groups][][];
                        double[] msr = new double[groups];
                        for (int g = 0; g < groups; g++) {
                            int n = Math.max(1, (int) (40 / Math.pow(g + 1, 0.9)));
                            msgs[g] = new byte[n][];
                            for (int i = 0; i < n; i++) {
                                msgs[g][i] = new byte[132];
                            }
                            msr[g] = n <= 2 ? 1.0 : Math.min(1.0, 3.0 / n);
                            total += n;
                        }
                        boolean fromA = k % 2 == 0;
                        OutboxKey key = new OutboxKey(3, k, 0, 0, 0);
                        (fromA ? a : b).outboxes().register(new EpochOutbox(key, msgs, msr));
                        CompletableFuture<io.netapprox.core.transport.ApproxPeer> peer =
                                fromA ? b.peer(a.engineId(), aAddr) : a.peer(b.engineId(), bAddr);
                        reports.add(
                                peer.thenCompose(
                                        p ->
                                                p.request(
                                                                key.toBytes(),
                                                                (t, m) -> {
                                                                    delivered.incrementAndGet();
                                                                    m.release();
                                                                })
                                                        .report()));
                    }
                    for (CompletableFuture<?> r : reports) {
                        r.get(30, TimeUnit.SECONDS);
                    }
                    assertEquals(1, a.peerCount(), "one session per pair of TaskManagers");
                    assertEquals(1, b.peerCount(), "one session per pair of TaskManagers");
                    assertTrue(delivered.get() > total / 2, delivered + " of " + total);
                });
    }

    /**
     * A peer's pull slot goes to the next epoch as soon as the current one has its data (every
     * group at its target), not at its job's report. The first pull's listener holds the event
     * thread once its target is in, until the second pull started: with the slot freed at the
     * report (before), the report cannot come while the thread is held and the second pull never
     * starts (the wait times out and the test fails); now it starts before the listener even sees
     * the last message.
     */
    @Test
    void aPullSlotIsFreedWhenTheEpochHasItsDataNotAtTheReport() throws Exception {
        ApproxConfig c = config("0123456789abcdef-slot", "64 mb"); // concurrentPulls 1
        withTwoExchanges(
                c,
                "tm-h",
                "tm-i",
                (a, b) -> {
                    OutboxKey first = new OutboxKey(4, 0, 0, 0, 0);
                    OutboxKey second = new OutboxKey(4, 0, 0, 1, 0);
                    for (OutboxKey k : new OutboxKey[] {first, second}) {
                        a.outboxes()
                                .register(
                                        new EpochOutbox(
                                                k,
                                                new byte[][][] {
                                                    {new byte[64], new byte[64], new byte[64]}
                                                },
                                                new double[] {1.0}));
                    }
                    io.netapprox.core.transport.ApproxPeer p =
                            b.peer(
                                            a.engineId(),
                                            new InetSocketAddress(a.controlHost(), a.controlPort()))
                                    .get(30, TimeUnit.SECONDS);
                    java.util.concurrent.CountDownLatch secondStarted =
                            new java.util.concurrent.CountDownLatch(1);
                    java.util.concurrent.atomic.AtomicInteger firstMessages =
                            new java.util.concurrent.atomic.AtomicInteger();
                    CompletableFuture<Boolean> overlapped = new CompletableFuture<>();
                    CompletableFuture<io.netapprox.core.transport.IncomingTransfer> one =
                            b.pull(
                                    a.engineId(),
                                    p,
                                    first,
                                    new int[] {3},
                                    (t, m) -> {
                                        m.release();
                                        if (firstMessages.incrementAndGet() == 3) {
                                            try {
                                                overlapped.complete(
                                                        secondStarted.await(5, TimeUnit.SECONDS));
                                            } catch (InterruptedException e) {
                                                overlapped.completeExceptionally(e);
                                            }
                                        }
                                    },
                                    () -> false);
                    CompletableFuture<io.netapprox.core.transport.IncomingTransfer> two =
                            b.pull(
                                    a.engineId(),
                                    p,
                                    second,
                                    new int[] {3},
                                    (t, m) -> m.release(),
                                    () -> false);
                    two.thenRun(secondStarted::countDown);
                    assertTrue(
                            overlapped.get(30, TimeUnit.SECONDS),
                            "the second pull did not start until the first one's report");
                    one.get().report().get(30, TimeUnit.SECONDS);
                    two.get().report().get(30, TimeUnit.SECONDS);
                    PullGate gate = b.gate(a.engineId());
                    assertEquals(2, gate.freedBeforeEnd(), "both slots freed with the data");
                    assertEquals(0, gate.open());
                });
    }

    /**
     * An outbox's space is freed once its messages are in the sending engine (which retransmits
     * from its own bounded buffer), not at the receiver's report: the receiving listener holds its
     * event thread on the first message until the sender's outbox bytes are back to 0. Before, they
     * were freed at the report, which cannot come while the thread is held: the wait timed out.
     */
    @Test
    void anOutboxIsFreedOnceSubmittedNotAtTheReport() throws Exception {
        ApproxConfig c = config("0123456789abcdef-free", "64 mb");
        withTwoExchanges(
                c,
                "tm-j",
                "tm-k",
                (a, b) -> {
                    OutboxKey key = new OutboxKey(5, 0, 0, 0, 0);
                    a.outboxes()
                            .register(
                                    new EpochOutbox(
                                            key,
                                            new byte[][][] {
                                                {new byte[64], new byte[64], new byte[64]}
                                            },
                                            new double[] {1.0}));
                    assertTrue(a.outboxes().bytes() > 0);
                    io.netapprox.core.transport.ApproxPeer p =
                            b.peer(
                                            a.engineId(),
                                            new InetSocketAddress(a.controlHost(), a.controlPort()))
                                    .get(30, TimeUnit.SECONDS);
                    CompletableFuture<Boolean> freedBeforeReport = new CompletableFuture<>();
                    CompletableFuture<io.netapprox.core.transport.IncomingTransfer> t =
                            b.pull(
                                    a.engineId(),
                                    p,
                                    key,
                                    new int[] {3},
                                    (tr, m) -> {
                                        m.release();
                                        long until =
                                                System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                                        while (a.outboxes().bytes() > 0
                                                && System.nanoTime() < until) {
                                            Thread.onSpinWait();
                                        }
                                        freedBeforeReport.complete(a.outboxes().bytes() == 0);
                                    },
                                    () -> false);
                    assertTrue(
                            freedBeforeReport.get(30, TimeUnit.SECONDS),
                            "the outbox was held until the report");
                    t.get().report().get(30, TimeUnit.SECONDS);
                });
    }

    @FunctionalInterface
    private interface ExchangePair {
        void run(TaskManagerExchange a, TaskManagerExchange b) throws Exception;
    }

    /** Two exchanges with config {@code c} on two TaskManagers of this JVM, released after. */
    private static void withTwoExchanges(ApproxConfig c, String tmA, String tmB, ExchangePair body)
            throws Exception {
        try (Lease<TaskManagerExchange> a = TaskManagerExchange.acquire(c, tmA, "127.0.0.1");
                Lease<TaskManagerExchange> b = TaskManagerExchange.acquire(c, tmB, "127.0.0.1")) {
            body.run(a.get(), b.get());
        }
    }
}
