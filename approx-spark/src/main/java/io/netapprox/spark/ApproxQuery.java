package io.netapprox.spark;

import io.netapprox.core.sampling.AggregateKind;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.rdd.ShuffledRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.Tuple2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * A stratified-sampling query with per-group error bounds:
 *
 * <pre>{@code
 * Dataset<Row> r = ApproxQuery.on(trips)
 *     .groupBy("hour")
 *     .avg("distance").sum("fare").count().median("fare").topK("zone", 15)
 *     .errorBound(0.05)                 // default e_max (relative), per group
 *     .errorBound("hour=17", 0.01)      // a group's own bound
 *     .confidence(0.95)
 *     .run();
 * }</pre>
 *
 * The result has one row per group and aggregate (top-k: one row per rank) with the columns of
 * {@link #SCHEMA}: {@code group, aggregate, key, rank, estimate, low, high, confidence, e_max,
 * sample_rows, population_rows, approximate, relative_error, bound_met}: {@code low} and {@code
 * high} are the interval's lower and upper bounds, {@code relative_error} its half-width over
 * {@code |estimate|}, {@code bound_met} whether the group met e_max (its planned sample arrived in
 * full, or - under a time bound, {@link #within} - the interval from what arrived is within e_max
 * of the estimate). Under {@link ApproxShuffleManager} the records travel in an approximate shuffle
 * (ATP, per-group MSR from e_max); under any other shuffle manager, with {@code
 * spark.approx.enabled=false}, or with {@link #exact()}, the same plan runs over sort shuffle and
 * every answer is exact (zero-width interval).
 *
 * <p>Rows with a null group or aggregated value are skipped (every aggregate of the query skips a
 * row with a NULL in any aggregated column; {@link #failOnPartialNulls()} fails instead where Spark
 * SQL would answer otherwise). Group keys are {@code col=value[,col=value...]}; with several group
 * columns a value's {@code ,} and backslash are escaped by a backslash ({@link #keyValue}).
 */
public final class ApproxQuery implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final StructType SCHEMA =
            new StructType()
                    .add("group", DataTypes.StringType, false)
                    .add("aggregate", DataTypes.StringType, false)
                    .add("key", DataTypes.StringType, true)
                    .add("rank", DataTypes.IntegerType, true)
                    .add("estimate", DataTypes.DoubleType, false)
                    .add("low", DataTypes.DoubleType, false)
                    .add("high", DataTypes.DoubleType, false)
                    .add("confidence", DataTypes.DoubleType, false)
                    .add("e_max", DataTypes.DoubleType, false)
                    .add("sample_rows", DataTypes.LongType, false)
                    .add("population_rows", DataTypes.LongType, false)
                    .add("approximate", DataTypes.BooleanType, false)
                    .add("relative_error", DataTypes.DoubleType, false)
                    .add("bound_met", DataTypes.BooleanType, false);

    private final transient Dataset<Row> input;
    private final List<String> groupColumns = new ArrayList<>();
    private final List<String[]> aggregates = new ArrayList<>(); // kind, column, q, k
    private double errorBound = 0.05;
    private final Map<String, Double> errorBounds = new LinkedHashMap<>();
    private Double confidence;
    private Boolean exactPartials;
    private boolean exact;
    private long seed = System.nanoTime();
    private int partitions;
    private boolean failOnPartialNulls;
    private java.time.Duration within;
    private io.netapprox.core.sql.ApproxClause.Behavior behavior;
    private transient ApproxShuffleMetrics lastMetrics;
    private transient int lastRepairs;
    private transient int lastShortShares;
    private static final org.slf4j.Logger LOG =
            org.slf4j.LoggerFactory.getLogger(ApproxQuery.class);

    private ApproxQuery(Dataset<Row> input) {
        this.input = input;
    }

    public static ApproxQuery on(Dataset<Row> input) {
        return new ApproxQuery(input);
    }

    public ApproxQuery groupBy(String... columns) {
        groupColumns.addAll(List.of(columns));
        return this;
    }

    public ApproxQuery avg(String column) {
        aggregates.add(new String[] {"AVG", column, "0", "0"});
        return this;
    }

    public ApproxQuery sum(String column) {
        aggregates.add(new String[] {"SUM", column, "0", "0"});
        return this;
    }

    public ApproxQuery count() {
        aggregates.add(new String[] {"COUNT", "*", "0", "0"});
        return this;
    }

    /**
     * The q-quantile of {@code column} as Spark's {@code percentile_disc(q) WITHIN GROUP (ORDER BY
     * column)}: the {@code max(1, ceil(q N))}-th smallest of the group's N values (NaN largest), no
     * interpolation. Label {@code quantile(column,q)}.
     */
    public ApproxQuery quantile(String column, double q) {
        return quantile(column, q, false);
    }

    /**
     * {@link #quantile(String, double)} counted from the largest value when {@code descending}
     * (Spark's {@code percentile_disc(q) WITHIN GROUP (ORDER BY column DESC)}; label {@code
     * quantile(column,q,desc)}).
     */
    public ApproxQuery quantile(String column, double q, boolean descending) {
        return addQuantile(column, q, ApproxSpec.QuantileMethod.DISCRETE, descending);
    }

    /**
     * The q-quantile of {@code column} as Spark's {@code percentile(column, q)} (and {@code
     * percentile_cont}): position {@code (N - 1) q} of the sorted values (NaN largest),
     * interpolated linearly between the two closest ranks. Label {@code percentile(column,q)},
     * {@code median(column)} for q = 0.5.
     */
    public ApproxQuery percentile(String column, double q) {
        return percentile(column, q, false);
    }

    /**
     * {@link #percentile(String, double)} counted from the largest value when {@code descending}
     * (Spark's {@code percentile_cont(q) WITHIN GROUP (ORDER BY column DESC)}; label {@code
     * percentile(column,q,desc)}).
     */
    public ApproxQuery percentile(String column, double q, boolean descending) {
        return addQuantile(column, q, ApproxSpec.QuantileMethod.INTERPOLATED, descending);
    }

    private ApproxQuery addQuantile(
            String column, double q, ApproxSpec.QuantileMethod method, boolean descending) {
        if (!(q > 0 && q < 1)) {
            throw new IllegalArgumentException("quantile must be in (0, 1), got " + q);
        }
        aggregates.add(
                new String[] {
                    "QUANTILE",
                    column,
                    Double.toString(q),
                    "0",
                    method.name(),
                    Boolean.toString(descending)
                });
        return this;
    }

    /**
     * The median of {@code column} as Spark's {@code median}: {@link #percentile(String, double)}
     * at 0.5 (the mean of the two middle values of an even count).
     */
    public ApproxQuery median(String column) {
        return percentile(column, 0.5);
    }

    /**
     * The k most frequent values of {@code column} per group, with estimated counts. One top-k
     * column per query.
     */
    public ApproxQuery topK(String column, int k) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be >= 1, got " + k);
        }
        aggregates.add(new String[] {"TOPK", column, "0", Integer.toString(k)});
        return this;
    }

    /** Default relative error bound e_max of every group (e.g. 0.05 = 5%). */
    public ApproxQuery errorBound(double eMax) {
        checkBound(eMax);
        this.errorBound = eMax;
        return this;
    }

    /** e_max of one group, e.g. {@code errorBound("hour=17", 0.01)}. */
    public ApproxQuery errorBound(String group, double eMax) {
        checkBound(eMax);
        errorBounds.put(group, eMax);
        return this;
    }

    /** Confidence of the bounds and intervals (default {@code spark.approx.confidence}, 0.95). */
    public ApproxQuery confidence(double c) {
        if (!(c > 0 && c < 1)) {
            throw new IllegalArgumentException("confidence must be in (0, 1), got " + c);
        }
        this.confidence = c;
        return this;
    }

    /**
     * Whether avg and sum use the map tasks' exact partials (default {@code
     * spark.approx.exactPartials}, true): with them a share's avg/sum contribution is exact and the
     * sample is taken only for quantiles, top-k and shares without a partial; {@code false} answers
     * avg and sum from the sample, with sampling intervals.
     */
    public ApproxQuery exactPartials(boolean on) {
        this.exactPartials = on;
        return this;
    }

    /** Answer exactly (sort shuffle), e.g. to compare. */
    public ApproxQuery exact() {
        this.exact = true;
        return this;
    }

    /** Seed of the map side's random framing (default: time based). */
    public ApproxQuery seed(long s) {
        this.seed = s;
        return this;
    }

    /**
     * Spark SQL's NULL semantics, or a failure naming the column: a row with a NULL in one of the
     * aggregated columns (value columns and the top-k column) is skipped by every aggregate of the
     * query (see the class comment). Spark SQL's {@code avg}/{@code sum} ignore NULLs per column
     * and {@code count(*)} counts every row, so the two agree only when the query aggregates one
     * column and no {@code count}. With this set, a query of {@code count} and a column, or of
     * several columns, fails (when it runs) on the first such row, with a message naming the
     * column, instead of answering over the rows complete in every column. The SQL form ({@code
     * WITH ERROR}) sets it.
     */
    public ApproxQuery failOnPartialNulls() {
        this.failOnPartialNulls = true;
        return this;
    }

    /**
     * The aggregated columns in the order {@link RowRecords} reads them (value columns, then the
     * top-k column) when a NULL in one of them must fail the query ({@link #failOnPartialNulls()}
     * and the query's answers depend on which rows are complete), else null.
     */
    private String[] nullChecked(ApproxSpec spec) {
        if (!failOnPartialNulls) {
            return null;
        }
        List<String> cols = new ArrayList<>(valueColumns(spec));
        String top = topKColumn(spec);
        if (top != null) {
            cols.add(top);
        }
        boolean count = spec.aggregates().stream().anyMatch(a -> a.kind() == AggregateKind.COUNT);
        long distinct = cols.stream().distinct().count();
        return (count && distinct >= 1) || distinct >= 2 ? cols.toArray(new String[0]) : null;
    }

    /** The message of a NULL in column {@code column} that {@link #failOnPartialNulls()} fails. */
    static String partialNullMessage(String column) {
        return "NULL in the aggregated column " + column + partialNullAdvice(column);
    }

    /** What the failure of {@link #partialNullMessage} says after naming the column (and group). */
    static String partialNullAdvice(String column) {
        return ": an approximate query skips a row with a NULL in any aggregated column, so"
                + " with count(*) or several aggregated columns its answers would differ from"
                + " Spark SQL's (avg/sum ignore NULLs per column, count(*) counts every row);"
                + " filter the rows (WHERE "
                + column
                + " IS NOT NULL), replace the NULLs (coalesce), or aggregate the columns in"
                + " separate queries";
    }

    /**
     * A time bound: each reduce task stops waiting for the transport {@code d} after it starts
     * fetching (its shuffle read) and answers from what arrived, each row's {@code bound_met}
     * saying whether the group still met e_max; ATP gets what is left of it as the job's deadline
     * (the groups furthest behind their targets are sent first). Default: {@code
     * spark.approx.within} of the session, else none.
     */
    public ApproxQuery within(java.time.Duration d) {
        if (d == null
                || d.compareTo(java.time.Duration.ofMillis(1)) < 0
                || d.compareTo(ApproxConf.MAX_WITHIN) > 0) {
            throw new IllegalArgumentException("within must be between 1 ms and 1 day, got " + d);
        }
        this.within = d;
        return this;
    }

    /**
     * What to do with groups that miss their bound: {@code ANSWER} (answer, {@code bound_met}
     * false) or {@code FAIL} (the query fails naming them; its result is then computed by {@link
     * #run()} itself). Default: {@code spark.approx.behavior} of the session, else ANSWER.
     */
    public ApproxQuery behavior(io.netapprox.core.sql.ApproxClause.Behavior b) {
        this.behavior = java.util.Objects.requireNonNull(b, "behavior");
        return this;
    }

    /** The spec with this query's time bound and behavior, or the session's defaults. */
    private ApproxSpec timed(ApproxSpec s, SparkSession spark) {
        java.time.Duration w =
                within != null
                        ? within
                        : ApproxConf.within(spark.conf().get(ApproxConf.PREFIX + "within", null));
        io.netapprox.core.sql.ApproxClause.Behavior b =
                behavior != null
                        ? behavior
                        : ApproxConf.behavior(
                                spark.conf().get(ApproxConf.PREFIX + "behavior", null));
        return s.withTimeBound(w == null ? 0 : w.toNanos(), b);
    }

    /** Reduce partitions (default: the context's default parallelism). */
    public ApproxQuery partitions(int n) {
        if (n < 1) {
            throw new IllegalArgumentException("partitions must be >= 1, got " + n);
        }
        this.partitions = n;
        return this;
    }

    private static void checkBound(double e) {
        if (!(e > 0 && e < 1)) {
            throw new IllegalArgumentException(
                    "e_max must be a relative bound in (0, 1), got " + e);
        }
    }

    /** Builds the spec (value columns are numbered in first-use order). */
    ApproxSpec spec(double defaultConfidence) {
        return spec(defaultConfidence, true);
    }

    /** Builds the spec with the given defaults of the context's configuration. */
    ApproxSpec spec(double defaultConfidence, boolean defaultExactPartials) {
        if (groupColumns.isEmpty()) {
            throw new IllegalArgumentException("groupBy(...) needs at least one column");
        }
        if (aggregates.isEmpty()) {
            throw new IllegalArgumentException("no aggregate: add avg/sum/count/quantile/topK");
        }
        List<String> valueCols = new ArrayList<>();
        List<ApproxSpec.Aggregate> aggs = new ArrayList<>();
        String topCol = null;
        for (String[] a : aggregates) {
            AggregateKind kind = AggregateKind.valueOf(a[0]);
            int vi = -1;
            if (kind == AggregateKind.AVG
                    || kind == AggregateKind.SUM
                    || kind == AggregateKind.QUANTILE) {
                vi = valueCols.indexOf(a[1]);
                if (vi < 0) {
                    valueCols.add(a[1]);
                    vi = valueCols.size() - 1;
                }
            } else if (kind == AggregateKind.TOPK) {
                if (topCol != null && !topCol.equals(a[1])) {
                    throw new IllegalArgumentException(
                            "one top-k column per query, got " + topCol + " and " + a[1]);
                }
                topCol = a[1];
            }
            aggs.add(
                    new ApproxSpec.Aggregate(
                            kind,
                            a[1],
                            vi,
                            Double.parseDouble(a[2]),
                            Integer.parseInt(a[3]),
                            a.length > 4
                                    ? ApproxSpec.QuantileMethod.valueOf(a[4])
                                    : ApproxSpec.QuantileMethod.DISCRETE,
                            a.length > 5 && Boolean.parseBoolean(a[5])));
        }
        for (String key : errorBounds.keySet()) {
            checkOverrideSyntax(key, groupColumns);
        }
        return new ApproxSpec(
                groupColumns,
                aggs,
                valueCols.size(),
                errorBound,
                errorBounds,
                confidence != null ? confidence : defaultConfidence,
                seed,
                exactPartials != null ? exactPartials : defaultExactPartials);
    }

    private List<String> valueColumns(ApproxSpec spec) {
        List<String> cols = new ArrayList<>();
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            if (a.valueIndex() >= 0 && cols.size() <= a.valueIndex()) {
                cols.add(a.column());
            }
        }
        return cols;
    }

    /** When the last map stage ended (System.nanoTime), for the driver's DEBUG timings; 0: none. */
    private long driverMark;

    /**
     * Runs the query; the result is computed when an action runs on the returned Dataset. Under
     * {@link ApproxShuffleManager} with {@code spark.approx.planning=shares} (the default) this
     * first runs the shuffle's map stage, whose tasks learn every map output's share of every group
     * while they write it (so each group's sample is allocated over its map outputs before the
     * reduce stage; see docs/sampling.md), and fails if an {@link #errorBound(String, double)}
     * override names no group. {@link #metrics()} then holds the shuffle's metrics. A query that
     * needs no sample ({@link ApproxSpec#needsSample()}: only count, and avg/sum with exact
     * partials) is Spark's own aggregation instead ({@link SparkAggregation}: exact, {@code
     * approximate} false, no metrics). Where no map stage learns the groups (Spark's aggregation,
     * {@code planning=local}, {@link #exact()}, sort shuffle), an override that names no group
     * fails here too, after one lookup query (two Spark jobs) that finds the named groups.
     */
    public Dataset<Row> run() {
        SparkSession spark = input.sparkSession();
        ApproxSpec unplanned =
                timed(spec(defaultConfidence(spark), defaultExactPartials(spark)), spark);
        ApproxConf approx = approximatePath();
        boolean statisticsPass =
                approx != null
                        && unplanned.needsSample()
                        && approx.planning() == ApproxConf.Planning.SHARES;
        if (!statisticsPass && !unplanned.errorBounds().isEmpty()) {
            // no map stage's statistics will know the groups: look the named ones up now
            checkOverridesExist(unplanned);
        }
        if (approx != null && !unplanned.needsSample()) {
            // every answer is exact from the partials and nothing is sampled: Spark's own partial
            // aggregation shuffles one record per (map task, group), not a pre-sample
            lastMetrics = null;
            return SparkAggregation.answer(
                    input,
                    typedGroupColumns(),
                    doubleValueColumns(unplanned),
                    unplanned,
                    nullChecked(unplanned) != null);
        }
        Shuffled shuffled = shuffle(unplanned);
        JavaRDD<Object> reduced = shuffled.reduced();
        ApproxSpec spec = shuffled.spec();
        JavaRDD<Row> results =
                reduced.mapPartitions(it -> GroupAggregator.aggregate(spec, it).iterator());
        Dataset<Row> out = spark.createDataFrame(results, SCHEMA);
        if (spec.behavior() == io.netapprox.core.sql.ApproxClause.Behavior.FAIL) {
            out = failOnMissedBounds(spark, out);
        }
        if (LOG.isDebugEnabled() && driverMark != 0) {
            LOG.debug(
                    "NetApprox driver: {} ms from the map stage's end to the answer's Dataset",
                    RemotePulls.ms(System.nanoTime() - driverMark));
        }
        return out;
    }

    /**
     * BEHAVIOR FAIL: computes the answer now (one row per group and aggregate, small) and fails
     * naming every group that missed its bound, else returns the rows as they are.
     */
    private static Dataset<Row> failOnMissedBounds(SparkSession spark, Dataset<Row> out) {
        List<Row> rows = out.collectAsList();
        java.util.Set<String> missed = new java.util.TreeSet<>();
        int met = SCHEMA.fieldIndex("bound_met");
        for (Row r : rows) {
            if (!r.getBoolean(met)) {
                missed.add(r.getString(0));
            }
        }
        if (!missed.isEmpty()) {
            throw new BoundMissedException(missed);
        }
        return spark.createDataFrame(rows, SCHEMA);
    }

    /** BEHAVIOR FAIL: groups missed their error bound (by the time bound, or short of plan). */
    public static final class BoundMissedException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final java.util.Set<String> groups;

        BoundMissedException(java.util.Set<String> groups) {
            super(
                    "BEHAVIOR FAIL: "
                            + groups.size()
                            + " group(s) missed their error bound: "
                            + String.join("; ", groups.stream().limit(50).toList())
                            + (groups.size() > 50 ? "; ..." : ""));
            this.groups = java.util.Set.copyOf(groups);
        }

        /** The groups that missed. */
        public java.util.Set<String> groups() {
            return groups;
        }
    }

    private static boolean defaultExactPartials(SparkSession spark) {
        return ApproxConf.fromSpark(spark.sparkContext().getConf()).exactPartials();
    }

    private static double defaultConfidence(SparkSession spark) {
        return Double.parseDouble(
                spark.sparkContext().getConf().get(ApproxConf.PREFIX + "confidence", "0.95"));
    }

    /**
     * Testing: what the reducers received, {@code (group, StratumSample)} (approximate) or {@code
     * (group, ApproxRow)}.
     */
    JavaRDD<Object> received() {
        SparkSession spark = input.sparkSession();
        return shuffle(timed(spec(defaultConfidence(spark), defaultExactPartials(spark)), spark))
                .reduced();
    }

    /** What the reducers receive, and the spec (with its plan) the shuffle was made with. */
    private record Shuffled(JavaRDD<Object> reduced, ApproxSpec spec) {}

    /**
     * The configuration of the approximate path when this query will take it (ApproxShuffleManager,
     * enabled, not {@link #exact()}), else null.
     */
    private ApproxConf approximatePath() {
        if (exact) {
            return null;
        }
        org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
        if (env != null
                && env.shuffleManager() instanceof ApproxShuffleManager m
                && m.approxConf().enabled()) {
            return m.approxConf();
        }
        return null;
    }

    /**
     * Registers the shuffle's accumulators and, under {@code planning=shares}, plans it: runs the
     * map stage now ({@code SparkContext.submitMapStage}, as adaptive query execution does), whose
     * writers send every (map output, group)'s {@link ShareStatistics} with their task results,
     * then allocates each group over its map outputs ({@link SamplingPlan}) and attaches the plan
     * for the reduce stage. The input is computed once; the reduce stage reuses the map output.
     */
    private Planned instrumentAndPlan(
            org.apache.spark.SparkContext sc,
            ShuffledRDD<String, ApproxRow, ApproxRow> shuffled,
            ApproxSpec spec,
            QueryState state,
            ApproxConf approx) {
        @SuppressWarnings("unchecked")
        org.apache.spark.ShuffleDependency<String, ApproxRow, ApproxRow> dep =
                (org.apache.spark.ShuffleDependency<String, ApproxRow, ApproxRow>)
                        shuffled.dependencies().head();
        boolean shares = approx.planning() == ApproxConf.Planning.SHARES;
        ShareStatisticsAccumulator statistics = null;
        if (shares) {
            statistics = new ShareStatisticsAccumulator();
            sc.register(statistics);
        }
        ApproxShuffleMetrics metrics = ApproxShuffleMetrics.register(sc, dep.shuffleId());
        state.instrument(statistics, metrics);
        lastMetrics = metrics;
        if (!shares) {
            return null;
        }
        if (shuffled.prev().partitions().length > 0) {
            String before = sc.getLocalProperty("spark.job.description");
            sc.setJobDescription(
                    "NetApprox: map stage of approximate shuffle "
                            + dep.shuffleId()
                            + " (per-group statistics for the plan)");
            try {
                sc.submitMapStage(dep).get();
                driverMark = System.nanoTime();
            } catch (Exception e) {
                // the innermost message says why (a failed task's exception, as text), not
                // "Exception thrown in awaitResult"
                Throwable root = e;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                throw e instanceof RuntimeException r
                        ? r
                        : new IllegalStateException(
                                "the map stage of approximate shuffle "
                                        + dep.shuffleId()
                                        + " failed: "
                                        + root.getMessage(),
                                e);
            } finally {
                sc.setLocalProperty("spark.job.description", before);
            }
        }
        long t0 = System.nanoTime();
        Map<String, Map<Integer, ShareStatistics>> byGroup = statistics.byGroup();
        checkOverridesName(spec, byGroup.keySet());
        long t1 = System.nanoTime();
        SamplingPlan plan = SamplingPlan.of(spec, byGroup);
        long t2 = System.nanoTime();
        state.plan(JavaSparkContext.fromSparkContext(sc).broadcast(plan));
        long t3 = System.nanoTime();
        if (LOG.isDebugEnabled()) {
            LOG.debug(
                    "NetApprox driver after the map stage of shuffle {}: statistics merged in {} ms,"
                            + " plan {} ms, broadcast {} ms ({} groups)",
                    dep.shuffleId(),
                    RemotePulls.ms(t1 - t0),
                    RemotePulls.ms(t2 - t1),
                    RemotePulls.ms(t3 - t2),
                    byGroup.size());
        }
        return new Planned(byGroup, plan);
    }

    /**
     * The input and grouping of this query, as a key of {@link ShortLayouts}: the analysed input
     * plan's semantic hash (the same for the same Dataset, and for plans that differ only
     * cosmetically) and the group columns; null when it cannot be computed.
     */
    private String layoutKey() {
        try {
            return input.queryExecution().analyzed().semanticHash() + "|" + groupColumns;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * Inputs (with their grouping) whose map output was short of the plan under the spread sizing,
     * remembered on the driver so that later queries on them size shares as whole groups instead of
     * repairing each time. Bounded: the {@value #MAX} most recent.
     */
    static final class ShortLayouts {
        static final int MAX = 256;
        private static final Map<String, Boolean> SEEN =
                new LinkedHashMap<>(16, 0.75f, true) {
                    @Override
                    protected boolean removeEldestEntry(Map.Entry<String, Boolean> e) {
                        return size() > MAX;
                    }
                };

        static synchronized boolean seen(String key) {
            return SEEN.get(key) != null;
        }

        static synchronized void remember(String key) {
            SEEN.put(key, Boolean.TRUE);
        }

        static synchronized void clear() {
            SEEN.clear();
        }
    }

    /** The share statistics of a planned shuffle's map stage and the plan made from them. */
    private record Planned(Map<String, Map<Integer, ShareStatistics>> byGroup, SamplingPlan plan) {}

    /**
     * Testing: how many times this query's last {@link #run()} ran its map stage again because the
     * first output was short of the plan ({@code spark.approx.mapSampleRepair}); 0 or 1.
     */
    int mapStageRepairs() {
        return lastRepairs;
    }

    /** Testing: shares short of plan in the last run's first map stage (before any repair). */
    int firstStageShortShares() {
        return lastShortShares;
    }

    /**
     * The metrics of the approximate shuffle of this query's most recent {@link #run()} (Spark
     * accumulators, also shown in the Spark UI; filled as its reduce tasks finish), or null when
     * that run did not take the approximate path.
     */
    public ApproxShuffleMetrics metrics() {
        return lastMetrics;
    }

    /** Every override must name a group of the query (the map stage's statistics know them all). */
    static void checkOverridesName(ApproxSpec spec, java.util.Set<String> groups) {
        List<String> unknown = new ArrayList<>();
        for (String key : spec.errorBounds().keySet()) {
            if (!groups.contains(key)) {
                unknown.add(key);
            }
        }
        if (!unknown.isEmpty()) {
            List<String> known = new ArrayList<>(groups);
            java.util.Collections.sort(known);
            throw unknownOverrides(
                    unknown, known.subList(0, Math.min(KNOWN_SHOWN, known.size())), known.size());
        }
    }

    /** Groups an unknown-override failure lists. */
    private static final int KNOWN_SHOWN = 30;

    private static IllegalArgumentException unknownOverrides(
            List<String> unknown, List<String> firstKnown, long knownGroups) {
        String shown =
                knownGroups <= firstKnown.size()
                        ? firstKnown.toString()
                        : firstKnown + " ... (" + knownGroups + " groups)";
        return new IllegalArgumentException(
                "errorBound override(s) "
                        + unknown
                        + " match no group of the query; "
                        + "known groups: "
                        + shown);
    }

    /**
     * Every override must name a group of the query, where no statistics pass learns the groups
     * (Spark's aggregation, {@code planning=local}, {@link #exact()}, sort shuffle): one query (a
     * distinct: two Spark jobs under adaptive execution) reads the group columns, keeps the rows
     * every aggregate would read (no NULL in a group or aggregated column) and looks the named keys
     * up - the keys as the answer writes them ({@link SparkAggregation#groupKey}). An unknown key
     * fails listing the first known groups (two more jobs, only then).
     */
    private void checkOverridesExist(ApproxSpec spec) {
        List<Column> cols = new ArrayList<>();
        List<Column> keys = typedGroupColumns();
        for (int i = 0; i < keys.size(); i++) {
            cols.add(keys.get(i).as("g" + i));
        }
        List<Column> aggregated = new ArrayList<>(doubleValueColumns(spec));
        String top = topKColumn(spec);
        if (top != null) {
            aggregated.add(column(top).cast(DataTypes.StringType));
        }
        Column complete = functions.lit(true);
        for (Column c : keys) {
            complete = complete.and(c.isNotNull());
        }
        for (Column c : aggregated) {
            complete = complete.and(c.isNotNull());
        }
        Dataset<Row> groups =
                input.where(complete)
                        .select(cols.toArray(new Column[0]))
                        .select(SparkAggregation.groupKey(spec).as("group"));
        List<String> named = new ArrayList<>(spec.errorBounds().keySet());
        java.util.Set<String> found = new java.util.HashSet<>();
        for (Row r :
                groups.where(functions.col("group").isin(named.toArray()))
                        .distinct()
                        .collectAsList()) {
            found.add(r.getString(0));
        }
        List<String> unknown = new ArrayList<>();
        for (String key : named) {
            if (!found.contains(key)) {
                unknown.add(key);
            }
        }
        if (unknown.isEmpty()) {
            return;
        }
        Dataset<Row> distinct = groups.distinct();
        List<String> first = new ArrayList<>();
        for (Row r : distinct.orderBy("group").limit(KNOWN_SHOWN).collectAsList()) {
            first.add(r.getString(0));
        }
        long total = first.size() < KNOWN_SHOWN ? first.size() : distinct.count();
        throw unknownOverrides(unknown, first, total);
    }

    /**
     * Override keys must have the form of group keys: {@code col=value} for each groupBy column, in
     * order, joined by commas (checked when the query is built, whatever the planning).
     */
    static void checkOverrideSyntax(String key, List<String> groupColumns) {
        String expected =
                groupColumns.stream()
                        .map(c -> c + "=<value>")
                        .collect(java.util.stream.Collectors.joining(","));
        int at = 0;
        for (int i = 0; i < groupColumns.size(); i++) {
            String prefix = (i == 0 ? "" : ",") + groupColumns.get(i) + "=";
            int found = i == 0 ? (key.startsWith(prefix) ? 0 : -1) : key.indexOf(prefix, at);
            if (found < 0) {
                throw new IllegalArgumentException(
                        "errorBound override key \""
                                + key
                                + "\" is not a group key of "
                                + "groupBy"
                                + groupColumns
                                + ": expected "
                                + expected
                                + " (no spaces around '=')");
            }
            at = found + prefix.length();
        }
    }

    /**
     * A column by its exact name when the input has one (SQL names expressions by their text, e.g.
     * {@code distance * 1.609}, dots included), else as Spark parses the name (nested fields).
     */
    private Column column(String name) {
        for (String c : input.columns()) {
            if (c.equals(name)) {
                return functions.col("`" + name.replace("`", "``") + "`");
            }
        }
        return functions.col(name);
    }

    /**
     * The input as the query reads it: the group columns cast to string ({@code g0, g1, ...}), the
     * value columns to double ({@code v0, ...}, in {@link ApproxSpec.Aggregate#valueIndex()}
     * order), then the top-k column cast to string ({@code k}), if any.
     */
    private Dataset<Row> projected(ApproxSpec spec) {
        List<String> valueCols = valueColumns(spec);
        String topCol = topKColumn(spec);
        List<Column> sel = new ArrayList<>();
        for (int i = 0; i < groupColumns.size(); i++) {
            Column g = column(groupColumns.get(i));
            // integral columns stay numbers: RowRecords writes their decimal form (what Spark's
            // cast to string writes) once per distinct value instead of Spark casting every row
            sel.add(
                    (integralKind(dataType(groupColumns.get(i))) != RowRecords.STRING
                                    ? g
                                    : g.cast(DataTypes.StringType))
                            .as("g" + i));
        }
        for (int i = 0; i < valueCols.size(); i++) {
            sel.add(column(valueCols.get(i)).cast(DataTypes.DoubleType).as("v" + i));
        }
        if (topCol != null) {
            sel.add(column(topCol).cast(DataTypes.StringType).as("k"));
        }
        return input.select(sel.toArray(new Column[0]));
    }

    /**
     * The group columns as {@link SparkAggregation} groups them, as expressions over the input (no
     * Dataset is built, so nothing is analysed here): those whose values group exactly as their
     * strings do (integral, string, boolean, date) keep their type, so Spark hashes them without a
     * per-row string conversion and only the aggregated keys are cast; floating-point keys are cast
     * to strings ({@code -0.0} and {@code 0.0} are one group as doubles but two as strings, as on
     * the sampling path), so are nested types.
     */
    private List<Column> typedGroupColumns() {
        List<Column> keys = new ArrayList<>();
        for (String name : groupColumns) {
            Column g = column(name);
            keys.add(groupsAsItsString(dataType(name)) ? g : g.cast(DataTypes.StringType));
        }
        return keys;
    }

    /** The value columns as doubles, in {@link ApproxSpec.Aggregate#valueIndex()} order. */
    private List<Column> doubleValueColumns(ApproxSpec spec) {
        List<Column> values = new ArrayList<>();
        for (String name : valueColumns(spec)) {
            values.add(column(name).cast(DataTypes.DoubleType));
        }
        return values;
    }

    /**
     * The type of an input column: from the input's schema for a column of that exact name (no
     * analysis), else (a nested field) by resolving it.
     */
    private org.apache.spark.sql.types.DataType dataType(String name) {
        for (StructField f : input.schema().fields()) {
            if (f.name().equals(name)) {
                return f.dataType();
            }
        }
        return input.select(column(name)).schema().apply(0).dataType();
    }

    private static boolean groupsAsItsString(org.apache.spark.sql.types.DataType type) {
        // StringType by equality: the default (binary) collation only; a collated string column
        // (Spark 4) groups case- or accent-insensitively, its string cast does not
        return List.of(
                        DataTypes.ByteType,
                        DataTypes.ShortType,
                        DataTypes.IntegerType,
                        DataTypes.LongType,
                        DataTypes.StringType,
                        DataTypes.BooleanType,
                        DataTypes.DateType)
                .contains(type);
    }

    /**
     * How {@link RowRecords} reads a group column of this type (projected uncast unless STRING).
     */
    private static byte integralKind(org.apache.spark.sql.types.DataType type) {
        if (type.equals(DataTypes.LongType)) {
            return RowRecords.LONG;
        }
        if (type.equals(DataTypes.IntegerType)) {
            return RowRecords.INT;
        }
        if (type.equals(DataTypes.ShortType)) {
            return RowRecords.SHORT;
        }
        if (type.equals(DataTypes.ByteType)) {
            return RowRecords.BYTE;
        }
        return RowRecords.STRING;
    }

    private static String topKColumn(ApproxSpec spec) {
        return spec.aggregates().stream()
                .filter(a -> a.kind() == AggregateKind.TOPK)
                .map(ApproxSpec.Aggregate::column)
                .findFirst()
                .orElse(null);
    }

    /**
     * The projected input's internal rows ({@link #projected}: group columns as strings, values as
     * doubles, then the top-k column) as shuffle records {@code (group key, ApproxRow)}; rows with
     * a null group, value or top-k column are skipped. Reads each row in place (Spark's rows may be
     * reused between calls: only the doubles and the strings made from them are kept). With one
     * group column the group key of each distinct value is made once per partition and shared by
     * every record of the group (at most {@value #KEY_CACHE} distinct values are remembered; the
     * others are made per record).
     */
    static final class RowRecords
            implements org.apache.spark.api.java.function.FlatMapFunction<
                    java.util.Iterator<org.apache.spark.sql.catalyst.InternalRow>,
                    Tuple2<String, ApproxRow>> {
        private static final long serialVersionUID = 1L;
        static final int KEY_CACHE = 4096;

        /** A group column cast to string by the projection. */
        static final byte STRING = 0;

        /** Integral group columns, projected as they are. */
        static final byte LONG = 1;

        static final byte INT = 2;
        static final byte SHORT = 3;
        static final byte BYTE = 4;

        private final String[] names;
        private final byte[] kinds;
        private final int numValues;
        private final boolean withKey;

        /**
         * Names of the value columns and then the top-k column: a NULL in one of them fails the
         * task ({@link ApproxQuery#failOnPartialNulls()}); null: such rows are skipped.
         */
        private String[] nullChecked;

        /** Group columns cast to strings. */
        RowRecords(String[] names, int numValues, boolean withKey) {
            this(names, new byte[names.length], numValues, withKey);
        }

        /**
         * @param kinds per group column: {@link #STRING} (projected as a string) or the integral
         *     type it is projected as ({@link #LONG}, {@link #INT}, {@link #SHORT}, {@link #BYTE});
         *     its group value is then its decimal form, as Spark's cast to string writes it
         */
        RowRecords(String[] names, byte[] kinds, int numValues, boolean withKey) {
            if (kinds.length != names.length) {
                throw new IllegalArgumentException("one kind per group column");
            }
            this.names = names;
            this.kinds = kinds.clone();
            this.numValues = numValues;
            this.withKey = withKey;
        }

        /**
         * The rows carry {@link PreSampleGate}'s decision after their columns (the map task's
         * record gets it, {@link MapRecord#decision}).
         */
        private boolean gated;

        RowRecords gated(boolean on) {
            this.gated = on;
            return this;
        }

        /** A NULL in an aggregated column fails (names as {@link #nullChecked}); null: skipped. */
        RowRecords failOnNull(String[] columns) {
            this.nullChecked = columns == null ? null : columns.clone();
            return this;
        }

        private long integral(org.apache.spark.sql.catalyst.InternalRow r, int i) {
            return switch (kinds[i]) {
                case LONG -> r.getLong(i);
                case INT -> r.getInt(i);
                case SHORT -> r.getShort(i);
                default -> r.getByte(i);
            };
        }

        @Override
        public java.util.Iterator<Tuple2<String, ApproxRow>> call(
                java.util.Iterator<org.apache.spark.sql.catalyst.InternalRow> rows) {
            Keys keys = new Keys();
            MapRecord into = newRecord();
            return new java.util.Iterator<>() {
                private Tuple2<String, ApproxRow> next;

                @Override
                public boolean hasNext() {
                    while (next == null && rows.hasNext()) {
                        next = fill(rows.next(), keys, into) ? standalone(into) : null;
                    }
                    return next != null;
                }

                @Override
                public Tuple2<String, ApproxRow> next() {
                    if (!hasNext()) {
                        throw new java.util.NoSuchElementException();
                    }
                    Tuple2<String, ApproxRow> r = next;
                    next = null;
                    return r;
                }
            };
        }

        MapRecord newRecord() {
            return new MapRecord(numValues, withKey, names.length + numValues);
        }

        private static Tuple2<String, ApproxRow> standalone(MapRecord m) {
            return new Tuple2<>(m.key, m._2());
        }

        /**
         * A map task's group keys: each distinct value of one group column made once, with the
         * group's index in first-seen order (at most {@value #KEY_CACHE} values remembered).
         */
        static final class Keys {
            final java.util.Map<org.apache.spark.unsafe.types.UTF8String, Indexed> strings =
                    new java.util.HashMap<>();
            final Indexed[] small = new Indexed[KEY_CACHE]; // one integral column: 0..KEY_CACHE-1
            int groups;

            Indexed index(String key) {
                return new Indexed(key, groups < KEY_CACHE ? groups++ : -1);
            }
        }

        /** A remembered group key and its index (-1: not indexed). */
        record Indexed(String key, int index) {}

        /**
         * Reads one row into {@code into} (its key, group index and values; the top-k column is
         * left in the row, read only if the record is kept); false when the row is skipped.
         */
        boolean fill(org.apache.spark.sql.catalyst.InternalRow r, Keys keys, MapRecord into) {
            int g = names.length;
            for (int i = 0; i < g; i++) {
                if (r.isNullAt(i)) {
                    return false; // a NULL group: skipped (documented)
                }
            }
            int aggregated = numValues + (withKey ? 1 : 0);
            for (int i = g; i < g + aggregated; i++) {
                if (r.isNullAt(i)) {
                    if (nullChecked != null) {
                        throw new IllegalArgumentException(partialNullMessage(nullChecked[i - g]));
                    }
                    return false;
                }
            }
            if (g == 1 && kinds[0] != STRING) {
                long x = integral(r, 0);
                if (x >= 0 && x < KEY_CACHE) {
                    Indexed k = keys.small[(int) x];
                    if (k == null) {
                        k = keys.index(names[0] + "=" + x);
                        keys.small[(int) x] = k;
                    }
                    into.key = k.key();
                    into.group = k.index();
                } else {
                    into.key = names[0] + "=" + x;
                    into.group = -1;
                }
            } else if (g == 1) {
                org.apache.spark.unsafe.types.UTF8String u = r.getUTF8String(0);
                Indexed k = keys.strings.get(u);
                if (k == null) {
                    String key = names[0] + "=" + u;
                    if (keys.strings.size() < KEY_CACHE) {
                        k = keys.index(key);
                        keys.strings.put(u.clone(), k);
                    } else {
                        k = new Indexed(key, -1);
                    }
                }
                into.key = k.key();
                into.group = k.index();
            } else {
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < g; i++) {
                    if (i > 0) {
                        b.append(',');
                    }
                    b.append(names[i]).append('=');
                    if (kinds[i] == STRING) {
                        b.append(keyValue(r.getUTF8String(i).toString()));
                    } else {
                        b.append(integral(r, i));
                    }
                }
                into.key = b.toString();
                into.group = -1;
            }
            double[] v = into.values;
            for (int i = 0; i < numValues; i++) {
                v[i] = r.getDouble(g + i);
            }
            into.decision = gated ? r.getInt(g + aggregated) : PreSampleGate.UNDECIDED;
            into.row = r;
            return true;
        }
    }

    /**
     * The approximate path's form of {@link RowRecords}: every row read in place into one {@link
     * MapRecord} per map task, refilled row by row (no object per row; {@link ApproxShuffleWriter}
     * makes what it keeps). Only for a shuffle whose writer is the approximate one: sort shuffle
     * buffers the records it is given, so the exact path uses {@link RowRecords}.
     */
    static final class MapRecords
            implements org.apache.spark.api.java.function.FlatMapFunction<
                    java.util.Iterator<org.apache.spark.sql.catalyst.InternalRow>,
                    scala.Product2<String, ApproxRow>> {
        private static final long serialVersionUID = 1L;
        private final RowRecords rows;

        MapRecords(RowRecords rows) {
            this.rows = rows;
        }

        @Override
        public java.util.Iterator<scala.Product2<String, ApproxRow>> call(
                java.util.Iterator<org.apache.spark.sql.catalyst.InternalRow> in) {
            RowRecords.Keys keys = new RowRecords.Keys();
            MapRecord into = rows.newRecord();
            return new java.util.Iterator<>() {
                private boolean ready;

                @Override
                public boolean hasNext() {
                    while (!ready && in.hasNext()) {
                        ready = rows.fill(in.next(), keys, into);
                    }
                    return ready;
                }

                @Override
                public scala.Product2<String, ApproxRow> next() {
                    if (!hasNext()) {
                        throw new java.util.NoSuchElementException();
                    }
                    ready = false;
                    return into;
                }
            };
        }
    }

    /**
     * A value as it appears in a key of several group columns: backslashes and commas escaped by a
     * backslash, so that every key names one combination of values ({@code a="x,b=y", b="z"} and
     * {@code a="x", b="y,b=z"} would otherwise both be {@code a=x,b=y,b=z}). Keys of one group
     * column are {@code col=value} unescaped.
     */
    public static String keyValue(String value) {
        if (value.indexOf(',') < 0 && value.indexOf('\\') < 0) {
            return value;
        }
        return value.replace("\\", "\\\\").replace(",", "\\,");
    }

    private Shuffled shuffle(ApproxSpec unplanned) {
        driverMark = 0;
        ApproxSpec spec = unplanned;
        SparkSession spark = input.sparkSession();
        Dataset<Row> projected = projected(spec);
        String[] gcols = groupColumns.toArray(new String[0]);
        byte[] kinds = new byte[gcols.length];
        for (int i = 0; i < gcols.length; i++) {
            kinds[i] = integralKind(dataType(gcols[i]));
        }
        int nv = spec.numValues();
        boolean withKey = topKColumn(spec) != null;
        // Spark's internal rows (no conversion to Row per record: the key and values are read in
        // place, each distinct group key is made once per partition)
        ApproxConf approx = approximatePath();
        // the pre-sample decided in Spark's generated code where it can be: a dropped row never
        // leaves it (PreSampleGate; the approximate path only, whose writer opens the gate)
        boolean gated = approx != null && PreSampleGate.applies(kinds, nv);
        if (gated) {
            projected = PreSampleGate.gate(projected, gcols[0], nv, withKey);
        }
        RowRecords rows =
                new RowRecords(gcols, kinds, nv, withKey)
                        .failOnNull(nullChecked(spec))
                        .gated(gated);
        // the approximate writer takes each row as it comes (one reused record per task: a row's
        // fate is decided before anything is made of it); sort shuffle buffers records, so the
        // exact path makes one per row
        JavaRDD<org.apache.spark.sql.catalyst.InternalRow> source =
                projected.queryExecution().toRdd().toJavaRDD();
        JavaRDD<?> pairs =
                approx != null
                        ? source.mapPartitions(new MapRecords(rows))
                        : source.mapPartitions(rows);
        QueryState state = new QueryState();
        spec = spec.withState(state);
        int np = partitions > 0 ? partitions : spark.sparkContext().defaultParallelism();
        org.apache.spark.Partitioner partitioner =
                exact ? new org.apache.spark.HashPartitioner(np) : new ApproxPartitioner(np, spec);
        ClassTag<String> kt = ClassTag$.MODULE$.apply(String.class);
        ClassTag<ApproxRow> vt = ClassTag$.MODULE$.apply(ApproxRow.class);
        @SuppressWarnings({"unchecked", "rawtypes"})
        RDD<scala.Product2<String, ApproxRow>> prev = (RDD) pairs.rdd();
        ShuffledRDD<String, ApproxRow, ApproxRow> shuffled =
                new ShuffledRDD<>(prev, partitioner, kt, vt, vt);
        lastMetrics = null;
        lastRepairs = 0;
        lastShortShares = 0;
        String layoutKey = null;
        if (approx != null
                && approx.mapSampleSpread()
                && approx.planning() == ApproxConf.Planning.SHARES) {
            layoutKey = layoutKey();
            if (layoutKey != null && ShortLayouts.seen(layoutKey)) {
                // an earlier query on this input and grouping was short under the spread sizing
                // (e.g. the input is partitioned by the group key): size every share as its whole
                // group at once instead of paying the repair's second map stage again
                state.wholeGroupSizing(true);
            }
        }
        if (approx != null) {
            Planned planned =
                    instrumentAndPlan(spark.sparkContext(), shuffled, spec, state, approx);
            int shortShares =
                    planned == null ? 0 : WritePlan.shortShares(planned.byGroup(), planned.plan());
            lastShortShares = shortShares;
            if (shortShares > 0 && layoutKey != null && !state.wholeGroupSizing()) {
                ShortLayouts.remember(layoutKey);
            }
            if (shortShares > 0 && approx.mapSampleRepair()) {
                // the plan asks some map outputs for more of a group than they wrote (a group
                // held by fewer map outputs than the written sample assumed, shares of
                // different distributions): run the map stage again, each map output writing
                // what the plan asks of it (the census statistics are the same; the records
                // written are drawn afresh)
                LOG.info(
                        "approximate shuffle {}: {} share(s) short of plan, map stage re-run sized"
                                + " by the plan",
                        shuffled.dependencies().head().rdd().id(),
                        shortShares);
                QueryState again = new QueryState();
                spec = unplanned.withState(again);
                again.writePlan(
                        JavaSparkContext.fromSparkContext(spark.sparkContext())
                                .broadcast(
                                        WritePlan.of(
                                                planned.byGroup(),
                                                planned.plan(),
                                                approx.recordsPerMessage())));
                shuffled = new ShuffledRDD<>(prev, new ApproxPartitioner(np, spec), kt, vt, vt);
                Planned second =
                        instrumentAndPlan(spark.sparkContext(), shuffled, spec, again, approx);
                lastRepairs = 1;
                if (second != null) {
                    List<String> still =
                            WritePlan.describeShort(second.byGroup(), second.plan(), 5);
                    if (!still.isEmpty()) {
                        LOG.warn(
                                "approximate shuffle {}: still short of plan after the repair: {}",
                                shuffled.dependencies().head().rdd().id(),
                                still);
                    }
                }
            }
        }
        @SuppressWarnings({"unchecked", "rawtypes"})
        JavaRDD<Object> reduced = new JavaRDD(shuffled, ClassTag$.MODULE$.apply(Object.class));
        return new Shuffled(reduced, spec);
    }
}
