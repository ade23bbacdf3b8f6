package io.netapprox.core.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one job model: validation rules, spec edits, reports and their JOB_REPORT form. */
class JobModelTest {

    @Test
    void oneRuleForGroupSizesAndMsrs() {
        IllegalArgumentException x =
                assertThrows(IllegalArgumentException.class, () -> GroupSpec.of(3, 0, 1.0));
        assertTrue(x.getMessage().contains("N_g"), x.getMessage());
        assertThrows(IllegalArgumentException.class, () -> GroupSpec.of(3, -1, 1.0));
        assertThrows(IllegalArgumentException.class, () -> GroupSpec.of(3, 10, 1.01));
        assertThrows(IllegalArgumentException.class, () -> GroupSpec.of(3, 10, Double.NaN));
        assertEquals(new GroupSpec(-5L, 10, 0.8), GroupSpec.of(-5L, 10, 0.8));
        assertThrows(IllegalArgumentException.class, () -> JobSpec.builder().build());
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        JobSpec.builder()
                                .addGroup(1, Integer.MAX_VALUE, 1.0)
                                .addGroup(2, 1, 1.0)
                                .build());
        assertThrows(
                IllegalArgumentException.class,
                () -> new GroupReport(1, 0, 0, false, 0, 0, IdSet.empty(), IdSet.empty()));
    }

    @Test
    void specsTakeAJobIdAndNewMsrs() {
        JobSpec spec =
                JobSpec.builder()
                        .addGroup(17, 1000, 0.8)
                        .addGroup(42, 500, 1.0)
                        .mrdf(false)
                        .build();
        assertNull(spec.jobId());
        assertEquals(1500, spec.totalMessages());
        assertFalse(spec.isGlobal());
        assertTrue(JobSpec.of(100, 0.5).isGlobal());
        JobSpec withId = spec.withJobId(77).withMsrs(Map.of(0, 0.25));
        assertEquals(77, withId.jobId());
        assertEquals(0.25, withId.groups().get(0).msr());
        assertEquals(1.0, withId.groups().get(1).msr());
        assertEquals(17, withId.groups().get(0).groupId());
        assertFalse(withId.mrdf());
        assertThrows(IllegalArgumentException.class, () -> spec.withMsrs(Map.of(2, 0.5)));
        assertThrows(IllegalArgumentException.class, () -> spec.withMsrs(Map.of(0, 1.5)));
    }

    @Test
    void aDeadlineTravelsWithTheSpecAndIsValidated() {
        JobSpec none = JobSpec.of(10, 0.5);
        assertEquals(0, none.deadlineNanos());
        JobSpec d = JobSpec.builder().addGroup(0, 10, 0.5).deadline(Duration.ofMillis(250)).build();
        assertEquals(250_000_000L, d.deadlineNanos());
        assertEquals(250_000_000L, d.withJobId(7).withMsrs(Map.of(0, 0.7)).deadlineNanos());
        assertFalse(d.equals(none));
        assertTrue(d.toString().contains("deadline=PT0.25S"), d.toString());
        assertEquals(
                Long.MAX_VALUE,
                JobSpec.builder()
                        .addGroup(0, 1, 1.0)
                        .deadline(Duration.ofDays(365L * 1000))
                        .build()
                        .deadlineNanos());
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> JobSpec.builder().deadline(Duration.ofMillis(-1)));
        assertTrue(e.getMessage().contains("deadline"), e.getMessage());
    }

    @Test
    void statusesKeepTheirCApiValues() {
        for (AtpStatus s : AtpStatus.values()) {
            if (s != AtpStatus.UNKNOWN) {
                assertEquals(s, AtpStatus.of(s.code()));
            }
        }
        assertEquals(0, AtpStatus.OK.code());
        assertEquals(AtpStatus.UNKNOWN, AtpStatus.of(12345));
    }

    private static JobReport receiverReport() {
        return JobReport.builder()
                .sessionId(99)
                .jobId(5)
                .status(AtpStatus.OK)
                .messages(12)
                .delivered(9)
                .lost(3)
                .measuredLoss(0.25)
                .packetsSent(4)
                .startedNanos(1000)
                .finishedNanos(3000)
                .jctNanos(2000)
                .groups(
                        List.of(
                                new GroupReport(
                                        7, 10, 8, false, 8, 2, IdSet.ofRange(0, 8), IdSet.of(8, 9)),
                                new GroupReport(8, 2, 1, false, 1, 1, IdSet.of(10), IdSet.of(11))))
                .build();
    }

    @Test
    void theJobReportFormKeepsTheOutcomeAndDropsEngineDetails() {
        JobReport r = receiverReport();
        JobReport peer = r.forPeer();
        assertEquals(5, peer.jobId());
        assertEquals(AtpStatus.OK, peer.status());
        assertEquals(2000, peer.jctNanos());
        assertEquals(0.25, peer.measuredLoss());
        assertEquals(12, peer.messages());
        assertEquals(9, peer.delivered());
        assertEquals(3, peer.lost());
        assertEquals(0, peer.sessionId());
        assertEquals(0, peer.packetsSent());
        assertEquals(0, peer.startedNanos());
        assertEquals(r.groups().get(0).deliveredIds(), peer.groups().get(0).deliveredIds());
        assertFalse(peer.groups().get(0).hasTarget());
        assertFalse(peer.groups().get(0).reachedTarget());
        assertTrue(r.allTargetsReached());
        assertEquals(peer, peer.forPeer(), "idempotent");
        assertEquals(8, peer.timeInClassNanos().length);
    }

    @Test
    void onlyAReceiversListedIdsCanBeSentToThePeer() {
        JobReport sender =
                JobReport.builder()
                        .jobId(1)
                        .sender(true)
                        .status(AtpStatus.OK)
                        .messages(10)
                        .delivered(10)
                        .groups(
                                List.of(
                                        new GroupReport(
                                                0,
                                                10,
                                                10,
                                                false,
                                                10,
                                                0,
                                                IdSet.empty(),
                                                IdSet.empty())))
                        .build();
        assertThrows(IllegalArgumentException.class, sender::forPeer);
        JobReport unlisted =
                JobReport.builder()
                        .jobId(1)
                        .status(AtpStatus.PEER_DEAD)
                        .messages(10)
                        .delivered(3)
                        .groups(
                                List.of(
                                        new GroupReport(
                                                0,
                                                10,
                                                5,
                                                false,
                                                3,
                                                7,
                                                IdSet.empty(),
                                                IdSet.empty())))
                        .build();
        assertThrows(IllegalArgumentException.class, unlisted::forPeer);
    }

    @Test
    void reportsValidateTheirNumbers() {
        assertThrows(
                IllegalArgumentException.class,
                () -> JobReport.builder().jobId(1).build()); // no status
        assertThrows(
                IllegalArgumentException.class,
                () -> JobReport.builder().status(AtpStatus.OK).measuredLoss(-0.1).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> new GroupReport(1, 10, 11, false, 0, 0, IdSet.empty(), IdSet.empty()));
        assertThrows(
                IllegalArgumentException.class,
                () -> new GroupReport(1, 10, 5, false, 6, 5, IdSet.empty(), IdSet.empty()));
        assertThrows(
                IllegalArgumentException.class, // 2 ids listed for 3 delivered
                () -> new GroupReport(1, 10, 5, false, 3, 0, IdSet.of(1, 2), IdSet.empty()));
    }
}
