package io.netapprox.core.sampling;

import java.util.Arrays;
import java.util.Locale;
import org.apache.commons.math3.distribution.LogNormalDistribution;
import org.apache.commons.math3.distribution.NormalDistribution;
import org.apache.commons.math3.distribution.ParetoDistribution;
import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;

/**
 * Seeded finite populations and simple random sampling without replacement, shared by the
 * statistical tests.
 */
final class SamplingTestSupport {

    private SamplingTestSupport() {}

    /** Normal(100, 20): symmetric. */
    static double[] normalPopulation(int n, long seed) {
        return new NormalDistribution(new Well19937c(seed), 100, 20).sample(n);
    }

    /** Lognormal(mu=0, sigma=1): skewed, CV 1.31. */
    static double[] lognormalPopulation(int n, long seed) {
        return new LogNormalDistribution(new Well19937c(seed), 0, 1).sample(n);
    }

    /** Pareto(scale 1, shape alpha): heavy-tailed; variance finite for alpha > 2. */
    static double[] paretoPopulation(int n, double alpha, long seed) {
        return new ParetoDistribution(new Well19937c(seed), 1, alpha).sample(n);
    }

    /** 0/1 population with success probability p. */
    static double[] bernoulliPopulation(int n, double p, long seed) {
        RandomGenerator r = new Well19937c(seed);
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = r.nextDouble() < p ? 1.0 : 0.0;
        }
        return out;
    }

    /**
     * Indices of a simple random sample without replacement of size n from 0..bigN-1 (partial
     * Fisher-Yates).
     */
    static int[] sampleIndices(int bigN, int n, RandomGenerator rng) {
        int[] idx = new int[bigN];
        for (int i = 0; i < bigN; i++) {
            idx[i] = i;
        }
        for (int i = 0; i < n; i++) {
            int j = i + rng.nextInt(bigN - i);
            int t = idx[i];
            idx[i] = idx[j];
            idx[j] = t;
        }
        return Arrays.copyOf(idx, n);
    }

    /**
     * Accumulates a simple random sample of size n (one record per message) from the population.
     */
    static StratumAccumulator sample(double[] population, int n, RandomGenerator rng) {
        StratumAccumulator acc = new StratumAccumulator();
        for (int i : sampleIndices(population.length, n, rng)) {
            acc.add(population[i]);
        }
        return acc;
    }

    static double sum(double[] xs) {
        double s = 0;
        for (double x : xs) {
            s += x;
        }
        return s;
    }

    static double mean(double[] xs) {
        return sum(xs) / xs.length;
    }

    /**
     * Population standard deviation S with denominator N - 1 (the one in the sample-size formula).
     */
    static double sd(double[] xs) {
        double m = mean(xs);
        double ss = 0;
        for (double x : xs) {
            ss += (x - m) * (x - m);
        }
        return Math.sqrt(ss / (xs.length - 1));
    }

    /** ceil(q N)-th smallest value. */
    static double quantile(double[] xs, double q) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int r = (int) Math.max(1, Math.ceil(q * s.length - 1e-9));
        return s[r - 1];
    }

    static void report(String what, int hits, int trials, String extra) {
        System.out.printf(
                Locale.ROOT,
                "[sampling] %-48s %5d/%d = %.4f %s%n",
                what,
                hits,
                trials,
                (double) hits / trials,
                extra);
    }
}
