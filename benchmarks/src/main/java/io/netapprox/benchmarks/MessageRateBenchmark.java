package io.netapprox.benchmarks;

import io.netapprox.core.engine.SendBatch;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
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
 * Per-message cost of the Java API, end to end: send and receive of small messages (default 100
 * bytes, MSR 1) between two endpoints of this JVM over 127.0.0.1.
 *
 * <p>One invocation = one job of {@link #MESSAGES_PER_JOB} messages on a long-lived session: {@code
 * startJob}, every message sent ({@code send} per message, or {@link SendBatch}es of {@code
 * batchSize}), then waiting for the sender's outcome (all acknowledged) and the receiver's final
 * report (all delivered, counted, released). A score is therefore messages per second ({@code
 * thrpt}) or nanoseconds per message ({@code -bm avgt -tu ns}), including the job's start and its
 * last round trip amortised over 20,000 messages.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xmx1g"})
public class MessageRateBenchmark {
    public static final int MESSAGES_PER_JOB = 20_000;

    /** Message size in bytes. */
    @Param({"100"})
    public int size;

    /** Messages per {@link SendBatch} (one JNI crossing) in {@link #sendBatch()}. */
    @Param({"64"})
    public int batchSize;

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

    /** One {@code OutgoingJob.send(group, index, ByteBuf)} per message (one JNI crossing each). */
    @Benchmark
    @OperationsPerInvocation(MESSAGES_PER_JOB)
    public long send() throws Exception {
        return pair.runJobSingle(MESSAGES_PER_JOB, message).senderJctNanos;
    }

    /** {@code OutgoingJob.send(SendBatch)}: {@code batchSize} messages per JNI crossing. */
    @Benchmark
    @OperationsPerInvocation(MESSAGES_PER_JOB)
    public long sendBatch() throws Exception {
        return pair.runJobBatched(MESSAGES_PER_JOB, size, slab, batch).senderJctNanos;
    }
}
