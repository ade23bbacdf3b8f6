package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.DataPlaneKind;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.JobReport;
import org.junit.jupiter.api.Test;

/**
 * A served transfer's counters are complete only once both its serving thread has counted what it
 * submitted and the transfer has ended with the sender's engine report; until then they count as no
 * transfer, so the reducer reports them missing instead of adding a partial number silently
 * (before: a count read before the serving thread had set it was added as 0).
 */
class ServedTransfersTest {
    private static JobReport senderReport() {
        return JobReport.builder()
                .jobId(7)
                .sender(true)
                .status(AtpStatus.OK)
                .packetsSent(100)
                .packetsRetransmitted(3)
                .measuredLoss(0.1)
                .bytesSent(120_000)
                .build();
    }

    @Test
    void countsATransferOnlyWhenEveryNumberIsKnown() {
        ServedTransfers.Entry e = new ServedTransfers.Entry(DataPlaneKind.ATP);
        assertFalse(e.done().isDone());
        e.reported(senderReport()); // the report can come before the serving thread is done
        assertFalse(e.done().isDone());
        ServedTransfers.Counters early = e.counters();
        assertEquals(0, early.transfers(), "not final: missing, not 0 messages");
        assertEquals(100, early.packetsSent());
        e.submitted(42);
        assertTrue(e.done().isDone());
        assertEquals(new ServedTransfers.Counters(1, 42, 100, 3, 10, 120_000, 0), e.counters());
    }

    @Test
    void aTransferWithoutItsCountOrEngineReportIsNotCounted() {
        ServedTransfers.Entry failed = new ServedTransfers.Entry(DataPlaneKind.ATP);
        failed.unknown();
        failed.reported(senderReport());
        assertTrue(failed.done().isDone());
        assertEquals(0, failed.counters().transfers());
        ServedTransfers.Entry noReport = new ServedTransfers.Entry(DataPlaneKind.ATP);
        noReport.submitted(5);
        noReport.reported(null);
        assertEquals(new ServedTransfers.Counters(0, 5, 0, 0, 0, 0, 0), noReport.counters());
    }

    @Test
    void countersCrossTheWireUnchanged() throws Exception {
        ServedTransfers.Counters c = new ServedTransfers.Counters(3, 42, 100, 3, 10, 120_000, 7);
        assertEquals(c, ServedTransfers.Counters.decode(c.encode()));
    }

    @Test
    void aTcpTransferCountsMessagesWrittenNotAtpPackets() {
        ServedTransfers.Entry e = new ServedTransfers.Entry(DataPlaneKind.TCP);
        // the TCP plane's report counts the messages it wrote as its packets
        e.reported(senderReport());
        e.submitted(42);
        assertEquals(new ServedTransfers.Counters(1, 42, 0, 0, 0, 120_000, 100), e.counters());
        ServedTransfers.Counters both =
                e.counters().plus(new ServedTransfers.Entry(DataPlaneKind.ATP).counters());
        assertEquals(0, both.packetsSent());
        assertEquals(100, both.tcpMessagesWritten());
    }
}
