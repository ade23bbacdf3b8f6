package io.netapprox.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The map side written for groups spread alike over every map output ({@code
 * spark.approx.mapSampleSpread=true}: about M times less than the whole-group rule) is unsafe on
 * its own - a group held by fewer map outputs is asked more than was written - and safe with the
 * repair ({@code spark.approx.mapSampleRepair}, the default): the driver sees the shortfall after
 * the map stage and runs it again sized by the plan. Layouts over 8 input partitions (local[2],
 * real ATP over loopback, {@code submit=target}, 10% of the datagrams dropped, e_max 5%): a group
 * entirely in one partition (also the single-share case), a group split geometrically 1:2:...:128,
 * 75% in one partition with a differently distributed rest, and a group spread evenly.
 *
 * <ul>
 *   <li>spread without repair: shares short of plan (the old rule fails on the clustered groups);
 *   <li>spread with repair: every trial repaired, 0 groups short of plan and 0 below target, every
 *       layout's avg/sum/median within e_max and covered at the stated confidence over seeded
 *       trials (exact binomial floors);
 *   <li>spread with repair on the evenly spread layout alone: no repair, and the map side writes
 *       less than half of what the whole-group rule (the previous default) writes.
 * </ul>
 */
@Timeout(value = 1200, unit = TimeUnit.SECONDS)
class MapSampleRepairTest {
    static final int PARTITIONS = 8;
    static final int GROUP = 16_000;
    static final double E_MAX = 0.05;
    static final double CONFIDENCE = 0.95;

    /** {@code -Dnetapprox.repair.trials=N}. */
    static final int TRIALS = Integer.getInteger("netapprox.repair.trials", 60);

    static final StructType SCHEMA =
            new StructType()
                    .add("g", DataTypes.StringType, false)
                    .add("v", DataTypes.DoubleType, false);

    static SparkSession start(String repair, String spread) {
        return SparkTestSupport.local(
                "approx-map-sample-repair",
                SparkTestSupport.conf(
                        "spark.approx.submit", "target",
                        "spark.approx.recordsPerMessage", "8",
                        "spark.approx.faultDropOutgoing", "0.1",
                        "spark.approx.mapSampleSpread", spread,
                        "spark.approx.mapSampleRepair", repair));
    }

    /**
     * The layouts' rows per partition (seeded); {@code evenOnly}: the evenly spread group alone.
     */
    static Dataset<Row> data(SparkSession spark, boolean evenOnly) {
        SplittableRandom r = new SplittableRandom(42);
        List<List<Row>> parts = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            parts.add(new ArrayList<>());
        }
        for (int i = 0; i < GROUP; i++) {
            parts.get(i % PARTITIONS).add(RowFactory.create("even", lognormal(r, 0, 0.5)));
        }
        if (!evenOnly) {
            for (int i = 0; i < GROUP; i++) {
                parts.get(3).add(RowFactory.create("clustered", lognormal(r, 0, 0.5)));
            }
            // shares 1:2:4:...:128 of 255
            for (int p = 0, at = 0; p < PARTITIONS; p++) {
                int n = p == PARTITIONS - 1 ? GROUP - at : (int) ((long) GROUP * (1L << p) / 255);
                for (int i = 0; i < n; i++) {
                    parts.get(p).add(RowFactory.create("geometric", lognormal(r, 0, 0.5)));
                }
                at += n;
            }
            for (int i = 0; i < GROUP; i++) {
                if (i % 4 != 0) {
                    parts.get(5).add(RowFactory.create("mixed", lognormal(r, 0, 0.5)));
                } else {
                    int p = (i / 4) % (PARTITIONS - 1);
                    parts.get(p >= 5 ? p + 1 : p)
                            .add(RowFactory.create("mixed", lognormal(r, 1, 0.25)));
                }
            }
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Dataset<Row> d =
                spark.createDataFrame(
                                jsc.parallelize(parts, PARTITIONS).flatMap(List::iterator), SCHEMA)
                        .cache();
        d.count();
        return d;
    }

    static double lognormal(SplittableRandom r, double mu, double sigma) {
        double u = r.nextDouble();
        double w = r.nextDouble();
        return Math.exp(mu + sigma * Math.sqrt(-2 * Math.log(1 - u)) * Math.cos(2 * Math.PI * w));
    }

    static ApproxQuery query(Dataset<Row> d, long seed) {
        return ApproxQuery.on(d)
                .groupBy("g")
                .avg("v")
                .sum("v")
                .median("v")
                .exactPartials(false)
                .errorBound(E_MAX)
                .confidence(CONFIDENCE)
                .seed(seed);
    }

    /** Per trial: short shares of the first map stage, repairs, groups short / below, written. */
    record Outcome(long firstShort, long repairs, long shortOfPlan, long below, long written) {}

    static Outcome run(
            SparkSession spark,
            Dataset<Row> d,
            int trials,
            Map<String, Row> exact,
            Map<String, CoverageTally> byLayout,
            boolean forget) {
        TaskMetricsTally tasks = TaskMetricsTally.on(spark);
        long firstShort = 0;
        long repairs = 0;
        long shortOfPlan = 0;
        long below = 0;
        long written = 0;
        for (int t = 0; t < trials; t++) {
            TaskMetricsTally.Snapshot before = tasks.settle().snapshot();
            if (forget) {
                ApproxQuery.ShortLayouts.clear(); // each query as the first on this input
            }
            ApproxQuery q = query(d, 7000 + t);
            Map<String, Row> approx = SparkTestSupport.byKey(q.run());
            written += tasks.settle().snapshot().minus(before).recordsWritten();
            firstShort += q.firstStageShortShares();
            repairs += q.mapStageRepairs();
            Map<String, Object> m = q.metrics().values();
            shortOfPlan += (Long) m.get("groups short of plan");
            below += (Long) m.get("groups below target");
            assertEquals(exact.size(), approx.size());
            if (byLayout != null) {
                for (Map.Entry<String, Row> e : exact.entrySet()) {
                    String layout = e.getKey().substring(2, e.getKey().indexOf('|'));
                    byLayout.computeIfAbsent(layout, k -> new CoverageTally("layout " + k))
                            .add(e.getKey(), e.getValue().getDouble(4), approx.get(e.getKey()));
                }
            }
        }
        return new Outcome(firstShort, repairs, shortOfPlan, below, written);
    }

    static Map<String, Row> exact(Dataset<Row> d) {
        return SparkTestSupport.byKey(query(d, 0).exact().run());
    }

    @Test
    void spreadSizingAloneIsShortOnClusteredLayouts() {
        SparkSession spark = start("false", "true");
        try {
            Dataset<Row> d = data(spark, false);
            Outcome o = run(spark, d, 3, exact(d), null, true);
            System.out.printf(
                    "[spark] mapSampleSpread without repair, 3 trials: %d shares short of plan in"
                            + " the first map stage, %d repairs, groups short of plan %d%n",
                    o.firstShort(), o.repairs(), o.shortOfPlan());
            assertEquals(0, o.repairs());
            assertTrue(o.firstShort() > 0, "the spread rule writes too little of clustered groups");
            assertTrue(o.shortOfPlan() > 0, "and the reducers count them short of plan");
        } finally {
            spark.stop();
        }
    }

    @Test
    void spreadSizingWithRepairKeepsTheBoundOnEveryLayout() {
        SparkSession spark = start("true", "true");
        try {
            Dataset<Row> d = data(spark, false);
            Map<String, CoverageTally> byLayout = new java.util.TreeMap<>();
            Outcome o = run(spark, d, TRIALS, exact(d), byLayout, true);
            System.out.printf(
                    "[spark] mapSampleSpread with repair, %d trials: %d shares short in the first"
                            + " map stage, %d repairs, groups short of plan %d, below target %d%n",
                    TRIALS, o.firstShort(), o.repairs(), o.shortOfPlan(), o.below());
            assertEquals(TRIALS, o.repairs(), "the clustered groups make every trial repair");
            assertEquals(0, o.shortOfPlan(), "after the repair no share is short of plan");
            assertEquals(0, o.below(), "every share met its target");
            // 4 layouts share the false-alarm rate; avg, sum and median of a group: one sample
            double alpha = StatisticalFloor.FALSE_ALARM / byLayout.size();
            for (CoverageTally c : byLayout.values()) {
                c.assertPromise(CONFIDENCE, 3, alpha, true);
            }
        } finally {
            spark.stop();
        }
    }

    @Test
    void aShortInputIsRememberedAndSizedWholeNextTime() {
        SparkSession spark = start("true", "true");
        try {
            ApproxQuery.ShortLayouts.clear();
            Dataset<Row> d = data(spark, false);
            Outcome first = run(spark, d, 1, exact(d), null, false);
            Outcome next = run(spark, d, 3, exact(d), null, false);
            System.out.printf(
                    "[spark] clustered input, spread sizing: first query %d repair(s), the next 3"
                            + " queries %d repair(s), %d shares short in their first stage, groups"
                            + " short of plan %d%n",
                    first.repairs(), next.repairs(), next.firstShort(), next.shortOfPlan());
            assertEquals(1, first.repairs(), "the first query on the input is repaired");
            assertEquals(0, next.repairs(), "later queries size its shares as whole groups");
            assertEquals(0, next.firstShort());
            assertEquals(0, next.shortOfPlan());
        } finally {
            ApproxQuery.ShortLayouts.clear();
            spark.stop();
        }
    }

    @Test
    void evenlySpreadInputNeedsNoRepairAndWritesLess() {
        long[] written = new long[2];
        String[] spreads = {"false", "true"};
        for (int i = 0; i < 2; i++) {
            SparkSession spark = start("true", spreads[i]);
            try {
                Dataset<Row> d = data(spark, true);
                Outcome o = run(spark, d, 3, exact(d), null, true);
                written[i] = o.written();
                assertEquals(0, o.repairs(), "an evenly spread group needs no repair");
                assertEquals(0, o.shortOfPlan());
            } finally {
                spark.stop();
            }
        }
        System.out.printf(
                "[spark] evenly spread group, 3 trials: records written whole-group rule %d,"
                        + " spread rule %d (%.2fx)%n",
                written[0], written[1], (double) written[1] / written[0]);
        assertTrue(
                written[1] * 2 < written[0],
                "spread sizing writes less: " + written[1] + " vs " + written[0]);
    }
}
