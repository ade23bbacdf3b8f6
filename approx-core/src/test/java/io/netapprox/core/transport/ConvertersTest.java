package io.netapprox.core.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netapprox.core.control.JobAnnouncement;
import io.netapprox.core.control.MsrUpdate;
import io.netapprox.core.engine.AtpStatus;
import io.netapprox.core.engine.JobSpec;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConvertersTest {

    @Test
    void groupSpecsMapBothWays() {
        io.netapprox.core.engine.GroupSpec e = io.netapprox.core.engine.GroupSpec.of(-5L, 10, 0.8);
        io.netapprox.core.control.GroupSpec c = Converters.toControl(e);
        assertEquals(new io.netapprox.core.control.GroupSpec(-5L, 10, 0.8), c);
        io.netapprox.core.engine.GroupSpec back = Converters.toEngine(c);
        assertEquals(-5L, back.groupId());
        assertEquals(10, back.size());
        assertEquals(0.8, back.msr());
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> Converters.toEngine(new io.netapprox.core.control.GroupSpec(3, 0, 1.0)));
        assertTrue(x.getMessage().contains("N_g = 0"), x.getMessage());
    }

    @Test
    void jobSpecsBecomeAnnouncementsAndBack() {
        JobSpec spec = JobSpec.builder().addGroup(17, 1000, 0.8).addGroup(42, 500, 1.0).mrdf(false).build();
        JobAnnouncement a = Converters.toAnnouncement(9, spec, new byte[] {1, 2});
        assertEquals(9, a.jobId());
        assertFalse(a.isGlobalMsr());
        assertFalse(a.mrdf());
        assertEquals(List.of(new io.netapprox.core.control.GroupSpec(17, 1000, 0.8),
                new io.netapprox.core.control.GroupSpec(42, 500, 1.0)), a.groups());
        JobSpec back = Converters.toJobSpec(a);
        assertEquals(9, back.jobId());
        assertEquals(1500, back.totalMessages());
        assertEquals(42, back.groups().get(1).groupId());

        JobAnnouncement g = Converters.toAnnouncement(3, JobSpec.of(100, 0.5), null);
        assertTrue(g.isGlobalMsr());
        assertEquals(100, g.totalMessages());

        JobSpec withId = Converters.withJobId(spec, 77, Map.of(0, 0.25));
        assertEquals(77, withId.jobId());
        assertEquals(0.25, withId.groups().get(0).msr());
        assertEquals(1.0, withId.groups().get(1).msr());
        assertFalse(withId.mrdf());
    }

    @Test
    void msrUpdatesMapBothWays() {
        MsrUpdate u = Converters.toMsrUpdate(5, Map.of(2, 0.7));
        assertEquals(5, u.jobId());
        assertEquals(Map.of(2, 0.7), Converters.toMsrMap(u));
        MsrUpdate dup = new MsrUpdate(5, List.of(new MsrUpdate.Change(1, 0.5), new MsrUpdate.Change(1, 0.6)));
        assertThrows(IllegalArgumentException.class, () -> Converters.toMsrMap(dup));
        assertThrows(IllegalArgumentException.class, () -> Converters.toMsrUpdate(5, Map.of(0, 1.5)));
    }

    @Test
    void statusesMapToWireValues() {
        assertEquals(0, Converters.toWireStatus(AtpStatus.OK));
        assertEquals(AtpStatus.PEER_DEAD.code(), Converters.toWireStatus(AtpStatus.PEER_DEAD));
        for (AtpStatus s : AtpStatus.values()) {
            if (s != AtpStatus.UNKNOWN) {
                assertEquals(s, Converters.toAtpStatus(Converters.toWireStatus(s)));
            }
        }
        assertEquals(AtpStatus.UNKNOWN, Converters.toAtpStatus(12345));
    }
}
