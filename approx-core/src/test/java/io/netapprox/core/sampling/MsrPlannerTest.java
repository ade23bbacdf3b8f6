package io.netapprox.core.sampling;

import static io.netapprox.core.sampling.SamplingTestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;
import org.junit.jupiter.api.Test;

/**
 * e_max -> MSR.
 *
 * <p>Error acceptance: over 1,000 trials the fraction with relative error <= e_max must be at least
 * confidence - 0.02 = 0.93. The 0.02 tolerance is ~3 Monte Carlo standard errors
 * (sqrt(0.95*0.05/1000) = 0.0069); the sample-size formula itself is only asymptotically exact
 * (CLT), which the tolerance also has to absorb for the skewed cases. An upper limit (<= 0.99)
 * checks that the MSR is not wastefully large.
 */
class MsrPlannerTest {

    private static final int TRIALS = 1000;

    private static double withinBoundRate(
            String name, double[] pop, MsrPlan plan, double eMax, long seed) {
        RandomGenerator rng = new Well19937c(seed);
        double truth = sum(pop);
        int n = (int) Math.ceil(plan.msr() * pop.length);
        assertEquals(plan.sampleSize(), n, "ATP's ceil(MSR*N) must equal the planned sample size");
        int ok = 0;
        for (int t = 0; t < TRIALS; t++) {
            double est =
                    StratifiedEstimator.sum(sample(pop, n, rng).summarize(pop.length), 0.95).mean();
            if (Math.abs(est - truth) <= eMax * Math.abs(truth)) {
                ok++;
            }
        }
        report(name + String.format(" MSR=%.4f n=%d", plan.msr(), n), ok, TRIALS, "within e_max");
        return (double) ok / TRIALS;
    }

    @Test
    void formulaMatchesClosedFormWithNormalQuantile() {
        MsrPlanner p = MsrPlanner.of(0.05, 0.95);
        long bigN = 100_000;
        double mean = 50;
        double sd = 40;
        double z = CriticalValues.normal(0.95);
        double n0 = Math.pow(z * sd / (0.05 * mean), 2);
        double nPrime = n0 / (1 + n0 / bigN);
        MsrPlan plan = p.plan(bigN, mean, sd);
        assertEquals(
                (long) Math.ceil(nPrime), plan.sampleSize()); // n' ~ 980, large: Normal quantile
        assertEquals(plan.sampleSize(), (long) Math.ceil(plan.msr() * bigN));
        assertEquals(MsrPlan.Basis.SAMPLE_SIZE_FORMULA, plan.basis());
        assertEquals(z, plan.criticalValue(), 1e-12);
    }

    @Test
    void smallSampleSizesUseStudentT() {
        MsrPlanner p = MsrPlanner.of(0.2, 0.95);
        MsrPlan plan = p.plan(10_000, 100, 40); // z-based n would be ceil(15.37) = 16
        assertTrue(
                plan.sampleSize() > 16,
                "t quantile must raise n above the Normal-based 16: " + plan);
        long n = plan.sampleSize();
        double t = CriticalValues.studentT(0.95, n - 1);
        assertTrue(t * 40 * Math.sqrt(1.0 / n - 1.0 / 10_000) <= 0.2 * 100);
        double tPrev = CriticalValues.studentT(0.95, n - 2);
        assertTrue(
                tPrev * 40 * Math.sqrt(1.0 / (n - 1) - 1.0 / 10_000) > 0.2 * 100,
                "n is not minimal");
    }

    @Test
    void plannedMsrAchievesErrorBoundOnSeveralDistributions() {
        double eMax = 0.05;
        MsrPlanner p = MsrPlanner.of(eMax, 0.95);
        double[][] pops = {
            normalPopulation(5000, 71),
            lognormalPopulation(5000, 72),
            paretoPopulation(5000, 4.0, 73)
        };
        String[] names = {"normal", "lognormal", "pareto(a=4)"};
        for (int i = 0; i < pops.length; i++) {
            double[] pop = pops[i];
            MsrPlan plan = p.plan(pop.length, mean(pop), sd(pop));
            assertTrue(plan.msr() < 1.0, names[i] + " should not need a census: " + plan);
            double rate = withinBoundRate("e_max=5% " + names[i], pop, plan, eMax, 80 + i);
            assertTrue(rate >= 0.93, names[i] + ": only " + rate + " of trials within e_max");
            assertTrue(rate <= 0.99, names[i] + ": " + rate + " within e_max, MSR wastefully high");
        }
    }

    @Test
    void perGroupPlansForStrata() {
        // Different groups get different MSRs from their own statistics; each meets its own bound.
        double eMax = 0.1;
        MsrPlanner p = MsrPlanner.of(eMax, 0.95);
        double[] big = lognormalPopulation(8000, 91);
        double[] small = normalPopulation(300, 92);
        MsrPlan pb = p.plan(big.length, mean(big), sd(big));
        MsrPlan ps = p.plan(small.length, mean(small), sd(small));
        assertTrue(pb.msr() < ps.msr() || ps.sampleSize() < pb.sampleSize());
        assertTrue(withinBoundRate("e_max=10% group big lognormal", big, pb, eMax, 93) >= 0.93);
        assertTrue(withinBoundRate("e_max=10% group small normal", small, ps, eMax, 94) >= 0.93);
    }

    @Test
    void heuristicStartIsConservativeForCvUpToAssumed() {
        double eMax = 0.1;
        MsrPlanner p = MsrPlanner.of(eMax, 0.95);
        MsrPlan h = p.heuristic(5000);
        assertEquals(MsrPlan.Basis.HEURISTIC, h.basis());
        double z = CriticalValues.normal(0.95);
        double n0 = Math.pow(z * MsrPlanner.DEFAULT_ASSUMED_CV / eMax, 2);
        assertEquals((long) Math.ceil(n0 / (1 + n0 / 5000)), h.sampleSize());
        double[] pop = lognormalPopulation(5000, 95); // CV ~1.3 <= 1.5 assumed
        double rate = withinBoundRate("heuristic e_max=10% lognormal", pop, h, eMax, 96);
        assertTrue(rate >= 0.95, "heuristic should be conservative for CV <= assumed: " + rate);
        // The heuristic shrinks with group size, unlike the paper's fixed 0.9.
        assertTrue(p.heuristic(1_000_000).msr() < 0.01);
        assertEquals(0.9, MsrPlanner.paperHeuristicMsr(0.1), 1e-12);
    }

    @Test
    void degenerateCases() {
        MsrPlanner p = MsrPlanner.of(0.05, 0.95);
        MsrPlan one = p.plan(1, 10, 3);
        assertEquals(1.0, one.msr());
        assertEquals(MsrPlan.Basis.SINGLETON, one.basis());
        assertEquals(1.0, p.heuristic(1).msr());
        assertEquals(1.0, p.heuristic(0).msr());

        MsrPlan zeroVar = p.plan(1000, 10, 0);
        assertEquals(MsrPlan.Basis.ZERO_VARIANCE, zeroVar.basis());
        assertEquals(2, zeroVar.sampleSize());

        MsrPlan meanZero = p.plan(1000, 0.0, 5.0);
        assertEquals(1.0, meanZero.msr());
        assertEquals(MsrPlan.Basis.MEAN_ZERO_EXACT, meanZero.basis());

        MsrPlanner withFloor = MsrPlanner.builder(0.05).absoluteErrorFloor(1.0).build();
        MsrPlan abs = withFloor.plan(1_000_000, 0.0, 50.0);
        assertEquals(MsrPlan.Basis.ABSOLUTE_BOUND, abs.basis());
        double z = CriticalValues.normal(0.95);
        double n0 = Math.pow(z * 50.0 / 1.0, 2);
        assertEquals((long) Math.ceil(n0 / (1 + n0 / 1_000_000)), abs.sampleSize());
        // A large mean makes the relative bound the looser one again.
        assertEquals(
                MsrPlan.Basis.SAMPLE_SIZE_FORMULA, withFloor.plan(1_000_000, 1000.0, 5.0).basis());

        // Tiny group: the requirement exceeds N -> MSR 1.
        assertEquals(1.0, p.plan(20, 1, 5).msr());
        // Negative means work with |mean|.
        assertEquals(p.plan(5000, 10, 4).sampleSize(), p.plan(5000, -10, 4).sampleSize());
    }

    @Test
    void cochranRuleRaisesSampleSizeForSkewedData() {
        MsrPlanner p = MsrPlanner.of(0.2, 0.95);
        MsrPlan base = p.plan(100_000, 10, 10);
        MsrPlan skewed = p.plan(100_000, 10, 10, 8.0);
        assertEquals(1600, skewed.sampleSize());
        assertTrue(base.sampleSize() < 1600);
        assertEquals(base, p.plan(100_000, 10, 10, 0.5));
        assertEquals(1.0, p.plan(1000, 10, 10, 10.0).msr());
    }

    @Test
    void badInputThrowsClearExceptions() {
        assertMessage(() -> MsrPlanner.of(0, 0.95), "e_max");
        assertMessage(() -> MsrPlanner.of(Double.NaN, 0.95), "e_max");
        assertMessage(() -> MsrPlanner.of(0.1, 1.0), "confidence");
        assertMessage(() -> MsrPlanner.of(0.1, Double.NaN), "confidence");
        MsrPlanner p = MsrPlanner.of(0.1, 0.95);
        assertMessage(() -> p.plan(-1, 1, 1), "population size");
        assertMessage(() -> p.plan(10, Double.NaN, 1), "mean");
        assertMessage(() -> p.plan(10, 1, -1), "standard deviation");
        assertMessage(() -> p.plan(10, 1, Double.POSITIVE_INFINITY), "standard deviation");
        assertMessage(() -> p.plan(10, 1, 1, Double.NaN), "skewness");
        assertMessage(() -> MsrPlanner.builder(0.1).minSampleSize(1), "minimum sample size");
        assertMessage(
                () -> MsrPlanner.builder(0.1).assumedCoefficientOfVariation(0),
                "coefficient of variation");
        assertMessage(() -> MsrPlanner.builder(0.1).absoluteErrorFloor(-1), "absolute error floor");
        assertMessage(() -> new MsrPlan(0, 0, 10, 1, MsrPlan.Basis.HEURISTIC), "msr");
    }

    static void assertMessage(org.junit.jupiter.api.function.Executable e, String fragment) {
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, e);
        assertTrue(
                ex.getMessage().contains(fragment),
                "message '" + ex.getMessage() + "' lacks '" + fragment + "'");
    }
}
