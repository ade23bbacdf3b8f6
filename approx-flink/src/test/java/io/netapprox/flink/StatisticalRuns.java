package io.netapprox.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntToDoubleFunction;
import java.util.function.IntUnaryOperator;
import org.apache.commons.math3.distribution.BinomialDistribution;
import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/**
 * What the Flink statistical tests share: the options of a seeded lossy run, the checks of one
 * run's answers against the truth, the tally of sampled averages (within their bound, covered by
 * their interval) per class of groups, and the rate assertions.
 *
 * <p>The rate floors are exact one-sided binomial quantiles of the promised confidence, at a
 * family-wise false-alarm rate of {@link #FALSE_ALARM} for the whole test, split (Bonferroni) over
 * its assertions. A fixed "0.95 minus 3 standard errors" per assertion fails a correct build about
 * once in 60 runs when a test makes a dozen such assertions (CI saw it in {@code
 * PerGroupBoundTest}); a bound that did not reach the transport still fails by far (answers planned
 * for 5% land within 2% about 60% of the time).
 */
final class StatisticalRuns {
    static final double CONFIDENCE = 0.95;

    /** Probability that a correct build fails any of one test's rate assertions. */
    static final double FALSE_ALARM = 1e-3;

    private StatisticalRuns() {}

    /**
     * A seeded run's options: the flag on, 30% of every engine's outgoing datagrams dropped (seeded
     * by the run), senders submit exactly the planned sample (lost messages are retransmitted, so
     * the bound is tested at the planned rate, not at whatever more the engine delivered), and
     * frequent watermarks.
     */
    static Configuration lossyRun(int run) {
        Configuration conf = new Configuration();
        conf.setString("approx.enabled", "true");
        conf.setString("approx.faultDropOutgoing", "0.3");
        conf.setString("approx.faultSeed", String.valueOf(run));
        conf.setString("approx.submit", "target");
        conf.setString("pipeline.auto-watermark-interval", "20 ms");
        return conf;
    }

    /**
     * The statistical tests' query: per group, 1-minute tumbling event-time windows, avg, sum and
     * count of the value at {@code eMax} and {@link #CONFIDENCE}.
     */
    static DataStream<WindowEstimate> avgSumCount(DataStream<Ride> rides, double eMax) {
        return Approx.of(rides)
                .stratifyBy(Ride::getGroup)
                .window(TumblingEventTimeWindows.of(Duration.ofMinutes(1)))
                .errorBound(eMax)
                .confidence(CONFIDENCE)
                .aggregate(
                        Aggregate.avg("value", Ride::getValue),
                        Aggregate.sum("value", Ride::getValue),
                        Aggregate.count());
    }

    /** An environment on the test cluster, one subtask per slot. */
    /**
     * One seeded job over {@code rides} paced at 120 000 rides/s (about 1 s, so the windows close
     * one after another): avg/sum/count within {@code eMax}, collected, added to {@code tally} and
     * checked healthy ({@link #assertRunHealthy}).
     */
    static FlinkCluster.Run pacedRun(
            FlinkCluster flink,
            Tally tally,
            Rides rides,
            Configuration conf,
            double eMax,
            String name,
            boolean deadlinesAllowed)
            throws Exception {
        StreamExecutionEnvironment env = environment(conf);
        DataStream<WindowEstimate> out =
                avgSumCount(rides.streamPerSecond(env, 120_000).rebalance(), eMax);
        FlinkCluster.Run done = FlinkCluster.collect(env, out, name);
        tally.add(done.results(), rides.truth(), name);
        assertRunHealthy(flink, done.job(), name, deadlinesAllowed);
        return done;
    }

    static StreamExecutionEnvironment environment(Configuration conf) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(FlinkCluster.PARALLELISM);
        return env;
    }

    /** The health of one approximate run: no group below target, data really went over ATP. */
    static void assertRunHealthy(
            FlinkCluster flink, JobID job, String run, boolean deadlinesAllowed) {
        assertEquals(
                0,
                flink.receiverCounter(job, "approxGroupsBelowTarget"),
                "groups below target, " + run);
        if (!deadlinesAllowed) {
            assertEquals(
                    0,
                    flink.receiverCounter(job, "approxEpochDeadlines"),
                    "epoch deadlines, " + run);
        }
        assertTrue(
                flink.receiverCounter(job, "approxMessagesReceived") > 0,
                "nothing went over ATP, " + run);
    }

    /**
     * The fewest of {@code checks} answers that meet a promise held with probability {@link
     * #CONFIDENCE}, except with probability {@code alpha}: the exact binomial lower quantile.
     */
    static int floor(int checks, double alpha) {
        return new BinomialDistribution(null, checks, CONFIDENCE)
                .inverseCumulativeProbability(alpha);
    }

    /**
     * Sampled (window, group) averages counted per class of groups (one class: all pooled; or one
     * per group), with the records sampled and in the population per class.
     */
    static final class Tally {
        final int[] checks;
        final int[] within;
        final int[] covered;
        final long[] sampled;
        final long[] population;
        int censusChecks;
        private final IntToDoubleFunction bound;
        private final IntUnaryOperator classOf;
        private final String noun;

        /**
         * @param noun what a class is ("group", when each group is its own)
         * @param classes number of classes
         * @param classOf a group's class
         * @param bound a group's e_max (what its answers must carry)
         */
        Tally(String noun, int classes, IntUnaryOperator classOf, IntToDoubleFunction bound) {
            this.noun = noun;
            this.checks = new int[classes];
            this.within = new int[classes];
            this.covered = new int[classes];
            this.sampled = new long[classes];
            this.population = new long[classes];
            this.classOf = classOf;
            this.bound = bound;
        }

        /** Every group in one class, all with bound {@code eMax}. */
        static Tally pooled(double eMax) {
            return new Tally("all groups", 1, g -> 0, g -> eMax);
        }

        /**
         * Checks one run's answers against {@code truth} (window start -> group -> {records, sum})
         * and counts its sampled averages. Exact, whatever the sample: every answer's population,
         * every count, the estimates of (window, group)s sampled whole (census). A sum is M times
         * its average (M exact), so it is covered exactly when its average is; only averages are
         * counted.
         */
        void add(
                List<WindowEstimate> results, Map<Long, Map<Integer, double[]>> truth, String run) {
            Map<String, WindowEstimate> avgs = new HashMap<>();
            for (WindowEstimate e : results) {
                if (e.aggregate.startsWith("avg")) {
                    avgs.put(e.windowStart + "/" + e.group, e);
                }
            }
            int answers = 0;
            for (WindowEstimate e : results) {
                int g = Integer.parseInt(e.group);
                int c = classOf.applyAsInt(g);
                double[] t = truth.get(e.windowStart).get(g);
                assertEquals((long) t[0], e.populationRecords, e.toString());
                assertEquals(
                        bound.applyAsDouble(g),
                        e.eMax,
                        "the answer carries its group's bound: " + e);
                if (e.aggregate.equals("count")) {
                    assertEquals(t[0], e.estimate, e.toString());
                    answers++;
                    sampled[c] += e.sampleRecords;
                    population[c] += e.populationRecords;
                    continue;
                }
                boolean avg = e.aggregate.startsWith("avg");
                double exact = avg ? t[1] / t[0] : t[1];
                if (e.sampleRecords == e.populationRecords) {
                    censusChecks++;
                    assertEquals(exact, e.estimate, 1e-9 * Math.abs(exact), e.toString());
                    continue;
                }
                if (!avg) {
                    WindowEstimate a = avgs.get(e.windowStart + "/" + e.group);
                    assertEquals(a.covers(t[1] / t[0]), e.covers(exact), e.toString());
                    assertEquals(
                            e.populationRecords * a.estimate,
                            e.estimate,
                            1e-9 * Math.abs(e.estimate),
                            e.toString());
                    continue;
                }
                checks[c]++;
                if (e.relativeError(exact) <= bound.applyAsDouble(g)) {
                    within[c]++;
                }
                if (e.covers(exact)) {
                    covered[c]++;
                }
            }
            assertEquals(
                    truth.values().stream().mapToInt(Map::size).sum(),
                    answers,
                    "one count per (window, group), " + run);
        }

        int allChecks() {
            int n = 0;
            for (int c : checks) {
                n += c;
            }
            return n;
        }

        private static int sum(int[] a) {
            int n = 0;
            for (int x : a) {
                n += x;
            }
            return n;
        }

        /** One line per class: checks, rates, share of records sampled. */
        String describe() {
            StringBuilder b = new StringBuilder();
            for (int c = 0; c < checks.length; c++) {
                b.append(
                        String.format(
                                "%n  %s: %d sampled averages, within e_max %.3f, covered %.3f,"
                                        + " %.1f%% of records sampled",
                                checks.length == 1 ? noun : noun + " " + c,
                                checks[c],
                                (double) within[c] / checks[c],
                                (double) covered[c] / checks[c],
                                100.0 * sampled[c] / population[c]));
            }
            if (checks.length > 1) {
                b.append(
                        String.format(
                                "%n  pooled: within %.3f, covered %.3f over %d",
                                (double) sum(within) / allChecks(),
                                (double) sum(covered) / allChecks(),
                                allChecks()));
            }
            b.append(String.format("%n  %d census checks exact", censusChecks));
            return b.toString();
        }

        /**
         * Asserts that each class has at least {@code minChecks} sampled averages and that its
         * averages within their bound, and those covered by their interval, each reach the binomial
         * floor. One class: its two assertions share {@link #FALSE_ALARM}. Several: the per-class
         * assertions share half of it, the pooled within and covered rates the other half.
         */
        void assertRates(int minChecks) {
            String report = describe();
            int classes = checks.length;
            double perClass = classes == 1 ? FALSE_ALARM / 2 : FALSE_ALARM / 2 / (2 * classes);
            for (int c = 0; c < classes; c++) {
                assertTrue(
                        checks[c] >= minChecks,
                        noun + " " + c + ": too few sampled averages " + checks[c] + report);
                int floor = floor(checks[c], perClass);
                assertTrue(
                        within[c] >= floor,
                        noun
                                + " "
                                + c
                                + " within e_max "
                                + within[c]
                                + " of "
                                + checks[c]
                                + " < "
                                + floor
                                + report);
                assertTrue(
                        covered[c] >= floor,
                        noun
                                + " "
                                + c
                                + " covered "
                                + covered[c]
                                + " of "
                                + checks[c]
                                + " < "
                                + floor
                                + report);
            }
            if (classes > 1) {
                int floor = floor(allChecks(), FALSE_ALARM / 4);
                assertTrue(sum(within) >= floor, "pooled within e_max < " + floor + report);
                assertTrue(sum(covered) >= floor, "pooled coverage < " + floor + report);
            }
        }
    }
}
