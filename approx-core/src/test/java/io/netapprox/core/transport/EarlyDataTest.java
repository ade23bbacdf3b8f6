package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.engine.AtpMessage;
import io.netapprox.core.engine.TestMessages;
import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.IdSet;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A requested job's data may arrive before its JOB_ANNOUNCE (the server starts the job without
 * waiting for the requester's acceptance, {@link ApproxTransportConfig#startBeforeAccept()}): the
 * requester's {@link IncomingTransfer} holds it and hands it to the listener, in arrival order and
 * after the announcement, so the listener always knows the groups; a transfer that ends first
 * releases what it held.
 */
class EarlyDataTest {
    private static final int JOB = 7;

    /** What the listener saw, in order, and whether the groups were known each time. */
    private static final class Seen implements TransferListener {
        final List<String> events = new ArrayList<>();
        boolean groupsUnknown;

        @Override
        public void onMessage(IncomingTransfer t, AtpMessage m) {
            groupsUnknown |= t.groups() == null;
            events.add("m" + m.messageId());
            m.release();
        }

        @Override
        public void onMessageLost(IncomingTransfer t, int messageId, long groupId) {
            groupsUnknown |= t.groups() == null;
            events.add("lost" + messageId);
        }
    }

    private static IncomingTransfer transfer(TransferListener l) {
        ApproxPeer peer = new ApproxPeer(null, 1L, true, null);
        return new IncomingTransfer(peer, JOB, l);
    }

    private static JobAnnouncement announcement() {
        return JobAnnouncement.of(JOB, JobSpec.builder().addGroup(42L, 4, 0.5).build(), null);
    }

    private static AtpMessage message(int id, ByteBuf[] keep) {
        ByteBuf b = Unpooled.buffer(8).writeLong(id);
        keep[id] = b;
        return TestMessages.message(JOB, id, 42L, b);
    }

    private static JobReport report() {
        return JobReport.outcome(
                JOB,
                AtpStatus.OK,
                1_000L,
                0,
                0.0,
                null,
                List.of(GroupReport.ofIds(42L, 4, IdSet.of(0, 1, 3), IdSet.of(2))));
    }

    @Test
    void dataBeforeTheAnnouncementIsHeldThenDeliveredInOrderWithTheGroupsKnown() throws Exception {
        Seen seen = new Seen();
        IncomingTransfer t = transfer(seen);
        ByteBuf[] bufs = new ByteBuf[4];
        t.onMessage(message(0, bufs));
        t.onMessageLost(2, 42L);
        t.onMessage(message(1, bufs));
        t.onReceiverReport(report()); // the whole job ended before its announcement
        assertTrue(seen.events.isEmpty(), "nothing reaches the listener before the groups");
        assertEquals(2, t.heldMessages());
        assertFalse(t.report().isDone(), "the report waits for the announcement too");

        assertTrue(t.onAnnounce(announcement()).accepted());
        assertEquals(List.of("m0", "lost2", "m1"), seen.events);
        assertFalse(seen.groupsUnknown);
        assertEquals(0, t.heldMessages());
        TransferReport r = t.report().getNow(null);
        assertNotNull(r, "the held report completes the transfer after the held data");
        assertEquals(3, r.delivered());

        t.onMessage(message(3, bufs)); // (after the report: released unseen)
        assertEquals(List.of("m0", "lost2", "m1"), seen.events);
        for (int i : new int[] {0, 1, 3}) {
            assertEquals(0, bufs[i].refCnt(), "every message released exactly once");
        }
    }

    @Test
    void aFailedTransferReleasesWhatItHeld() {
        IncomingTransfer t = transfer(new Seen());
        ByteBuf[] bufs = new ByteBuf[4];
        t.onMessage(message(0, bufs));
        t.fail(new TransportException(TransportException.Reason.CLOSED, "peer ended", null));
        assertEquals(0, bufs[0].refCnt());
        assertEquals(0, t.heldMessages());
    }

    @Test
    void afterTheAnnouncementDataGoesStraightToTheListener() {
        Seen seen = new Seen();
        IncomingTransfer t = transfer(seen);
        assertTrue(t.onAnnounce(announcement()).accepted());
        ByteBuf[] bufs = new ByteBuf[4];
        t.onMessage(message(0, bufs));
        t.onMessage(message(1, bufs));
        assertEquals(List.of("m0", "m1"), seen.events);
        assertEquals(0, t.heldMessages());
    }

    @Test
    void aTransferThatEndsBeforeItsAnnouncementReleasesWhatItHeld() {
        Seen seen = new Seen();
        IncomingTransfer t = transfer(seen);
        ByteBuf[] bufs = new ByteBuf[4];
        t.onMessage(message(0, bufs));
        t.onMessage(message(1, bufs));
        t.report().cancel(false); // the requester gives up (RemotePulls does so)
        assertEquals(0, bufs[0].refCnt());
        assertEquals(0, bufs[1].refCnt());
        assertEquals(0, t.heldMessages());
        t.onMessage(message(2, bufs)); // later data: released unseen
        assertEquals(0, bufs[2].refCnt());
        assertFalse(
                t.onAnnounce(announcement()).accepted(),
                "a given-up transfer refuses its announcement");
        assertTrue(seen.events.isEmpty());
    }
}
