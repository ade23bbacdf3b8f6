package io.netapprox.kafka.relay;

import io.netapprox.core.engine.OutgoingJob;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.job.Target;
import io.netapprox.core.transport.OutgoingTransfer;
import io.netapprox.core.transport.SendScheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Sends a segment's records as one ATP job: one group per cell that carries records (group id =
 * cell index, N_g = the cell's candidates, target = the cell's planned sample), one message per
 * record, the groups interleaved by {@link SendScheduler} so that all reach their targets together.
 * Within a group the records go in a random order, so whichever of them arrive (ATP stops at the
 * target and gives lost ones up instead of retransmitting them while the target can still be met)
 * are a simple random sample of the cell. MRDF is off: it would favour short records, and a
 * record's size may say something about its value.
 */
final class SegmentSender {
    /** Longest a message waits for send-buffer space (a consumer that stopped reading). */
    private static final long SEND_TIMEOUT_S = 60;

    private SegmentSender() {}

    static void send(OutgoingTransfer t, Segment seg, long seed, int deadlineMs)
            throws IOException {
        List<Cell> cells = seg.cells();
        List<List<SampledRecord>> byCell = new ArrayList<>(cells.size());
        for (int i = 0; i < cells.size(); i++) {
            byCell.add(new ArrayList<>(cells.get(i).sampled()));
        }
        for (SampledRecord r : seg.records()) {
            byCell.get(r.cell()).add(r);
        }
        JobSpec.Builder js = JobSpec.builder().mrdf(false);
        if (deadlineMs > 0) {
            js.deadline(Duration.ofMillis(deadlineMs));
        }
        List<List<SampledRecord>> groups = new ArrayList<>();
        for (int i = 0; i < cells.size(); i++) {
            Cell c = cells.get(i);
            List<SampledRecord> rs = byCell.get(i);
            if (rs.size() != c.sampled()) {
                throw new IllegalStateException(
                        "cell " + i + " lists " + c.sampled() + " records, has " + rs.size());
            }
            if (rs.isEmpty()) {
                continue;
            }
            shuffle(rs, random(seed, seg, i));
            js.addGroup(i, rs.size(), msr(c.target(), rs.size()));
            groups.add(rs);
        }
        JobSpec spec = js.build();
        OutgoingJob job = t.reply(RelayProtocol.header(seg)).startJob(spec);
        new SendScheduler(spec)
                .sendAll(
                        job,
                        (g, i, out) -> RelayProtocol.writeRecord(groups.get(g).get(i), out),
                        SEND_TIMEOUT_S,
                        TimeUnit.SECONDS);
    }

    /** An MSR whose target over {@code n} messages is exactly {@code target}. */
    static double msr(int target, int n) {
        if (target >= n) {
            return 1.0;
        }
        double m = (double) target / n;
        for (int i = 0; i < 64 && Target.of(m, n) > target; i++) {
            m = Math.nextDown(m);
        }
        for (int i = 0; i < 64 && Target.of(m, n) < target; i++) {
            m = Math.nextUp(m);
        }
        if (Target.of(m, n) != target) {
            throw new IllegalStateException("no MSR gives a target of " + target + " of " + n);
        }
        return m;
    }

    private static SplittableRandom random(long seed, Segment seg, int cell) {
        long h = seed;
        h =
                h * 0x9E3779B97F4A7C15L
                        + Objects.hash(seg.partition().topic(), seg.partition().partition());
        h = h * 0x9E3779B97F4A7C15L + seg.from();
        h = h * 0x9E3779B97F4A7C15L + cell;
        return new SplittableRandom(h ^ 0x5DEECE66DL);
    }

    private static void shuffle(List<SampledRecord> rs, SplittableRandom rnd) {
        for (int i = rs.size() - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            SampledRecord t = rs.get(i);
            rs.set(i, rs.get(j));
            rs.set(j, t);
        }
    }
}
