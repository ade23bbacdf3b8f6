package io.netapprox.benchmarks;

import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.AtpEndpoint;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.AtpMode;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.IncomingJobListener;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendBatch;
import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Two {@link AtpEndpoint}s in this JVM on 127.0.0.1 and one session between them: the sender's
 * {@link AtpSession} and a receiver that counts and releases every delivered message (what {@code
 * atp-perf demo}'s receiver does).
 *
 * <p>{@link #runJob} moves one job of {@code n} messages of {@code size} bytes, MSR 1, and returns
 * when both the sender's outcome (every message acknowledged) and the receiver's final report are
 * in.
 */
final class LoopbackPair implements AutoCloseable {
    /**
     * A pooled direct message of {@code size} bytes filled with the perf tool's byte pattern;
     * caller releases.
     */
    static ByteBuf patternMessage(int size) {
        ByteBuf message = PooledByteBufAllocator.DEFAULT.directBuffer(size, size);
        for (int i = 0; i < size; i++) {
            message.writeByte(i * 131 + 7);
        }
        return message;
    }

    /**
     * A direct slab of {@code count} consecutive messages of {@code size} bytes, each with the same
     * pattern.
     */
    static ByteBuffer patternSlab(int count, int size) {
        ByteBuffer slab = ByteBuffer.allocateDirect(count * size);
        for (int i = 0; i < slab.capacity(); i++) {
            slab.put(i, (byte) ((i % size) * 131 + 7));
        }
        return slab;
    }

    /**
     * The engine configuration {@code atp-perf demo} uses ({@code make_config} in
     * native/tools/atp_perf.cpp): R_max 10 Gbit/s, 1472-byte datagrams, mode full, 16 MiB socket
     * buffers, peer death after 10 s; everything else at the C API defaults (which the Java
     * defaults equal).
     */
    static AtpConfig.Builder perfToolConfig() {
        return AtpConfig.builder()
                .bindAddress("127.0.0.1")
                .bindPort(0)
                .lineRateBps(10_000_000_000L)
                .maxDatagram(1472)
                .mode(AtpMode.FULL)
                .socketBufferBytes(16 << 20)
                .peerDeathTimeout(Duration.ofSeconds(10));
    }

    /** Result of one job: wall-clock times (System.nanoTime) and the two reports. */
    static final class JobTiming {
        final int messages;
        final int size;

        /**
         * From just after {@code startJob} returned (atp-perf's t0) to the sender's outcome
         * (atp-perf's JCT).
         */
        final long senderJctNanos;

        /** From just after {@code startJob} returned to the receiver's final report. */
        final long receiverDoneNanos;

        final JobReport sender;
        final JobReport receiver;
        final long receivedBytes;

        JobTiming(
                int messages,
                int size,
                long senderJctNanos,
                long receiverDoneNanos,
                JobReport sender,
                JobReport receiver,
                long receivedBytes) {
            this.messages = messages;
            this.size = size;
            this.senderJctNanos = senderJctNanos;
            this.receiverDoneNanos = receiverDoneNanos;
            this.sender = sender;
            this.receiver = receiver;
            this.receivedBytes = receivedBytes;
        }

        /**
         * Delivered payload (receiver's report, = all messages) / sender JCT, like atp-perf's
         * goodput_gbps.
         */
        double goodputGbps() {
            return (double) receiver.delivered() * size * 8.0 / senderJctNanos;
        }

        double messagesPerSecond() {
            return receiver.delivered() * 1e9 / senderJctNanos;
        }

        /**
         * Non-empty when the sender's report disagrees with the receiver's (seen with the native
         * tool too: an MSR 1 job reported OK by both ends whose sender report counts some messages
         * as lost).
         */
        String senderReportAnomaly() {
            if (sender.delivered() == receiver.delivered() && sender.lost() == 0) {
                return "";
            }
            return "sender report: delivered "
                    + sender.delivered()
                    + ", lost "
                    + sender.lost()
                    + " (receiver: delivered "
                    + receiver.delivered()
                    + ")";
        }
    }

    /**
     * Counts delivered messages/bytes (only the event thread writes) and hands out receiver reports
     * by job id.
     */
    static final class CountingListener implements IncomingJobListener {
        volatile long messages;
        volatile long bytes;
        final ConcurrentHashMap<Integer, CompletableFuture<Stamped>> done =
                new ConcurrentHashMap<>();

        @Override
        public void onMessage(AtpMessage m) {
            try {
                bytes += m.content().readableBytes(); // single writer: the endpoint's event thread
                messages++;
            } finally {
                m.release();
            }
        }

        @Override
        public void onJobDone(AtpSession s, JobReport r) {
            long t = System.nanoTime();
            future(r.jobId()).complete(new Stamped(r, t));
        }

        CompletableFuture<Stamped> future(int jobId) {
            return done.computeIfAbsent(jobId, k -> new CompletableFuture<>());
        }
    }

    static final class Stamped {
        final JobReport report;
        final long nanoTime;

        Stamped(JobReport report, long nanoTime) {
            this.report = report;
            this.nanoTime = nanoTime;
        }
    }

    final AtpEndpoint sender;
    final AtpEndpoint receiver;
    final CountingListener listener = new CountingListener();
    private AtpSession out;
    private AtpSession in;

    LoopbackPair(AtpConfig config) {
        AtpEndpoint s = AtpEndpoint.open(config);
        AtpEndpoint r;
        try {
            r = AtpEndpoint.open(config);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        sender = s;
        receiver = r;
        newSession();
    }

    /**
     * Closes the current session (if any) and opens a fresh one, so the next job starts from the
     * engine's initial rate and RTT estimates, as each {@code atp-perf demo} process does.
     */
    void newSession() {
        if (out != null) {
            out.close();
            in.close();
            listener.done.clear();
        }
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long sid = rnd.nextLong();
        byte[] key = new byte[32];
        rnd.nextBytes(key);
        out =
                sender.openSession(
                        sid, key, new InetSocketAddress("127.0.0.1", receiver.localPort()), true);
        in =
                receiver.openSession(
                        sid,
                        key,
                        new InetSocketAddress("127.0.0.1", sender.localPort()),
                        false,
                        listener);
    }

    AtpSession session() {
        return out;
    }

    /**
     * Stamps message id {@code id} into the first 4 bytes of buf (as atp-perf does) without moving
     * its indexes.
     */
    static void stamp(ByteBuf buf, int offset, int id) {
        if (buf.readableBytes() >= 4) {
            buf.setIntLE(offset, id);
        }
    }

    /**
     * One job, MSR 1, one group, single {@code send} per message from {@code msg} (its readable
     * bytes are the message; the first 4 bytes are overwritten with the message id).
     */
    JobTiming runJobSingle(int n, ByteBuf msg) throws Exception {
        OutgoingJob job = out.startJob(JobSpec.of(n, 1.0));
        long t0 = System.nanoTime();
        long bytes0 = listener.bytes;
        CompletableFuture<Long> senderDone = job.outcome().thenApply(r -> System.nanoTime());
        submitSingle(job, n, msg);
        return finish(job, n, msg.readableBytes(), t0, bytes0, senderDone);
    }

    /**
     * One job, MSR 1, one group, sent in batches of up to {@code batch.capacity()} messages (see
     * {@link #submitBatched}).
     */
    JobTiming runJobBatched(int n, int size, ByteBuffer slab, SendBatch batch) throws Exception {
        OutgoingJob job = out.startJob(JobSpec.of(n, 1.0));
        long t0 = System.nanoTime();
        long bytes0 = listener.bytes;
        CompletableFuture<Long> senderDone = job.outcome().thenApply(r -> System.nanoTime());
        submitBatched(job, n, size, slab, batch);
        return finish(job, n, size, t0, bytes0, senderDone);
    }

    /**
     * Messages 0..n-1 of group 0, one {@code send} each, from {@code msg} (first 4 bytes = message
     * id).
     */
    static void submitSingle(OutgoingJob job, int n, ByteBuf msg) {
        int ri = msg.readerIndex();
        for (int i = 0; i < n; i++) {
            stamp(msg, ri, i);
            SendResult r = job.send(0, i, msg);
            if (r != SendResult.ACCEPTED) {
                throw new IllegalStateException("message " + i + ": " + r);
            }
        }
    }

    /**
     * Messages 0..n-1 of group 0 in batches of up to {@code batch.capacity()}: {@code slab}
     * (direct) holds that many messages of {@code size} bytes back to back, each stamped with its
     * id before it is added. Allocation-free.
     */
    static void submitBatched(OutgoingJob job, int n, int size, ByteBuffer slab, SendBatch batch) {
        int cap = batch.capacity();
        ByteBuffer view = slab.duplicate();
        for (int i = 0; i < n; ) {
            int k = Math.min(cap, n - i);
            for (int j = 0; j < k; j++) {
                int off = j * size;
                if (size >= 4) {
                    slab.putInt(off, i + j);
                }
                view.clear().position(off).limit(off + size);
                batch.add(0, i + j, view);
            }
            SendResult r = job.send(batch);
            if (r != SendResult.ACCEPTED) {
                throw new IllegalStateException("batch at " + i + ": " + r);
            }
            i += k;
        }
    }

    /** Waits for a job's sender outcome and receiver report; returns the receiver's report. */
    JobReport await(OutgoingJob job) throws Exception {
        JobReport sr = job.outcome().get(120, TimeUnit.SECONDS);
        CompletableFuture<Stamped> rf = listener.future(job.id());
        Stamped rr = rf.get(30, TimeUnit.SECONDS);
        listener.done.remove(job.id(), rf);
        if (!sr.isSuccess() || !rr.report.isSuccess()) {
            throw new IllegalStateException(
                    "job " + job.id() + " incomplete: sender " + sr + ", receiver " + rr.report);
        }
        return rr.report;
    }

    private JobTiming finish(
            OutgoingJob job,
            int n,
            int size,
            long t0,
            long bytes0,
            CompletableFuture<Long> senderDone)
            throws InterruptedException, ExecutionException, TimeoutException {
        JobReport sr = job.outcome().get(120, TimeUnit.SECONDS);
        long t1 = senderDone.get(10, TimeUnit.SECONDS);
        CompletableFuture<Stamped> rf = listener.future(job.id());
        Stamped rr = rf.get(30, TimeUnit.SECONDS);
        listener.done.remove(job.id(), rf);
        // The receiver's report is authoritative for what arrived (the sender's counts are checked
        // by the callers).
        if (!sr.isSuccess() || !rr.report.isSuccess() || rr.report.delivered() != n) {
            throw new IllegalStateException(
                    "job " + job.id() + " incomplete: sender " + sr + ", receiver " + rr.report);
        }
        // The receiver's report is dispatched after its messages (same event thread, engine order).
        long received = listener.bytes - bytes0;
        if (received != (long) n * size) {
            throw new IllegalStateException(
                    "job "
                            + job.id()
                            + ": listener saw "
                            + received
                            + " bytes, expected "
                            + (long) n * size);
        }
        return new JobTiming(n, size, t1 - t0, rr.nanoTime - t0, sr, rr.report, received);
    }

    @Override
    public void close() {
        try {
            sender.close();
        } finally {
            receiver.close();
        }
    }
}
