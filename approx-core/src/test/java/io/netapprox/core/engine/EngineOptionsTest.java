package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code coalesceMessages}, {@code wireOverheadBytes} and {@code maxReportRanges}: validated with
 * messages naming the field, kept by {@code toBuilder}, and reaching the engine.
 */
class EngineOptionsTest {
    private static final int N = 400;
    private static final int SIZE = 100;

    @Test
    void defaultsMatchTheEngine() {
        AtpConfig c = AtpConfig.builder().build();
        assertTrue(c.coalesceMessages());
        assertEquals(AtpConfig.DEFAULT_WIRE_OVERHEAD_BYTES, c.wireOverheadBytes());
        assertEquals(42, c.wireOverheadBytes());
        assertEquals(65536, c.maxReportRanges());
        assertEquals(0.75, c.needyClass0Fraction());
    }

    @Test
    void badValuesAreRefusedNamingTheField() {
        assertRefused(b -> b.wireOverheadBytes(-1), "wireOverheadBytes");
        assertRefused(b -> b.wireOverheadBytes(1025), "wireOverheadBytes");
        assertRefused(b -> b.maxReportRanges(-1), "maxReportRanges");
        assertRefused(
                b -> b.maxReportRanges(AtpConfig.MAX_REPORT_RANGES_LIMIT + 1), "maxReportRanges");
        assertRefused(b -> b.needyClass0Fraction(-0.1), "needyClass0Fraction");
        assertRefused(b -> b.needyClass0Fraction(1.1), "needyClass0Fraction");
        assertRefused(b -> b.needyClass0Fraction(Double.NaN), "needyClass0Fraction");
        // the bounds themselves are fine
        AtpConfig c =
                AtpConfig.builder()
                        .wireOverheadBytes(AtpConfig.IPV6_WIRE_OVERHEAD_BYTES)
                        .maxReportRanges(AtpConfig.MAX_REPORT_RANGES_LIMIT)
                        .coalesceMessages(false)
                        .needyClass0Fraction(0)
                        .build();
        AtpConfig copy = c.toBuilder().build();
        assertEquals(62, copy.wireOverheadBytes());
        assertEquals(AtpConfig.MAX_REPORT_RANGES_LIMIT, copy.maxReportRanges());
        assertFalse(copy.coalesceMessages());
        assertEquals(0.0, copy.needyClass0Fraction());
    }

    private static void assertRefused(UnaryOperator<AtpConfig.Builder> bad, String field) {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> bad.apply(AtpConfig.builder()).build());
        assertTrue(e.getMessage().contains(field), e.getMessage());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void coalesceOffSendsOneDatagramPerSmallMessage() throws Exception {
        AtpConfig off = EngineTestSupport.loopback().coalesceMessages(false).build();
        Result plain = transfer(off, off);
        AtpConfig on = EngineTestSupport.loopback().build();
        Result bundled = transfer(on, on);
        assertEquals(N, plain.report.delivered());
        assertEquals(N, bundled.report.delivered());
        assertTrue(
                plain.senderDatagrams >= N, "one datagram per message: " + plain.senderDatagrams);
        // How many messages share a datagram depends on scheduling (the I/O thread may send
        // before the next submit); fewer datagrams than one per message is the promise.
        assertTrue(
                bundled.senderDatagrams < plain.senderDatagrams,
                "bundled " + bundled.senderDatagrams + " vs plain " + plain.senderDatagrams);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void maxReportRangesZeroListsCountsOnly() throws Exception {
        AtpConfig sender = EngineTestSupport.loopback().build();
        Result none = transfer(sender, EngineTestSupport.loopback().maxReportRanges(0).build());
        Result listed = transfer(sender, EngineTestSupport.loopback().build());
        assertEquals(N, none.report.delivered());
        assertFalse(none.report.groups().get(0).listsIds(), "no ids within 0 ranges");
        assertTrue(listed.report.groups().get(0).listsIds());
        assertEquals(N, listed.report.groups().get(0).deliveredIds().cardinality());
    }

    private static final class Result {
        JobReport report;
        long senderDatagrams;
    }

    private static Result transfer(AtpConfig senderCfg, AtpConfig receiverCfg) throws Exception {
        CompletableFuture<JobReport> done = new CompletableFuture<>();
        IncomingJobListener l =
                new IncomingJobListener() {
                    @Override
                    public void onMessage(AtpMessage m) {
                        m.release();
                    }

                    @Override
                    public void onJobDone(AtpSession s, JobReport r) {
                        done.complete(r);
                    }
                };
        Result r = new Result();
        try (EngineTestSupport.Pair p = new EngineTestSupport.Pair(senderCfg, receiverCfg, l)) {
            OutgoingJob job = p.out.startJob(JobSpec.of(N, 1.0));
            ByteBuf buf = Unpooled.directBuffer(SIZE);
            try {
                for (int i = 0; i < N; i++) {
                    TestPayloads.fill(buf, i, SIZE);
                    assertEquals(SendResult.ACCEPTED, job.send(0, i, buf));
                }
            } finally {
                buf.release();
            }
            assertTrue(job.outcome().get(30, TimeUnit.SECONDS).isSuccess());
            r.report = done.get(10, TimeUnit.SECONDS);
            r.senderDatagrams = p.sender.stats().get("datagrams_out");
        }
        return r;
    }
}
