package io.netapprox.benchmarks;

import io.netapprox.core.engine.SendBatch;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Goodput of the Java API for large messages (default 64 KiB, MSR 1) between two endpoints of this
 * JVM over 127.0.0.1, with the engine configured like {@code atp-perf demo}.
 *
 * <p>One invocation = one job of {@link #MESSAGES_PER_JOB} messages (64 MiB at 64 KiB) on a
 * long-lived session, until the sender's outcome and the receiver's final report are in. The
 * primary score is messages per second; the secondary metrics {@code gbits} (Gbit/s of payload,
 * what atp-perf calls goodput) and {@code payloadBytes} (bytes/s) come from {@link Payload}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xmx1g"})
public class GoodputBenchmark {
    public static final int MESSAGES_PER_JOB = 1024;

    @Param({"65536"})
    public int size;

    /** Messages per {@link SendBatch} in {@link #sendBatch}. */
    @Param({"16"})
    public int batchSize;

    /** Payload delivered, reported by JMH as rates (per second) next to the message rate. */
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    @State(Scope.Thread)
    public static class Payload {
        /** Gigabits of payload (so the rate is Gbit/s). */
        public double gbits;

        /** Bytes of payload (so the rate is bytes/s). */
        public long payloadBytes;

        @Setup(Level.Iteration)
        public void reset() {
            gbits = 0;
            payloadBytes = 0;
        }

        void add(LoopbackPair.JobTiming t) {
            long b = (long) t.receiver.delivered() * t.size;
            payloadBytes += b;
            gbits += b * 8 / 1e9;
        }
    }

    private LoopbackPair pair;
    private ByteBuf message;
    private ByteBuffer slab;
    private SendBatch batch;

    @Setup(Level.Trial)
    public void setUp() {
        pair = new LoopbackPair(LoopbackPair.perfToolConfig().build());
        message = LoopbackPair.patternMessage(size);
        slab = LoopbackPair.patternSlab(batchSize, size);
        batch = new SendBatch(batchSize);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
        message.release();
    }

    /** One {@code OutgoingJob.send(group, index, ByteBuf)} per message. */
    @Benchmark
    @OperationsPerInvocation(MESSAGES_PER_JOB)
    public long send(Payload payload) throws Exception {
        LoopbackPair.JobTiming t = pair.runJobSingle(MESSAGES_PER_JOB, message);
        payload.add(t);
        return t.senderJctNanos;
    }

    /** {@code OutgoingJob.send(SendBatch)} with {@code batchSize} messages per crossing. */
    @Benchmark
    @OperationsPerInvocation(MESSAGES_PER_JOB)
    public long sendBatch(Payload payload) throws Exception {
        LoopbackPair.JobTiming t = pair.runJobBatched(MESSAGES_PER_JOB, size, slab, batch);
        payload.add(t);
        return t.senderJctNanos;
    }
}
