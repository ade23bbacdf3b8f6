package io.netapprox.core.transport;

import io.netapprox.core.engine.AtpJobFailedException;
import io.netapprox.core.engine.AtpSession;
import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.engine.SendResult;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Is a peer reachable over UDP? The connecting side sends a one-message exact job (id {@value
 * #JOB_ID}, never a transfer's: requested jobs have ids from 1, pushed ones bit 31 set) on the new
 * ATP session. It completes only when the message reached the peer and the peer's DONE came back,
 * so both directions of the UDP path (and both engines' view of the session key and addresses) are
 * tested; no answer within the timeout means the path drops UDP.
 */
final class UdpProbe {
    /** The probe's job id on every session. */
    static final int JOB_ID = 0;

    /** Schedules a task (the transport's timer). */
    interface Timer {
        ScheduledFuture<?> schedule(Runnable r, long delay, TimeUnit unit);
    }

    private UdpProbe() {}

    /**
     * Probes {@code session}; the future completes with null when the peer answered within {@code
     * timeout}, else with why not (never exceptionally).
     */
    static CompletableFuture<String> run(AtpSession session, Duration timeout, Timer timer) {
        if (session == null || !session.isOpen()) {
            return CompletableFuture.completedFuture("the ATP session is not open");
        }
        OutgoingJob job;
        try {
            job = session.startJob(JobSpec.of(1, 1.0).withJobId(JOB_ID));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(
                    "the UDP probe could not start: " + e.getMessage());
        }
        ByteBuf one = Unpooled.directBuffer(1).writeByte('p');
        try {
            if (job.trySend(0, 0, one) != SendResult.ACCEPTED) {
                job.cancel();
                return CompletableFuture.completedFuture("the UDP probe could not be sent");
            }
        } catch (RuntimeException e) {
            job.cancel();
            return CompletableFuture.completedFuture(
                    "the UDP probe could not be sent: " + e.getMessage());
        } finally {
            one.release();
        }
        long ms = Math.max(1, timeout.toMillis());
        CompletableFuture<String> result = new CompletableFuture<>();
        ScheduledFuture<?> t =
                timer.schedule(
                        () -> {
                            if (result.complete(
                                    "no answer over UDP within "
                                            + ms
                                            + " ms (udpProbeTimeout) from "
                                            + session.peer())) {
                                job.cancel();
                            }
                        },
                        ms,
                        TimeUnit.MILLISECONDS);
        job.outcome()
                .whenComplete(
                        (r, e) -> {
                            if (t != null) {
                                t.cancel(false);
                            }
                            Throwable c = e == null ? null : Errors.unwrap(e);
                            result.complete(
                                    c == null
                                            ? null
                                            : "the UDP probe failed: "
                                                    + (c instanceof AtpJobFailedException f
                                                            ? f.status()
                                                            : String.valueOf(c)));
                        });
        if (t == null) { // the transport is closing
            result.complete("the transport is closing");
        }
        return result;
    }
}
