package io.netapprox.core.transport;

import static io.netapprox.core.transport.TransportTestSupport.LIVENESS_MS;
import static io.netapprox.core.transport.TransportTestSupport.atp;
import static io.netapprox.core.transport.TransportTestSupport.config;
import static io.netapprox.core.transport.TransportTestSupport.control;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendResult;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The TCP data plane's bounded memory: a listener that holds its messages makes the receiving
 * connection stop reading once it holds the receive buffer, TCP's own window then stops the sender,
 * and the sender blocks instead of queueing; once the listener releases, the job completes. The
 * counterpart of the engine's {@code BackpressureTest}.
 */
class TcpBackpressureTest {

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void heldMessagesStopTheConnectionAndTheSenderAndMemoryStaysBounded() throws Exception {
        int size = 64 * 1024;
        int n = 512; // 32 MiB in total
        long recvBuffer = 1L << 20;
        AtomicInteger sent = new AtomicInteger();
        CompletableFuture<Throwable> served = new CompletableFuture<>();
        DataRequestHandler handler =
                request -> {
                    OutgoingJob job =
                            request.startJob(TransportTestSupport.spec(request.payload()));
                    ByteBuf b = Unpooled.directBuffer(size).writeZero(size);
                    try {
                        for (int i = 0; i < n; i++) {
                            if (job.send(0, i, b, LIVENESS_MS, TimeUnit.MILLISECONDS)
                                    != SendResult.ACCEPTED) {
                                break;
                            }
                            sent.incrementAndGet();
                        }
                        served.complete(null);
                    } catch (Throwable t) {
                        served.complete(t);
                    } finally {
                        b.release();
                    }
                };
        ConcurrentLinkedQueue<AtpMessage> held = new ConcurrentLinkedQueue<>();
        AtomicLong heldBytes = new AtomicLong();
        try (ApproxTransport server =
                        ApproxTransport.start(
                                config(atp().build(), control().build(), DataPlaneMode.TCP).build(),
                                handler);
                ApproxTransport client =
                        ApproxTransport.start(
                                config(
                                                atp().recvBufferBytes(recvBuffer).build(),
                                                control().build(),
                                                DataPlaneMode.TCP)
                                        .serverEnabled(false)
                                        .build())) {
            ApproxPeer peer =
                    client.connect(server.controlAddress()).get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            IncomingTransfer in =
                    peer.request(
                            TransportTestSupport.request(
                                    size, new long[] {1}, new int[] {n}, new double[] {1.0}),
                            (t, m) -> {
                                held.add(m); // not released
                                heldBytes.addAndGet(m.content().readableBytes());
                            });
            TcpDataPlane rx = client.planes().tcp();
            TransportTestSupport.eventually(
                    "the receiver stops reading and the sender stalls",
                    LIVENESS_MS,
                    () ->
                            client.dataPlaneMetrics().tcpReadPauses() > 0
                                    && server.dataPlaneMetrics().tcpSendStalls() > 0);
            // While held: the sender stays stuck (it has not sent the job) and the receiver holds
            // about its buffer: the budget plus what one read had already taken in.
            int sentWhileHeld = sent.get();
            Thread.sleep(300);
            long charged = rx.sessions().get(0).heldBytes();
            System.out.printf(
                    "held %d messages (%d bytes, %d charged) with a %d-byte receive buffer; sender at"
                            + " %d of %d%n",
                    held.size(), heldBytes.get(), charged, recvBuffer, sent.get(), n);
            assertTrue(sent.get() < n, "the sender is blocked: " + sent.get());
            assertTrue(
                    charged <= 3 * recvBuffer,
                    "held " + charged + " bytes with a " + recvBuffer + "-byte buffer");
            assertTrue(sentWhileHeld <= sent.get());
            assertTrue(!served.isDone(), "the serving thread waits in send()");

            // Release: reading resumes, the job completes with every message.
            int delivered = 0;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LIVENESS_MS);
            while (!in.report().isDone() && System.nanoTime() < deadline) {
                AtpMessage m = held.poll();
                if (m == null) {
                    Thread.sleep(1);
                    continue;
                }
                delivered++;
                m.release();
            }
            TransferReport r = in.report().get(LIVENESS_MS, TimeUnit.MILLISECONDS);
            for (AtpMessage m = held.poll(); m != null; m = held.poll()) {
                delivered++;
                m.release();
            }
            assertEquals(n, r.delivered());
            assertEquals(n, delivered);
            assertEquals(null, served.get(LIVENESS_MS, TimeUnit.MILLISECONDS));
            assertEquals(n, sent.get());
            assertEquals(0, TransportTestSupport.unreleased(client));
            assertEquals(0, rx.sessions().get(0).heldBytes(), "every charge returned");
        }
    }
}
