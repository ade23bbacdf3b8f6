package io.netapprox.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * A query that needs no sample ({@link ApproxSpec#needsSample()} false: only {@code count}, and
 * {@code avg}/{@code sum} with exact partials) answered by Spark's own aggregation, {@code
 * groupBy().agg(count, sum...)} with its map-side partial aggregation: the shuffle carries one
 * record per (map task, group), where the approximate path would write a pre-sample that nothing
 * reads. The result has {@link ApproxQuery#SCHEMA} (names, types and nullability), as the
 * sort-shuffle path gives it: every answer exact ({@code low = estimate = high}), {@code
 * sample_rows = population_rows}, {@code approximate} false. Averages are Spark's ({@code sum /
 * count}); rows with a null group or value column are skipped, as on the other paths.
 *
 * <p>The plan is built as two Datasets, the aggregation and its reshaping into one row per
 * aggregate, so that the query costs the driver two analyses where Spark's own {@code
 * groupBy().agg()} costs one (each Dataset is analysed when it is built; a chain of projections,
 * filters and selects cost one each, about a second per query on a cold driver). Skipping rows with
 * a null is therefore part of the aggregates ({@code count}/{@code sum} of {@code CASE WHEN
 * complete}), not a filter of its own, and a group of no complete row (a null key) is dropped by
 * the reshaping.
 */
final class SparkAggregation {
    private SparkAggregation() {}

    private static final String COUNT = "n";
    private static final String SUM = "sum_v";
    private static final String KEYED = "n_keyed";

    /**
     * @param input the query's input
     * @param keys the group columns over {@code input} (typed where they group as their strings,
     *     else cast to strings)
     * @param values the value columns over {@code input} as doubles, in {@link
     *     ApproxSpec.Aggregate#valueIndex()} order
     * @param failOnPartialNulls a group with a row of non-null keys and a NULL value fails the
     *     query ({@link ApproxQuery#failOnPartialNulls()}) instead of being answered over its
     *     complete rows
     */
    static Dataset<Row> answer(
            Dataset<Row> input,
            List<Column> keys,
            List<Column> values,
            ApproxSpec spec,
            boolean failOnPartialNulls) {
        if (spec.needsSample()) {
            throw new IllegalArgumentException("the query needs a sample: " + spec.aggregates());
        }
        int groups = spec.groupColumns().size();
        Column complete = functions.lit(true);
        for (Column c : keys) {
            complete = complete.and(c.isNotNull());
        }
        Column keyed = complete;
        for (Column c : values) {
            complete = complete.and(c.isNotNull());
        }
        List<Column> named = new ArrayList<>();
        for (int i = 0; i < groups; i++) {
            named.add(keys.get(i).as("g" + i));
        }
        List<Column> sums = new ArrayList<>();
        for (int v = 0; v < values.size(); v++) {
            sums.add(functions.sum(functions.when(complete, values.get(v))).as(SUM + v));
        }
        if (failOnPartialNulls) {
            sums.add(functions.count(functions.when(keyed, functions.lit(1))).as(KEYED));
        }
        Dataset<Row> aggregated =
                input.groupBy(named.toArray(new Column[0]))
                        .agg(
                                functions
                                        .count(functions.when(complete, functions.lit(1)))
                                        .as(COUNT),
                                sums.toArray(new Column[0]));
        // a group with no complete row (a null key, or every value null) has n = 0: no rows; the
        // branch is not evaluated for it (sum / 0 would fail under ANSI)
        Column answers = functions.when(functions.col(COUNT).gt(0), answers(spec, groupKey(spec)));
        if (failOnPartialNulls) {
            // a group with rows of non-null keys that are not complete: Spark SQL's answer would
            // count them (count(*)) or use their other columns
            List<String> names = new ArrayList<>();
            for (ApproxSpec.Aggregate a : spec.aggregates()) {
                if (a.valueIndex() >= 0 && !names.contains(a.column())) {
                    names.add(a.column());
                }
            }
            Column message =
                    functions.concat(
                            functions.lit(
                                    "NULL in "
                                            + (names.size() == 1
                                                    ? "the aggregated column " + names.get(0)
                                                    : "one of the aggregated columns " + names)
                                            + " (group "),
                            groupKey(spec),
                            functions.lit(
                                    ")"
                                            + ApproxQuery.partialNullAdvice(
                                                    String.join(" IS NOT NULL AND ", names))));
            answers =
                    functions
                            .when(
                                    functions.col(KEYED).gt(functions.col(COUNT)),
                                    functions.raise_error(message))
                            .otherwise(answers);
        }
        return aggregated.select(functions.inline(answers));
    }

    /**
     * {@code col=value[,col=value...]} of the group columns named {@code g0, g1, ...}, as the
     * sampling path's keys are ({@link ApproxQuery.RowRecords}).
     */
    static Column groupKey(ApproxSpec spec) {
        List<Column> parts = new ArrayList<>();
        for (int i = 0; i < spec.groupColumns().size(); i++) {
            parts.add(functions.lit((i == 0 ? "" : ",") + spec.groupColumns().get(i) + "="));
            Column value = functions.col("g" + i).cast(DataTypes.StringType);
            if (spec.groupColumns().size() > 1) {
                // as ApproxQuery.keyValue: '\\' and ',' escaped by a backslash
                value =
                        functions.regexp_replace(
                                functions.regexp_replace(value, "\\\\", "\\\\\\\\"), ",", "\\\\,");
            }
            parts.add(value);
        }
        return functions.concat(parts.toArray(new Column[0]));
    }

    /**
     * One result row ({@link ApproxQuery#SCHEMA}) per aggregate of the query, in its order, for a
     * group of at least one complete row. Columns {@code SCHEMA} declares non-null are made so for
     * Spark ({@code coalesce} with a value never taken: in such a group the key and every sum are
     * non-null).
     */
    private static Column answers(ApproxSpec spec, Column group) {
        Column key = functions.coalesce(group, functions.lit(""));
        Column count = functions.col(COUNT);
        Column n = count.cast(DataTypes.DoubleType);
        Column eMax = errorBound(spec, key);
        List<Column> out = new ArrayList<>();
        for (ApproxSpec.Aggregate a : spec.aggregates()) {
            Column sum = a.valueIndex() >= 0 ? functions.col(SUM + a.valueIndex()) : null;
            Column value =
                    switch (a.kind()) {
                        case COUNT -> n;
                        case SUM -> sum;
                        case AVG -> sum.divide(n);
                        default ->
                                throw new IllegalStateException(
                                        a.label() + " needs a sample, not Spark's aggregation");
                    };
            Column estimate =
                    functions.coalesce(value.cast(DataTypes.DoubleType), functions.lit(Double.NaN));
            out.add(
                    functions.struct(
                            key.as("group"),
                            functions.lit(a.label()).as("aggregate"),
                            functions.lit(null).cast(DataTypes.StringType).as("key"),
                            functions.lit(null).cast(DataTypes.IntegerType).as("rank"),
                            estimate.as("estimate"),
                            estimate.as("low"),
                            estimate.as("high"),
                            functions.lit(spec.confidence()).as("confidence"),
                            eMax.as("e_max"),
                            count.as("sample_rows"),
                            count.as("population_rows"),
                            functions.lit(false).as("approximate"),
                            functions.lit(0.0).as("relative_error"),
                            functions.lit(true).as("bound_met")));
        }
        return functions.array(out.toArray(new Column[0]));
    }

    /** e_max of the group: its override, else the default. */
    private static Column errorBound(ApproxSpec spec, Column group) {
        Column bound = functions.lit(spec.defaultErrorBound());
        for (java.util.Map.Entry<String, Double> e : spec.errorBounds().entrySet()) {
            bound = functions.when(group.equalTo(e.getKey()), e.getValue()).otherwise(bound);
        }
        return bound;
    }
}
