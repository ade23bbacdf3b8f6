package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.MsrPlannerTest.assertMessage;
import static io.netapprox.core.sampling.SamplingTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;
import org.junit.jupiter.api.Test;

/**
 * Online MSR refinement: convergence, floors, monotonicity, and the achieved error of the online
 * loop.
 */
class OnlineMsrUpdaterTest {

    @Test
    void convergesToThePlanFromExactStatistics() {
        double[] pop = lognormalPopulation(20_000, 401);
        MsrPlanner planner = MsrPlanner.of(0.05, 0.95);
        MsrPlan exact = planner.plan(pop.length, mean(pop), sd(pop));
        OnlineMsrUpdater<String> u = OnlineMsrUpdater.builder(planner).build();
        u.registerGroup("g", pop.length);
        assertEquals(MsrPlan.Basis.HEURISTIC, u.plan("g").basis());
        RandomGenerator rng = new Well19937c(402);
        int[] order = sampleIndices(pop.length, 8000, rng);
        double errAt500 = Double.NaN;
        double errAt8000 = Double.NaN;
        for (int i = 0; i < order.length; i++) {
            u.observe("g", pop[order[i]]);
            if (i + 1 == 500 || i + 1 == 8000) {
                // Ignore the delivered-fraction floor: compare the statistics-based requirement.
                MsrPlan fresh = planner.plan(u.summary("g"));
                double err =
                        Math.abs(fresh.sampleSize() - exact.sampleSize())
                                / (double) exact.sampleSize();
                if (i + 1 == 500) {
                    errAt500 = err;
                } else {
                    errAt8000 = err;
                }
            }
        }
        System.out.printf(
                "[sampling] online n required: exact=%d, relative gap after 500 obs=%.3f, after 8000=%.3f%n",
                exact.sampleSize(), errAt500, errAt8000);
        assertTrue(errAt8000 < 0.05, "did not converge: gap " + errAt8000);
        MsrPlan last = u.plan("g");
        assertTrue(last.msr() >= 8000.0 / pop.length, "MSR below the delivered fraction: " + last);
        assertEquals(MsrPlan.Basis.FLOOR, last.basis()); // 8000 delivered > ~1700 required
    }

    @Test
    void onlineLoopMeetsErrorBound() {
        // Receiver loop: messages arrive in random order; stop once delivered >= the current
        // requirement.
        double eMax = 0.05;
        double[] pop = lognormalPopulation(10_000, 403);
        MsrPlanner planner = MsrPlanner.of(eMax, 0.95);
        RandomGenerator rng = new Well19937c(404);
        int trials = 1000;
        int ok = 0;
        long deliveredSum = 0;
        for (int t = 0; t < trials; t++) {
            OnlineMsrUpdater<Integer> u =
                    OnlineMsrUpdater.builder(planner)
                            .minObservations(30)
                            .varianceUpperConfidence(0.9)
                            .build();
            u.registerGroup(1, pop.length);
            int[] order = sampleIndices(pop.length, pop.length, rng);
            int i = 0;
            while (i < order.length) {
                u.observe(1, pop[order[i++]]);
                if (i % 25 == 0 && i >= u.plan(1).sampleSize()) {
                    break;
                }
            }
            deliveredSum += i;
            double est = StratifiedEstimator.sum(u.summary(1), 0.95).mean();
            if (Math.abs(est - sum(pop)) <= eMax * sum(pop)) {
                ok++;
            }
        }
        report(
                String.format("online loop e_max=5%% lognormal (avg n=%d)", deliveredSum / trials),
                ok,
                trials,
                "within e_max");
        assertTrue(ok >= 930, "online loop within e_max only " + ok + "/1000");
        assertTrue(deliveredSum / trials < pop.length / 2, "online loop needed almost a census");
    }

    @Test
    void monotoneModeNeverDecreasesAndPriorIsUsedFirst() {
        MsrPlanner planner = MsrPlanner.of(0.1, 0.95);
        OnlineMsrUpdater<String> mono =
                OnlineMsrUpdater.builder(planner).monotone(true).minObservations(10).build();
        OnlineMsrUpdater<String> free =
                OnlineMsrUpdater.builder(planner).minObservations(10).build();
        mono.registerGroup("g", 5000).setPrior("g", 100, 300);
        free.registerGroup("g", 5000).setPrior("g", 100, 300);
        assertEquals(planner.plan(5000, 100, 300), mono.plan("g"));
        double[] pop = normalPopulation(5000, 405); // CV 0.2: far less than the prior's 3
        double prev = 0;
        boolean freeDecreased = false;
        double freePrev = free.plan("g").msr();
        for (int i = 0; i < 200; i++) {
            mono.observe("g", pop[i]);
            free.observe("g", pop[i]);
            double m = mono.plan("g").msr();
            assertTrue(m >= prev, "monotone MSR decreased from " + prev + " to " + m);
            prev = m;
            double f = free.plan("g").msr();
            freeDecreased |= f < freePrev;
            freePrev = f;
        }
        assertTrue(
                freeDecreased,
                "non-monotone updater should lower the MSR once data shows low variance");
        assertTrue(free.plan("g").msr() < mono.plan("g").msr());
        assertEquals(1, free.msrs().size());
    }

    @Test
    void badInputThrowsClearExceptions() {
        OnlineMsrUpdater<String> u = OnlineMsrUpdater.builder(MsrPlanner.of(0.1, 0.95)).build();
        assertMessage(() -> u.observe("x", 1), "unknown group");
        assertMessage(() -> u.registerGroup(null, 1), "group id");
        assertMessage(() -> u.registerGroup("g", -1), "population size");
        u.registerGroup("g", 2);
        assertMessage(() -> u.observe("g", Double.NaN), "finite");
        u.observe("g", 1).observe("g", 2);
        assertMessage(() -> u.observe("g", 3), "already received all");
        assertMessage(() -> u.registerGroup("g", 1), "below the 2 messages already delivered");
        assertMessage(() -> u.setPrior("g", 1, -1), "standard deviation");
        assertMessage(() -> OnlineMsrUpdater.builder(null), "planner");
        assertMessage(
                () -> OnlineMsrUpdater.builder(MsrPlanner.of(0.1, 0.95)).varianceUpperConfidence(1),
                "varianceUpperConfidence");
        assertEquals(1.0, u.plan("g").msr());
    }
}
