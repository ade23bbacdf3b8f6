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
 * reads. The result has {@link ApproxQuery#SCHEMA}'s columns, as the sort-shuffle path gives them:
 * every answer exact ({@code low = estimate = high}), {@code sample_rows = population_rows}, {@code
 * approximate} false. Averages are Spark's ({@code sum / count}); rows with a null group or value
 * column are skipped, as on the other paths.
 */
final class SparkAggregation {
    private SparkAggregation() {}

    private static final String COUNT = "n";
    private static final String SUM = "sum_v";

    /**
     * @param projected the query's input as {@code ApproxQuery} projects it: group columns (as
     *     strings, or typed where they group exactly as their strings), then the value columns as
     *     doubles
     */
    static Dataset<Row> answer(Dataset<Row> projected, ApproxSpec spec) {
        if (spec.needsSample()) {
            throw new IllegalArgumentException("the query needs a sample: " + spec.aggregates());
        }
        String[] fields = projected.columns();
        int groups = spec.groupColumns().size();
        Column complete = functions.lit(true);
        for (String f : fields) {
            complete = complete.and(functions.col(f).isNotNull());
        }
        List<Column> keys = new ArrayList<>();
        for (int i = 0; i < groups; i++) {
            keys.add(functions.col(fields[i]));
        }
        List<Column> sums = new ArrayList<>();
        for (int v = 0; v < spec.numValues(); v++) {
            sums.add(functions.sum(functions.col(fields[groups + v])).as(SUM + v));
        }
        Dataset<Row> aggregated =
                projected
                        .where(complete)
                        .groupBy(keys.toArray(new Column[0]))
                        .agg(
                                functions.count(functions.lit(1)).as(COUNT),
                                sums.toArray(new Column[0]));
        return aggregated
                .select(
                        groupKey(spec, aggregated).as("group"),
                        functions.col(COUNT).as("n"),
                        functions.explode(answers(spec)).as("a"))
                .select(
                        functions.col("group"),
                        functions.col("a.aggregate").as("aggregate"),
                        functions.lit(null).cast(DataTypes.StringType).as("key"),
                        functions.lit(null).cast(DataTypes.IntegerType).as("rank"),
                        functions.col("a.estimate").as("estimate"),
                        functions.col("a.estimate").as("low"),
                        functions.col("a.estimate").as("high"),
                        functions.lit(spec.confidence()).as("confidence"),
                        errorBound(spec, functions.col("group")).as("e_max"),
                        functions.col("n").as("sample_rows"),
                        functions.col("n").as("population_rows"),
                        functions.lit(false).as("approximate"));
    }

    /** {@code col=value[,col=value...]}, as {@link ApproxQuery#groupKey} builds it. */
    private static Column groupKey(ApproxSpec spec, Dataset<Row> aggregated) {
        String[] fields = aggregated.columns();
        List<Column> parts = new ArrayList<>();
        for (int i = 0; i < spec.groupColumns().size(); i++) {
            parts.add(functions.lit((i == 0 ? "" : ",") + spec.groupColumns().get(i) + "="));
            parts.add(functions.col(fields[i]).cast(DataTypes.StringType));
        }
        return functions.concat(parts.toArray(new Column[0]));
    }

    /** One {@code (aggregate, estimate)} per aggregate of the query, in its order. */
    private static Column answers(ApproxSpec spec) {
        Column n = functions.col(COUNT).cast(DataTypes.DoubleType);
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
            out.add(
                    functions.struct(
                            functions.lit(a.label()).as("aggregate"),
                            value.cast(DataTypes.DoubleType).as("estimate")));
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
