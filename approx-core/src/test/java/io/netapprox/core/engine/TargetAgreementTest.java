package io.netapprox.core.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.netapprox.core.job.AtpStatus;
import io.netapprox.core.job.GroupReport;
import io.netapprox.core.job.GroupSpec;
import io.netapprox.core.job.JobReport;
import io.netapprox.core.job.JobSpec;
import io.netapprox.core.job.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Java target formula ({@link Target}) gives every group the target the native engine computes.
 */
class TargetAgreementTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void javaTargetsEqualTheEngines() throws Exception {
        List<GroupSpec> groups = new ArrayList<>();
        // decimal MSRs whose binary product lands just above an integer (0.07 * 100 =
        // 7.000000000000001, ...)
        double[] msrs = {
            0.0, 1e-9, 0.1, 0.2, 0.3, 0.07, 0.29, 0.57, 0.58, 0.7, 0.8, 0.9, 1.0 / 3, 2.0 / 3,
            0.999, 1.0
        };
        int[] sizes = {1, 2, 3, 7, 10, 100, 1000, 12345};
        for (double m : msrs) {
            for (int n : sizes) {
                groups.add(GroupSpec.of(groups.size(), n, m));
            }
        }
        SplittableRandom r = new SplittableRandom(42);
        for (int i = 0; i < 2000; i++) {
            int n = 1 + r.nextInt(5000);
            double m = r.nextInt(4) == 0 ? (double) r.nextInt(n + 1) / n : r.nextDouble();
            groups.add(GroupSpec.of(groups.size(), n, m));
        }
        AtpConfig cfg = EngineTestSupport.loopback().build();
        try (EngineTestSupport.Pair p =
                new EngineTestSupport.Pair(cfg, cfg, new IncomingJobListener() {})) {
            OutgoingJob job = p.out.startJob(JobSpec.builder().addGroups(groups).build());
            job.cancel(); // the sender's report of a cancelled job lists every group's target
            ExecutionException e =
                    assertThrows(
                            ExecutionException.class,
                            () -> job.outcome().get(30, TimeUnit.SECONDS));
            JobReport report = ((AtpJobFailedException) e.getCause()).report();
            assertNotNull(report, "the engine reported the cancelled job");
            assertEquals(AtpStatus.CLOSED, report.status());
            assertEquals(groups.size(), report.groups().size());
            for (int i = 0; i < groups.size(); i++) {
                GroupSpec g = groups.get(i);
                GroupReport native_ = report.groups().get(i);
                assertEquals(native_.target(), g.target(), "target of " + g);
                assertEquals(
                        native_.target(), Target.of(g.msr(), (long) g.size()), "long form, " + g);
            }
        }
    }
}
