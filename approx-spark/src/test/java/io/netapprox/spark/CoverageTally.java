package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.Row;

/**
 * The statistical tests' bookkeeping for one family of answers (e.g. every avg and sum, or every
 * median) over seeded trials: how many were within their e_max of the truth and how many intervals
 * covered it, with per group-aggregate diagnostics (misses below / above the interval, the mean
 * relative error in units of its standard error: a bias shows as many SE from 0), and the assertion
 * of the promise at an exact binomial floor ({@link StatisticalFloor}).
 */
final class CoverageTally {
    private final String name;
    private int checks;
    private int within;
    private int covered;

    /**
     * Per group-aggregate: misses below, above, sum and sum of squares of the relative error,
     * answers.
     */
    private final Map<String, double[]> diag = new TreeMap<>();

    CoverageTally(String name) {
        this.name = name;
    }

    /**
     * Adds one answer (a row of {@link ApproxQuery#SCHEMA}) against the truth.
     *
     * @param key group|aggregate
     */
    void add(String key, double truth, Row a) {
        double est = a.getDouble(4);
        double low = a.getDouble(5);
        double high = a.getDouble(6);
        double eMax = a.getDouble(8);
        checks++;
        within += Math.abs(est - truth) <= eMax * Math.abs(truth) ? 1 : 0;
        covered += low <= truth && truth <= high ? 1 : 0;
        double[] d = diag.computeIfAbsent(key, k -> new double[5]);
        double rel = (est - truth) / Math.abs(truth);
        d[0] += truth < low ? 1 : 0;
        d[1] += truth > high ? 1 : 0;
        d[2] += rel;
        d[3] += rel * rel;
        d[4]++;
    }

    int checks() {
        return checks;
    }

    double withinRate() {
        return (double) within / checks;
    }

    double coverage() {
        return (double) covered / checks;
    }

    /** Coverage of the answers whose key ends with {@code aggregate}. */
    double coverage(String aggregate) {
        double misses = 0;
        double n = 0;
        for (Map.Entry<String, double[]> e : diag.entrySet()) {
            if (e.getKey().endsWith(aggregate)) {
                misses += e.getValue()[0] + e.getValue()[1];
                n += e.getValue()[4];
            }
        }
        return 1 - misses / n;
    }

    /**
     * Asserts that within-e_max and coverage each reach the exact binomial floor at {@code
     * confidence}, each with false-alarm probability {@code alpha}; {@code correlated} answers of a
     * group may succeed or fail together (one sample), so they count as one independent unit.
     */
    void assertPromise(double confidence, int correlated, double alpha, boolean coverageToo) {
        double floor = StatisticalFloor.floorRate(checks, correlated, confidence, alpha);
        System.out.printf(
                "[spark] %s: within e_max %.4f, coverage %.4f of %d (floor %.4f: exact binomial,"
                        + " %d independent units, false alarm %.1e)%n",
                name, withinRate(), coverage(), checks, floor, checks / correlated, alpha);
        assertTrue(withinRate() >= floor, name + ": within e_max " + withinRate());
        if (coverageToo) {
            assertTrue(coverage() >= floor, name + ": coverage " + coverage());
        }
    }

    /**
     * Prints where the intervals miss: per aggregate, misses below/above and the group mean errors
     * in SE units; the five group-aggregates with the most misses.
     */
    void printDiagnostics(List<String> aggregates, int trials) {
        for (String agg : aggregates) {
            double below = 0;
            double above = 0;
            double bias = 0;
            double se = 0;
            int groups = 0;
            for (Map.Entry<String, double[]> e : diag.entrySet()) {
                if (e.getKey().endsWith(agg)) {
                    double[] d = e.getValue();
                    below += d[0];
                    above += d[1];
                    double mean = d[2] / trials;
                    double sd = Math.sqrt(Math.max(0, d[3] / trials - mean * mean));
                    double z = sd > 0 ? mean / (sd / Math.sqrt(trials)) : 0;
                    bias += z;
                    se += z * z;
                    groups++;
                }
            }
            System.out.printf(
                    "[spark] %s: %d misses with the truth below the interval, %d above, of %d;"
                            + " group mean errors in SE units: mean %.2f, rms %.2f over %d groups"
                            + " (no bias: mean 0 +- %.2f, rms 1)%n",
                    agg,
                    (long) below,
                    (long) above,
                    groups * trials,
                    bias / groups,
                    Math.sqrt(se / groups),
                    groups,
                    1 / Math.sqrt(groups));
        }
        diag.entrySet().stream()
                .sorted(
                        (x, y) ->
                                Double.compare(
                                        y.getValue()[0] + y.getValue()[1],
                                        x.getValue()[0] + x.getValue()[1]))
                .limit(5)
                .forEach(
                        e ->
                                System.out.printf(
                                        "[spark]   %s: coverage %.3f (%d below, %d above)%n",
                                        e.getKey(),
                                        1 - (e.getValue()[0] + e.getValue()[1]) / trials,
                                        (long) e.getValue()[0],
                                        (long) e.getValue()[1]));
    }
}
