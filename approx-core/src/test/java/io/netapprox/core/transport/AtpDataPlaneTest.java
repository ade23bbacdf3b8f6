package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpEndpoint;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.IncomingJobListener;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** AtpDataPlane over real endpoints on 127.0.0.1. */
class AtpDataPlaneTest {

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void opensWorkingSessionsFromACopiedKeyAndClosesThem() throws Exception {
        try (AtpEndpoint a = AtpEndpoint.open(TransportTestSupport.atp().build());
                AtpEndpoint b = AtpEndpoint.open(TransportTestSupport.atp().build())) {
            CompletableFuture<JobReport> done = new CompletableFuture<>();
            AtomicInteger got = new AtomicInteger();
            List<String> events = new ArrayList<>();
            AtpDataPlane receiver =
                    new AtpDataPlane(
                            b,
                            4,
                            null,
                            new AtpDataPlane.SessionCallbacks() {
                                @Override
                                public IncomingJobListener sessionOpening(
                                        long id, InetSocketAddress peer, boolean initiator) {
                                    events.add("opening " + id + " " + initiator);
                                    return new IncomingJobListener() {
                                        @Override
                                        public void onMessage(AtpMessage m) {
                                            got.incrementAndGet();
                                            m.release();
                                        }

                                        @Override
                                        public void onJobDone(AtpSession s, JobReport r) {
                                            done.complete(r);
                                        }
                                    };
                                }

                                @Override
                                public void sessionOpened(AtpSession s) {
                                    events.add("opened " + s.id());
                                }

                                @Override
                                public void sessionClosing(long id, AtpSession s) {
                                    events.add("closing " + id + " " + (s != null));
                                }
                            });
            AtpDataPlane sender = new AtpDataPlane(a, 4);
            assertEquals(a.localPort(), sender.localUdpPort());
            assertEquals(InetAddress.getByName("127.0.0.1"), sender.udpAddress());

            byte[] key = new byte[32];
            Arrays.fill(key, (byte) 7);
            byte[] original = key.clone();
            sender.openSession(11, key, new InetSocketAddress("127.0.0.1", b.localPort()), true);
            Arrays.fill(
                    key, (byte) 0); // the control plane wipes its array: the data plane must have
            // copied it
            receiver.openSession(
                    11, original, new InetSocketAddress("127.0.0.1", a.localPort()), false);
            assertEquals(List.of("opening 11 false", "opened 11"), events);
            AtpSession s = sender.session(11);
            assertNotNull(s);
            OutgoingJob job = s.startJob(JobSpec.of(10, 1.0));
            ByteBuf buf = Unpooled.directBuffer(100).writeZero(100);
            for (int i = 0; i < 10; i++) {
                job.send(0, i, buf);
            }
            buf.release();
            job.outcome().get(10, TimeUnit.SECONDS);
            assertEquals(10, done.get(10, TimeUnit.SECONDS).delivered());
            assertEquals(10, got.get());

            receiver.closeSession(11);
            assertEquals("closing 11 true", events.get(2));
            assertTrue(b.sessions().isEmpty());
            receiver.closeSession(11); // unknown now: harmless
            assertEquals(3, events.size());
            sender.close();
            assertTrue(a.sessions().isEmpty());
            assertEquals(0, sender.sessionCount());
            IllegalStateException closed =
                    assertThrows(
                            IllegalStateException.class,
                            () ->
                                    sender.openSession(
                                            12,
                                            original,
                                            new InetSocketAddress("127.0.0.1", b.localPort()),
                                            true));
            assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void boundedDuplicateAndInvalidSessionsAreRefusedClearly() throws Exception {
        try (AtpEndpoint a = AtpEndpoint.open(TransportTestSupport.atp().build())) {
            List<String> closing = new ArrayList<>();
            AtpDataPlane dp =
                    new AtpDataPlane(
                            a,
                            2,
                            InetAddress.getByName("0.0.0.0"),
                            new AtpDataPlane.SessionCallbacks() {
                                @Override
                                public IncomingJobListener sessionOpening(
                                        long id, InetSocketAddress p, boolean init) {
                                    return null;
                                }

                                @Override
                                public void sessionClosing(long id, AtpSession s) {
                                    closing.add(id + (s == null ? " failed" : " closed"));
                                }
                            });
            assertTrue(dp.udpAddress().isAnyLocalAddress());
            InetSocketAddress peer = new InetSocketAddress("127.0.0.1", 9);
            byte[] key = new byte[32];
            dp.openSession(1, key, peer, true);
            IllegalStateException dup =
                    assertThrows(
                            IllegalStateException.class, () -> dp.openSession(1, key, peer, true));
            assertTrue(dup.getMessage().contains("already exists"), dup.getMessage());
            dp.openSession(2, key, peer, true);
            IllegalStateException full =
                    assertThrows(
                            IllegalStateException.class, () -> dp.openSession(3, key, peer, true));
            assertTrue(full.getMessage().contains("2 of 2"), full.getMessage());
            assertEquals(2, dp.sessionCount());
            dp.closeSession(1);
            dp.openSession(3, key, peer, true);
            assertEquals(2, a.sessions().size());
            IllegalArgumentException badKey =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> dp.openSession(4, new byte[16], peer, true));
            assertTrue(badKey.getMessage().contains("32 bytes"), badKey.getMessage());
            assertThrows(IllegalArgumentException.class, () -> dp.openSession(4, null, peer, true));
            assertThrows(
                    IllegalArgumentException.class,
                    () ->
                            dp.openSession(
                                    4,
                                    key,
                                    InetSocketAddress.createUnresolved("nowhere.invalid", 9),
                                    true));
            dp.closeSession(3);
            // a refused engine open gives the slot back and tells the callbacks
            dp.openSession(5, key, peer, true);
            AtpSession five = dp.session(5);
            assertSame(
                    five, a.sessions().stream().filter(s -> s.id() == 5).findFirst().orElse(null));
            IllegalStateException engineDup =
                    assertThrows(
                            IllegalStateException.class,
                            () -> new AtpDataPlane(a, 2).openSession(5, key, peer, true));
            assertNotNull(engineDup.getMessage());
            dp.close();
            assertEquals(0, dp.sessionCount());
            assertNull(dp.session(5));
            assertEquals(List.of("1 closed", "3 closed"), closing.subList(0, 2));
            assertEquals(
                    java.util.Set.of("2 closed", "5 closed"),
                    new java.util.HashSet<>(closing.subList(2, 4)));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> new AtpDataPlane(a, a.config().maxSessions() + 1));
            assertThrows(IllegalArgumentException.class, () -> new AtpDataPlane(a, 0));
        }
    }
}
