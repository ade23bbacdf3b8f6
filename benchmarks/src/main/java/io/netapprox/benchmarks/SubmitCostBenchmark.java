package io.netapprox.benchmarks;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendBatch;
import io.netapprox.core.job.JobSpec;
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
 * The submit side alone: what one {@code send} (or one message of a {@link SendBatch}) costs the
 * calling thread, i.e. the Java API's own per-message overhead (argument checks, the JNI crossing,
 * the engine's lock and copy into its send buffer), without waiting for the network.
 *
 * <p>One invocation (single shot) = submitting the {@link #MESSAGES_PER_JOB} 100-byte messages of a
 * job that was started in the per-invocation setup; the per-invocation teardown waits until the job
 * was delivered, so every invocation starts with an empty send buffer (20,000 x 100 B fit in the
 * default 64 MiB). The engine's I/O thread transmits concurrently (it shares the 2 cores), so this
 * is the cost under load, in ns per message.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 20)
@Measurement(iterations = 20)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xmx1g"})
public class SubmitCostBenchmark {
    public static final int MESSAGES_PER_JOB = 20_000;

    @Param({"100"})
    public int size;

    @Param({"64"})
    public int batchSize;

    private LoopbackPair pair;
    private ByteBuf message;
    private ByteBuffer slab;
    private SendBatch batch;
    private OutgoingJob job;

    @Setup(Level.Trial)
    public void setUp() {
        pair = new LoopbackPair(LoopbackPair.perfToolConfig().build());
        message = LoopbackPair.patternMessage(size);
        slab = ByteBuffer.allocateDirect(batchSize * size);
        batch = new SendBatch(batchSize);
    }

    @Setup(Level.Invocation)
    public void startJob() {
        job = pair.session().startJob(JobSpec.of(MESSAGES_PER_JOB, 1.0));
    }

    @TearDown(Level.Invocation)
    public void awaitJob() throws Exception {
        pair.await(job);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pair.close();
        message.release();
    }

    /** {@code OutgoingJob.send(group, index, ByteBuf)} per message. */
    @Benchmark
    @OperationsPerInvocation(MESSAGES_PER_JOB)
    public void send() {
        LoopbackPair.submitSingle(job, MESSAGES_PER_JOB, message);
    }

    /**
     * {@code OutgoingJob.send(SendBatch)} of {@code batchSize} messages per JNI crossing (incl.
     * filling it).
     */
    @Benchmark
    @OperationsPerInvocation(MESSAGES_PER_JOB)
    public void sendBatch() {
        LoopbackPair.submitBatched(job, MESSAGES_PER_JOB, size, slab, batch);
    }
}
