package io.netapprox.core.sampling;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.commons.math3.distribution.LogNormalDistribution;
import org.apache.commons.math3.distribution.ParetoDistribution;
import org.apache.commons.math3.distribution.PoissonDistribution;
import org.apache.commons.math3.random.RandomGenerator;
import org.apache.commons.math3.random.Well19937c;

/**
 * Groups split into shares the way real inputs split them (one share, an even spread, one dominant
 * share with a differently distributed rest, geometric sizes), the distributions the earlier suites
 * did not use, and the integration's sampling: each share's records permuted, cut into messages of
 * nearly equal size, and a simple random sample of messages delivered.
 */
final class ShareLayouts {

    private ShareLayouts() {}

    /** Lognormal(0, sigma = 2): extremely skewed (population skewness in the hundreds). */
    static double[] lognormalSigma2(int n, long seed) {
        return new LogNormalDistribution(new Well19937c(seed), 0, 2).sample(n);
    }

    /**
     * Pareto(scale 1, alpha 1.5): infinite variance in the model; the finite population is
     * dominated by its top.
     */
    static double[] pareto15(int n, long seed) {
        return new ParetoDistribution(new Well19937c(seed), 1, 1.5).sample(n);
    }

    /** 70% zeros, the rest lognormal(1, 1): zero-inflated. */
    static double[] zeroInflated(int n, long seed) {
        RandomGenerator r = new Well19937c(seed);
        LogNormalDistribution ln = new LogNormalDistribution(r, 1, 1);
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = r.nextDouble() < 0.7 ? 0.0 : ln.sample();
        }
        return out;
    }

    /**
     * 55% Normal(10, 1), 45% Normal(30, 2): bimodal, the median near the upper edge of the lower
     * mode.
     */
    static double[] bimodal(int n, long seed) {
        RandomGenerator r = new Well19937c(seed);
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            out[i] = r.nextDouble() < 0.55 ? 10 + r.nextGaussian() : 30 + 2 * r.nextGaussian();
        }
        return out;
    }

    /** Poisson(6): integer values with many ties. */
    static double[] integerTies(int n, long seed) {
        int[] k = new PoissonDistribution(new Well19937c(seed), 6, 1e-12, 10_000).sample(n);
        return Arrays.stream(k).asDoubleStream().toArray();
    }

    /** A named population. */
    record Population(String name, double[] values) {}

    static List<Population> distributions(int n, long seed) {
        return List.of(
                new Population("lognormal(0,2)", lognormalSigma2(n, seed)),
                new Population("pareto(1.5)", pareto15(n, seed + 1)),
                new Population("zero-inflated", zeroInflated(n, seed + 2)),
                new Population("bimodal", bimodal(n, seed + 3)),
                new Population("poisson(6) ties", integerTies(n, seed + 4)));
    }

    /** How a group is spread over shares. */
    enum Layout {
        /** the whole group in one share (a file per day, a key-sorted input) */
        CLUSTERED,
        /** spread evenly over 8 shares (random splits) */
        EQUAL,
        /**
         * 75% in one share, the rest over 7 others, the rest's values multiplied by 3 (shares
         * differ)
         */
        MIXED,
        /** 8 shares of geometric sizes 1:2:4:...:128 */
        GEOMETRIC
    }

    /** Splits a population into shares (sizes and, for MIXED, values) according to the layout. */
    static List<double[]> split(double[] population, Layout layout, long seed) {
        double[] shuffled = population.clone();
        shuffle(shuffled, new Well19937c(seed));
        int n = shuffled.length;
        List<double[]> shares = new ArrayList<>();
        switch (layout) {
            case CLUSTERED -> shares.add(shuffled);
            case EQUAL -> {
                for (int m = 0; m < 8; m++) {
                    shares.add(Arrays.copyOfRange(shuffled, m * n / 8, (m + 1) * n / 8));
                }
            }
            case MIXED -> {
                int big = 3 * n / 4;
                shares.add(Arrays.copyOfRange(shuffled, 0, big));
                for (int m = 0; m < 7; m++) {
                    double[] rest =
                            Arrays.copyOfRange(
                                    shuffled,
                                    big + m * (n - big) / 7,
                                    big + (m + 1) * (n - big) / 7);
                    for (int i = 0; i < rest.length; i++) {
                        rest[i] *= 3;
                    }
                    shares.add(rest);
                }
            }
            case GEOMETRIC -> {
                int from = 0;
                for (int m = 0; m < 8; m++) {
                    int to = m == 7 ? n : from + (int) ((long) n * (1L << m) / 255);
                    shares.add(Arrays.copyOfRange(shuffled, from, to));
                    from = to;
                }
            }
            default -> throw new IllegalArgumentException(layout.toString());
        }
        return shares;
    }

    static void shuffle(double[] a, RandomGenerator r) {
        for (int i = a.length - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            double t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /**
     * Messages a share of {@code records} records is cut into with {@code perMessage} records per
     * message.
     */
    static long units(int records, int perMessage) {
        return (records + perMessage - 1) / perMessage;
    }

    /**
     * First record of message i when n records are spread evenly over k messages (the Spark
     * writer's framing).
     */
    static int start(int i, int n, long k) {
        return (int) ((long) i * n / k);
    }

    /**
     * Delivers random messages of one share as the integration does (records permuted, cut into
     * messages of nearly equal size, a simple random sample of messages delivered), cheaply: the
     * delivered messages of a random permutation are a simple random sample of records cut at the
     * chosen messages' sizes, drawn by a partial Fisher-Yates shuffle of a working copy (any
     * current order of it is a valid start).
     */
    static final class ShareSampler {
        private final double[] work;
        private final long units;
        private final java.util.SplittableRandom rng;

        ShareSampler(double[] share, int perMessage, long seed) {
            this.work = share.clone();
            this.units = units(share.length, perMessage);
            this.rng = new java.util.SplittableRandom(seed);
        }

        /**
         * @return {@code deliver} random messages, each the array of its records' values
         */
        List<double[]> deliver(long deliver) {
            int n = work.length;
            // which messages (their sizes differ by at most one record)
            int[] sizes = new int[(int) deliver];
            int[] idx = new int[(int) units];
            for (int i = 0; i < idx.length; i++) {
                idx[i] = i;
            }
            int records = 0;
            for (int i = 0; i < deliver; i++) {
                int j = i + rng.nextInt(idx.length - i);
                int t = idx[i];
                idx[i] = idx[j];
                idx[j] = t;
                sizes[i] = start(idx[i] + 1, n, units) - start(idx[i], n, units);
                records += sizes[i];
            }
            for (int i = 0; i < records; i++) {
                int j = i + rng.nextInt(n - i);
                double t = work[i];
                work[i] = work[j];
                work[j] = t;
            }
            List<double[]> out = new ArrayList<>(sizes.length);
            int at = 0;
            for (int size : sizes) {
                out.add(Arrays.copyOfRange(work, at, at + size));
                at += size;
            }
            return out;
        }
    }

    static List<ShareSampler> samplers(List<double[]> shares, int perMessage, long seed) {
        List<ShareSampler> out = new ArrayList<>();
        for (int m = 0; m < shares.size(); m++) {
            out.add(new ShareSampler(shares.get(m), perMessage, seed * 1000 + m));
        }
        return out;
    }

    /** Census statistics of each share. */
    static List<ShareMoments> moments(List<double[]> shares, int perMessage) {
        List<ShareMoments> out = new ArrayList<>();
        for (double[] s : shares) {
            StratumAccumulator acc = new StratumAccumulator();
            for (double v : s) {
                acc.add(v);
            }
            out.add(ShareMoments.of(acc, units(s.length, perMessage)));
        }
        return out;
    }

    static List<ValueSketch> sketches(List<double[]> shares) {
        List<ValueSketch> out = new ArrayList<>();
        for (double[] s : shares) {
            out.add(ValueSketch.of(s));
        }
        return out;
    }

    static long[] units(List<double[]> shares, int perMessage) {
        long[] u = new long[shares.size()];
        for (int m = 0; m < u.length; m++) {
            u[m] = units(shares.get(m).length, perMessage);
        }
        return u;
    }
}
