package io.netapprox.core.engine;

import static io.netapprox.core.engine.TestPayloads.crc;
import static io.netapprox.core.engine.TestPayloads.fill;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.ControlPathReport;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Two endpoints in one JVM over loopback, real native engine. */
class LoopbackTransferTest {

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void oneGibExactArrivesChecksummedAndInOrder() throws Exception {
        final int size = 1 << 20;
        final int n = 1024; // 1 GiB
        long[] sentCrc = new long[n];
        long[] gotCrc = new long[n];
        AtomicInteger next = new AtomicInteger();
        AtomicReference<String> orderError = new AtomicReference<>();
        CompletableFuture<JobReport> receiverReport = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        try {
                            int expect = next.getAndIncrement();
                            if (m.messageId() != expect && orderError.get() == null) {
                                orderError.set(
                                        "expected message " + expect + ", got " + m.messageId());
                            }
                            if (m.content().readableBytes() != size && orderError.get() == null) {
                                orderError.set(
                                        "message "
                                                + m.messageId()
                                                + " has "
                                                + m.content().readableBytes()
                                                + " bytes");
                            }
                            gotCrc[m.messageId()] = crc(m.content());
                        } finally {
                            m.release();
                        }
                    }

                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        receiverReport.complete(r);
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().maxDatagram(8192).build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job =
                    p.out.startJob(JobSpec.builder().addGroup(7, n, 1.0).mrdf(false).build());
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
            long t0 = System.nanoTime();
            try {
                for (int i = 0; i < n; i++) {
                    fill(buf, i, size);
                    sentCrc[i] = crc(buf);
                    assertEquals(SendResult.ACCEPTED, job.send(0, i, buf));
                }
            } finally {
                buf.release();
            }
            JobReport sr = job.outcome().get(60, TimeUnit.SECONDS);
            JobReport rr = receiverReport.get(10, TimeUnit.SECONDS);
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.printf(
                    "1 GiB exact over loopback: %.2f s (%.2f Gbit/s), sender %s%n",
                    secs, n * (double) size * 8 / secs / 1e9, sr);
            assertEquals(null, orderError.get());
            assertEquals(n, next.get());
            assertArrayEquals(sentCrc, gotCrc);
            assertTrue(sr.isSender() && sr.isSuccess());
            assertEquals(n, rr.delivered());
            assertEquals(0, rr.lost());
            assertEquals(7, rr.groups().get(0).groupId());
            assertEquals(n, rr.groups().get(0).deliveredIds().cardinality());
            assertEquals(0, p.receiver.unreleasedMessages());
            // The control-path counters cross JNI on both sides.
            ControlPathReport sc = sr.controlPath();
            ControlPathReport rc = rr.controlPath();
            assertTrue(sc.announcesSent() >= 1, sc.toString());
            assertTrue(sc.announceProbes() < sc.announcesSent(), sc.toString());
            assertTrue(sc.acksWhileStarting() >= 1, "the announce's acknowledgement: " + sc);
            assertTrue(sc.donesSent() >= 1, sc.toString());
            assertTrue(sc.startToRunningNanos() > 0 && sc.startToRunningNanos() <= sr.jctNanos());
            assertEquals(0, sc.announcesReceived());
            assertTrue(rc.announcesReceived() >= 1, rc.toString());
            assertTrue(rc.announcesReceived() <= sc.announcesSent(), rc + " vs " + sc);
            assertEquals(rc.announcesReceived(), rc.announcesAcked(), rc.toString());
            assertEquals(rc.announcesReceived() - 1, rc.announcesDuplicate(), rc.toString());
            assertEquals(0, rc.announcesSent());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void thirtyPercentLossEveryGroupReachesItsTargetAndReportMatchesListener() throws Exception {
        final int size = 16 * 1024;
        final int n0 = 300;
        final int n1 = 300;
        Map<Long, Set<Integer>> delivered = new ConcurrentHashMap<>();
        Map<Long, Set<Integer>> lost = new ConcurrentHashMap<>();
        Map<Integer, Long> crcById = new ConcurrentHashMap<>();
        CompletableFuture<JobReport> receiverReport = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        try {
                            delivered
                                    .computeIfAbsent(
                                            m.groupId(), k -> ConcurrentHashMap.newKeySet())
                                    .add(m.messageId());
                            crcById.put(m.messageId(), crc(m.content()));
                        } finally {
                            m.release();
                        }
                    }

                    @Override
                    public void onMessageLost(AtpSession s, int job, int msg, long group) {
                        lost.computeIfAbsent(group, k -> ConcurrentHashMap.newKeySet()).add(msg);
                    }

                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        receiverReport.complete(r);
                    }
                };
        AtpConfig senderCfg = EngineTestSupport.loopback().faultInjection(0.3, 0.0, 42).build();
        AtpConfig receiverCfg = EngineTestSupport.loopback().faultInjection(0.3, 0.0, 43).build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(senderCfg, receiverCfg, l)) {
            JobSpec spec = JobSpec.builder().addGroup(100, n0, 0.5).addGroup(200, n1, 0.8).build();
            OutgoingJob job = p.out.startJob(spec);
            // Batched submission: 16 messages per JNI crossing.
            SendBatch batch = new SendBatch(16);
            List<ByteBuf> bufs = new ArrayList<>();
            long[] sentCrc = new long[n0 + n1];
            for (int g = 0; g < 2; g++) {
                int groupSize = g == 0 ? n0 : n1;
                for (int i = 0; i < groupSize; i++) {
                    ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(size);
                    int id = (g == 0 ? 0 : n0) + i;
                    fill(b, id, size);
                    sentCrc[id] = crc(b);
                    bufs.add(b);
                    batch.add(g, i, b);
                    if (batch.isFull()) {
                        SendResult r = job.send(batch, 20, TimeUnit.SECONDS);
                        bufs.forEach(ByteBuf::release);
                        bufs.clear();
                        if (r == SendResult.NOT_NEEDED) {
                            break;
                        }
                    }
                }
            }
            if (batch.size() > 0) {
                job.send(batch, 20, TimeUnit.SECONDS);
            }
            bufs.forEach(ByteBuf::release);
            JobReport sr = job.outcome().get(40, TimeUnit.SECONDS);
            JobReport rr = receiverReport.get(10, TimeUnit.SECONDS);
            System.out.println("30% loss, sender: " + sr);
            System.out.println("30% loss, receiver: " + rr);
            System.out.println("sender stats: " + p.sender.stats());
            assertTrue(sr.isSuccess());
            assertTrue(rr.isSuccess());
            assertTrue(p.sender.stats().get("dropped_fault_out") > 0, "fault injection active");
            int total = 0;
            for (GroupReport g : rr.groups()) {
                Set<Integer> got = delivered.getOrDefault(g.groupId(), Set.of());
                assertTrue(g.delivered() >= g.target(), g + " reached its target");
                assertEquals(got.size(), g.delivered(), "listener count == report count for " + g);
                assertEquals(
                        new TreeSet<>(got),
                        toSet(g.deliveredIds().toArray()),
                        "delivered ids of group " + g.groupId());
                Set<Integer> lostIds = lost.getOrDefault(g.groupId(), Set.of());
                assertTrue(
                        toSet(g.lostIds().toArray()).containsAll(lostIds),
                        "lost notices are in the report");
                total += g.delivered();
            }
            assertEquals(rr.delivered(), total);
            assertEquals(300 /* ceil(.5*300) */ / 2, rr.groups().get(0).target());
            assertEquals(240, rr.groups().get(1).target());
            for (Map.Entry<Integer, Long> e : crcById.entrySet()) {
                assertEquals(sentCrc[e.getKey()], e.getValue(), "payload of message " + e.getKey());
            }
        }
    }

    private static Set<Integer> toSet(int[] ids) {
        Set<Integer> s = new TreeSet<>();
        for (int i : ids) {
            s.add(i);
        }
        return s;
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void forwardsIntoAChannelPipeline() throws Exception {
        List<AtpMessage> seen = new ArrayList<>();
        List<Long> crcs = new ArrayList<>();
        CompletableFuture<JobReport> done = new CompletableFuture<>();
        AtomicInteger started = new AtomicInteger();
        AtomicInteger readCompletes = new AtomicInteger();
        io.netty.channel.embedded.EmbeddedChannel ch =
                new io.netty.channel.embedded.EmbeddedChannel(
                        new AtpMessageHandler() {
                            @Override
                            protected void messageReceived(
                                    io.netty.channel.ChannelHandlerContext ctx, AtpMessage msg) {
                                synchronized (crcs) {
                                    crcs.add(crc(msg.content()));
                                    seen.add(msg);
                                }
                            }

                            @Override
                            protected void jobStarted(
                                    io.netty.channel.ChannelHandlerContext ctx,
                                    AtpSession s,
                                    int jobId) {
                                started.incrementAndGet();
                            }

                            @Override
                            protected void jobDone(
                                    io.netty.channel.ChannelHandlerContext ctx, JobReport report) {
                                done.complete(report);
                            }

                            @Override
                            public void channelReadComplete(
                                    io.netty.channel.ChannelHandlerContext ctx) {
                                readCompletes.incrementAndGet();
                            }
                        });
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p =
                new EngineTestSupport.Pair(cfg, cfg, new AtpChannelForwarder(ch))) {
            int n = 50;
            OutgoingJob job = p.out.startJob(JobSpec.of(n, 1.0));
            long[] sent = new long[n];
            for (int i = 0; i < n; i++) {
                byte[] a = new byte[1000 + i];
                Arrays.fill(a, (byte) i);
                sent[i] = crc(Unpooled.wrappedBuffer(a));
                // heap ByteBuffer and heap ByteBuf paths (copied into pooled direct memory)
                SendResult r =
                        i % 2 == 0
                                ? job.send(0, i, ByteBuffer.wrap(a))
                                : job.send(0, i, Unpooled.wrappedBuffer(a));
                assertEquals(SendResult.ACCEPTED, r);
            }
            assertTrue(job.outcome().get(20, TimeUnit.SECONDS).isSuccess());
            JobReport rr = done.get(10, TimeUnit.SECONDS);
            assertEquals(n, rr.delivered());
            assertEquals(1, started.get());
            // channelReadComplete follows the batch that carried the last messages; the job notice
            // can come first
            // (polled: the test's timeout bounds it, not a shorter deadline of its own)
            while (readCompletes.get() < 1) {
                Thread.sleep(5);
            }
            synchronized (crcs) {
                assertEquals(n, crcs.size());
                for (int i = 0; i < n; i++) {
                    assertEquals(sent[i], crcs.get(i));
                    assertEquals(0, seen.get(i).refCnt(), "released by AtpMessageHandler");
                }
            }
            assertEquals(0, p.receiver.unreleasedMessages());
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void deliveredContentIsReadOnlyAndUnusableAfterRelease() throws Exception {
        CompletableFuture<AtpMessage> first = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        if (!first.complete(m)) {
                            m.release();
                        }
                    }
                };
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(cfg, cfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(1, 1.0));
            ByteBuf b = Unpooled.directBuffer(64).writeLong(0x1122334455667788L);
            job.send(0, 0, b);
            b.release();
            AtpMessage m = first.get(10, TimeUnit.SECONDS);
            assertNotNull(m);
            assertEquals(0x1122334455667788L, m.content().getLong(0));
            assertTrue(m.content().isReadOnly());
            org.junit.jupiter.api.Assertions.assertThrows(
                    java.nio.ReadOnlyBufferException.class, () -> m.content().setByte(0, 1));
            org.junit.jupiter.api.Assertions.assertThrows(
                    java.nio.ReadOnlyBufferException.class,
                    () -> m.content().nioBuffer().put(0, (byte) 1));
            assertEquals(1, p.receiver.unreleasedMessages());
            assertTrue(m.release());
            assertEquals(0, p.receiver.unreleasedMessages());
            org.junit.jupiter.api.Assertions.assertThrows(
                    io.netty.util.IllegalReferenceCountException.class,
                    () -> m.content().getLong(0));
            assertTrue(job.outcome().get(10, TimeUnit.SECONDS).isSuccess());
        }
    }
}
