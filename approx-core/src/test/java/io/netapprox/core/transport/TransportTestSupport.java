package io.netapprox.core.transport;

import static io.netapprox.core.engine.TestPayloads.fill;

import io.netapprox.core.control.ControlConfig;
import io.netapprox.core.engine.AtpConfig;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/** Loopback configs, a test "catalog" protocol (the payload is a job spec) and resource probes. */
final class TransportTestSupport {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private TransportTestSupport() {}

    static AtpConfig.Builder atp() {
        return ApproxTransportConfig.defaultAtp()
                .bindAddress("127.0.0.1")
                .lineRateBps(40_000_000_000L);
    }

    static ControlConfig.Builder control() {
        return ControlConfig.builder()
                .bindAddress(LOOPBACK)
                .port(0)
                .shutdownTimeout(Duration.ofSeconds(2))
                .requestTimeout(Duration.ofSeconds(10));
    }

    static ApproxTransportConfig.Builder config(AtpConfig atp, ControlConfig control) {
        return ApproxTransportConfig.builder().atp(atp).control(control).serveThreads(2);
    }

    /** A transport config on one data plane (the tests run the same transfers on both). */
    static ApproxTransportConfig.Builder config(
            AtpConfig atp, ControlConfig control, DataPlaneMode plane) {
        return config(atp, control).dataPlane(plane);
    }

    /** Data-plane sessions of a transport, either plane (peers being set up or set up). */
    static int sessions(ApproxTransport t) {
        return t.planes().sessionCount();
    }

    /** No session left anywhere: the transport's peers, its data planes and the engine. */
    static boolean noSessions(ApproxTransport t) {
        TcpDataPlane tcp = t.planes().tcp();
        return t.peers().isEmpty()
                && t.planes().sessionCount() == 0
                && (t.dataPlane() == null || t.dataPlane().sessionCount() == 0)
                && (t.endpoint() == null || t.endpoint().sessions().isEmpty())
                && (tcp == null || tcp.sessionCount() == 0);
    }

    /** Delivered messages not yet released, either plane. */
    static long unreleased(ApproxTransport t) {
        TcpDataPlane tcp = t.planes().tcp();
        return (t.endpoint() != null ? t.endpoint().unreleasedMessages() : 0)
                + (tcp != null ? tcp.metrics().heldMessages.get() : 0);
    }

    /**
     * The integration-defined request of the tests: "send me this job", message size + groups (id,
     * N, MSR).
     */
    static byte[] request(int messageBytes, long[] groupIds, int[] sizes, double[] msrs) {
        ByteBuffer b = ByteBuffer.allocate(8 + groupIds.length * 20);
        b.putInt(messageBytes).putInt(groupIds.length);
        for (int i = 0; i < groupIds.length; i++) {
            b.putLong(groupIds[i]).putInt(sizes[i]).putDouble(msrs[i]);
        }
        return b.array();
    }

    static int messageBytes(byte[] request) {
        return ByteBuffer.wrap(request).getInt();
    }

    static JobSpec spec(byte[] request) {
        ByteBuffer b = ByteBuffer.wrap(request);
        b.getInt();
        int n = b.getInt();
        JobSpec.Builder s = JobSpec.builder();
        for (int i = 0; i < n; i++) {
            s.addGroup(b.getLong(), b.getInt(), b.getDouble());
        }
        return s.build();
    }

    /**
     * Sends every message of {@code job} in group order (stopping a group at NOT_NEEDED); {@code
     * pause} runs before message {@code pauseAt} of group 0 (-1: never).
     */
    static void sendAll(OutgoingJob job, int messageBytes, int pauseAt, Runnable pause) {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(messageBytes, messageBytes);
        try {
            int base = 0;
            List<io.netapprox.core.job.GroupSpec> groups = job.spec().groups();
            for (int g = 0; g < groups.size(); g++) {
                int n = groups.get(g).size();
                for (int i = 0; i < n; i++) {
                    if (g == 0 && i == pauseAt) {
                        pause.run();
                    }
                    fill(buf, base + i, messageBytes);
                    if (job.send(g, i, buf, 20, TimeUnit.SECONDS) == SendResult.NOT_NEEDED) {
                        break;
                    }
                }
                base += n;
            }
        } finally {
            buf.release();
        }
    }

    /**
     * The least a test waits for something that must happen. It bounds a failing test only (a
     * passing one returns as soon as the thing happens); shorter bounds (1-10 s) were within reach
     * of a loaded 2-core CI machine.
     */
    static final long LIVENESS_MS = 30_000;

    static Throwable failure(CompletableFuture<?> f, long timeoutMs) throws Exception {
        try {
            f.get(Math.max(timeoutMs, LIVENESS_MS), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        }
        throw new AssertionError("expected a failure, got a result");
    }

    static void eventually(String what, long timeoutMs, BooleanSupplier cond)
            throws InterruptedException {
        long deadline = System.nanoTime() + Math.max(timeoutMs, LIVENESS_MS) * 1_000_000L;
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for: " + what);
            }
            Thread.sleep(10);
        }
    }

    static long openFds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static long threads() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            return s.count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Live threads whose name starts with one of the transport's prefixes. */
    static List<String> transportThreads() {
        List<String> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String n = t.getName();
            if (t.isAlive()
                    && (n.startsWith("netapprox-ctl")
                            || n.startsWith("netapprox-serve")
                            || n.startsWith("netapprox-transport")
                            || n.startsWith("netapprox-events"))) {
                out.add(n);
            }
        }
        return out;
    }
}
