package io.netapprox.spark.sql;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sql.ApproxClause;
import io.netapprox.core.sql.ApproxSqlException;
import io.netapprox.spark.ApproxQuery;
import io.netapprox.spark.SparkCompat;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A SQL query with a {@code WITH ERROR} clause, translated ({@link ApproxSqlTranslator}) into what
 * {@link ApproxQuery} runs: the input (the query's FROM, WHERE and the grouping and aggregated
 * expressions, one named column each) and the groups, aggregates and bounds.
 *
 * @param input the projection the approximate aggregation reads (unresolved; analysed per run)
 * @param aliasedInput the same projection with GROUP BY names that are select aliases of columns
 *     replaced by those columns ({@code SELECT hour AS h ... GROUP BY h}), read when {@code input}
 *     does not resolve (the input has no column {@code h}: Spark's group-by-alias rule); null if
 *     the query has no such name
 * @param groups the grouping columns of {@code input}, in GROUP BY order
 * @param aggregates the aggregates in SELECT order
 * @param errorBound default e_max
 * @param groupBounds per-group e_max by group key ({@code "hour=17"})
 * @param confidence confidence, or null for {@code spark.approx.confidence}
 * @param seed sample seed ({@code REPEATABLE}), or null
 * @param within time bound ({@code WITHIN}), or null for {@code spark.approx.within}
 * @param behavior {@code BEHAVIOR}, or null for {@code spark.approx.behavior}
 */
public record ApproxSqlQuery(
        LogicalPlan input,
        LogicalPlan aliasedInput,
        List<String> groups,
        List<Aggregate> aggregates,
        double errorBound,
        Map<String, Double> groupBounds,
        Double confidence,
        Long seed,
        java.time.Duration within,
        ApproxClause.Behavior behavior) {

    /**
     * One aggregate: kind, input column, quantile q, top-k k; {@code sql} as written; a quantile's
     * definition ({@code interpolated}: Spark's percentile/median/percentile_cont, else
     * percentile_disc's) and order ({@code descending}: {@code WITHIN GROUP (ORDER BY x DESC)}).
     */
    public record Aggregate(
            AggregateKind kind,
            String column,
            double q,
            int k,
            String sql,
            boolean interpolated,
            boolean descending) {
        Aggregate(AggregateKind kind, String column, double q, int k, String sql) {
            this(kind, column, q, k, sql, false, false);
        }
    }

    /** The input as a DataFrame, analysed (Spark's errors for unknown tables or columns). */
    Dataset<Row> inputFrame(SparkSession session) {
        Dataset<Row> df;
        try {
            df = SparkCompat.dataFrame(session, input);
        } catch (Exception e) { // AnalysisException (checked in Java's view, thrown by Scala)
            if (aliasedInput == null || !(e instanceof org.apache.spark.sql.AnalysisException)) {
                throw ApproxSqlQuery.<RuntimeException>rethrow(e);
            }
            try {
                df = SparkCompat.dataFrame(session, aliasedInput);
            } catch (Exception again) {
                // the first error names what the statement's names resolve to
                throw ApproxSqlQuery.<RuntimeException>rethrow(e);
            }
        }
        checkNumeric(df.schema());
        return df;
    }

    /** Analyses the input (Spark's errors for unknown tables or columns, ours for types). */
    public void checkInput(SparkSession session) {
        inputFrame(session);
    }

    /** The approximate query this SQL stands for (the statistics pass runs in {@code run()}). */
    ApproxQuery approxQuery(SparkSession session) {
        // Spark SQL's NULL semantics, or a failure naming the column (count(*) counts every row,
        // avg/sum ignore NULLs per column; the approximate query skips incomplete rows)
        ApproxQuery q =
                ApproxQuery.on(inputFrame(session))
                        .groupBy(groups.toArray(new String[0]))
                        .failOnPartialNulls();
        for (Aggregate a : aggregates) {
            switch (a.kind()) {
                case AVG -> q.avg(a.column());
                case SUM -> q.sum(a.column());
                case COUNT -> q.count();
                case QUANTILE -> {
                    if (a.interpolated()) {
                        q.percentile(a.column(), a.q(), a.descending());
                    } else {
                        q.quantile(a.column(), a.q(), a.descending());
                    }
                }
                case TOPK -> q.topK(a.column(), a.k());
            }
        }
        q.errorBound(errorBound);
        groupBounds.forEach(q::errorBound);
        if (confidence != null) {
            q.confidence(confidence);
        }
        if (seed != null) {
            q.seed(seed);
        }
        if (within != null) {
            q.within(within);
        }
        if (behavior != null) {
            q.behavior(behavior);
        }
        return q;
    }

    /** Throws {@code t} as it is (Spark's AnalysisException is checked in Java's view). */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> T rethrow(Throwable t) throws T {
        throw (T) t;
    }

    /** avg, sum and quantiles need numbers (ApproxQuery would cast anything else to null). */
    private void checkNumeric(StructType schema) {
        for (Aggregate a : aggregates) {
            if (a.kind() == AggregateKind.AVG
                    || a.kind() == AggregateKind.SUM
                    || a.kind() == AggregateKind.QUANTILE) {
                StructField f = schema.apply(a.column());
                DataType t = f.dataType();
                if (!(t instanceof NumericType)) {
                    throw new ApproxSqlException(
                            a.sql()
                                    + ": the argument has type "
                                    + t.simpleString()
                                    + ", not a number (cast it, e.g. CAST(x AS DOUBLE))");
                }
            }
        }
    }

    @Override
    public String toString() {
        return "groups="
                + groups
                + ", aggregates="
                + aggregates.stream().map(Aggregate::sql).toList()
                + ", e_max="
                + errorBound
                + (groupBounds.isEmpty() ? "" : ", per group " + groupBounds)
                + (confidence == null ? "" : ", confidence=" + confidence)
                + (seed == null ? "" : ", seed=" + seed)
                + (within == null ? "" : ", within=" + within)
                + (behavior == null ? "" : ", behavior=" + behavior);
    }
}
