package io.netapprox.core.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Announcements carry the one JobSpec; MSR updates map to and from OutgoingJob.updateMsr's map. */
class JobAnnouncementTest {

    @Test
    void jobSpecsAreAnnouncedAsTheyAre() {
        JobSpec spec =
                JobSpec.builder()
                        .addGroup(17, 1000, 0.8)
                        .addGroup(42, 500, 1.0)
                        .mrdf(false)
                        .build();
        JobAnnouncement a = JobAnnouncement.of(9, spec, new byte[] {1, 2});
        assertEquals(9, a.jobId());
        assertFalse(a.isGlobalMsr());
        assertFalse(a.mrdf());
        assertEquals(
                List.of(new GroupSpec(17, 1000, 0.8), new GroupSpec(42, 500, 1.0)), a.groups());
        assertEquals(spec.withJobId(9), a.spec());
        assertEquals(1500, a.totalMessages());
        assertEquals(a, JobAnnouncement.ofGroups(9, spec.groups(), false, new byte[] {1, 2}));

        JobAnnouncement g = JobAnnouncement.of(3, JobSpec.of(100, 0.5), null);
        assertTrue(g.isGlobalMsr());
        assertEquals(100, g.totalMessages());
        assertEquals(g, JobAnnouncement.global(3, 100, 0.5, true, null));
    }

    @Test
    void msrUpdatesMapBothWays() {
        MsrUpdate u = MsrUpdate.of(5, Map.of(2, 0.7));
        assertEquals(5, u.jobId());
        assertEquals(Map.of(2, 0.7), u.byGroupIndex());
        MsrUpdate dup =
                new MsrUpdate(
                        5, List.of(new MsrUpdate.Change(1, 0.5), new MsrUpdate.Change(1, 0.6)));
        assertThrows(IllegalArgumentException.class, dup::byGroupIndex);
        assertThrows(IllegalArgumentException.class, () -> MsrUpdate.of(5, Map.of(0, 1.5)));
    }
}
