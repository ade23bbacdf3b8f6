package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class PeerDeathTest {

    /**
     * One endpoint pair that moves a message, so that what the first engine of this JVM opens
     * lazily (the loaded library, libsodium's random source, the JVM's own descriptors) is open
     * before a test counts descriptors: run alone, the count went 40 -> 43 without a leak.
     */
    static void warmUp() throws Exception {
        CompletableFuture<Void> got = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        m.release();
                        got.complete(null);
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(1, 1.0));
            ByteBuf one = Unpooled.directBuffer(8).writeLong(1);
            try {
                job.send(0, 0, one);
            } finally {
                one.release();
            }
            got.get(60, TimeUnit.SECONDS);
            job.outcome().get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void peerEndpointClosedMidJobFailsTheJobWithPeerDeadWithinTheTimeout() throws Exception {
        warmUp();
        long fdsBefore = EngineTestSupport.openFds();
        CountDownLatch someArrived = new CountDownLatch(20);
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        m.release();
                        someArrived.countDown();
                    }
                };
        // Not shorter: a receiver stalled that long on a loaded machine would be declared dead
        // before
        // the kill, and the test would no longer test a kill.
        Duration deathTimeout = Duration.ofMillis(1500);
        AtpConfig senderCfg =
                EngineTestSupport.loopback()
                        .peerDeathTimeout(deathTimeout)
                        .sendBufferBytes(1 << 20)
                        .build();
        AtpConfig receiverCfg = EngineTestSupport.loopback().recvBufferBytes(1 << 20).build();
        EngineTestSupport.Pair p = new EngineTestSupport.Pair(senderCfg, receiverCfg, l);
        try {
            int n = 100_000;
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            AtomicReference<Throwable> senderError = new AtomicReference<>();
            Thread producer =
                    new Thread(
                            () -> {
                                ByteBuf b = Unpooled.directBuffer(16 * 1024).writeZero(16 * 1024);
                                try {
                                    for (int i = 0; i < n; i++) {
                                        job.send(0, i, b, 10, TimeUnit.SECONDS);
                                    }
                                } catch (Throwable t) {
                                    senderError.set(t);
                                } finally {
                                    b.release();
                                }
                            },
                            "producer");
            producer.start();
            assertTrue(someArrived.await(60, TimeUnit.SECONDS));
            long killedAt = System.nanoTime();
            // The peer dies mid-job. Its session CLOSE is best effort (the engine does not queue
            // it), so the sender
            // may learn it from CLOSE (status CLOSED) or, normally, from the peer-death timeout
            // (PEER_DEAD).
            p.receiver.close();
            // Liveness bound: 75x the timeout. How soon within it is printed, not asserted: a
            // loaded machine delays the timer thread by seconds without any defect.
            ExecutionException e =
                    assertThrows(
                            ExecutionException.class,
                            () -> job.outcome().get(30, TimeUnit.SECONDS));
            long tookMs = (System.nanoTime() - killedAt) / 1_000_000;
            AtpJobFailedException f = assertInstanceOf(AtpJobFailedException.class, e.getCause());
            System.out.println(
                    "peer death noticed after "
                            + tookMs
                            + " ms: "
                            + f.getMessage()
                            + " report="
                            + f.report());
            assertTrue(
                    f.status() == AtpStatus.PEER_DEAD || f.status() == AtpStatus.CLOSED,
                    "status " + f.status());
            producer.join(30_000);
            assertTrue(!producer.isAlive(), "producer blocked in send() was released");
            assertInstanceOf(AtpException.class, senderError.get());
            // The sender endpoint is still usable: a new job on a new session works after the
            // failure.
            assertTrue(p.sender.isOpen());
        } finally {
            p.close();
        }
        // <=, as the other lifecycle tests: the JVM may close a descriptor of its own meanwhile
        // (CI saw 44 before, 43 after); a descriptor the engine kept would show as more.
        long fdsAfter = EngineTestSupport.openFds();
        assertTrue(
                fdsAfter <= fdsBefore,
                "file descriptors released: " + fdsBefore + " -> " + fdsAfter);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void silentPeerIsDetectedAsPeerDead() throws Exception {
        // The receiver endpoint exists but never opens the session: nothing is ever acknowledged.
        AtpConfig cfg =
                EngineTestSupport.loopback().peerDeathTimeout(Duration.ofMillis(300)).build();
        try (AtpEndpoint a = AtpEndpoint.open(cfg);
                AtpEndpoint b = AtpEndpoint.open(cfg)) {
            CompletableFuture<AtpException> sessionError = new CompletableFuture<>();
            AtpSession s =
                    a.openSession(
                            5,
                            new byte[32],
                            new java.net.InetSocketAddress("127.0.0.1", b.localPort()),
                            true,
                            new IncomingJobListener() {
                                @Override
                                public void onSessionError(AtpSession session, AtpException error) {
                                    sessionError.complete(error);
                                }
                            });
            OutgoingJob job = s.startJob(JobSpec.of(4, 1.0));
            io.netty.buffer.ByteBuf one = Unpooled.directBuffer(8).writeLong(1);
            job.send(0, 0, one);
            long t0 = System.nanoTime();
            // Liveness bound 100x the timeout; the time taken is printed, not asserted.
            ExecutionException e =
                    assertThrows(
                            ExecutionException.class,
                            () -> job.outcome().get(30, TimeUnit.SECONDS));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("silent peer declared dead after " + ms + " ms");
            AtpJobFailedException f = assertInstanceOf(AtpJobFailedException.class, e.getCause());
            assertEquals(AtpStatus.PEER_DEAD, f.status());
            assertEquals(AtpStatus.PEER_DEAD, f.report().status());
            assertEquals(AtpStatus.PEER_DEAD, sessionError.get(30, TimeUnit.SECONDS).status());
            // sending on the failed job now throws the job's failure
            assertThrows(AtpJobFailedException.class, () -> job.send(0, 1, one));
            one.release();
        }
    }
}
