package io.netapprox.spark.sql;

import io.netapprox.core.sampling.AggregateKind;
import io.netapprox.core.sql.ApproxClause;
import io.netapprox.core.sql.ApproxSqlException;
import io.netapprox.spark.ScalaInterop;
import io.netapprox.spark.SparkCompat;
import io.netapprox.spark.sql.ApproxSqlQuery.Aggregate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAlias;
import org.apache.spark.sql.catalyst.analysis.UnresolvedAttribute;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.analysis.UnresolvedStar;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Descending$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.PercentileCont;
import org.apache.spark.sql.catalyst.expressions.aggregate.PercentileDisc;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.trees.Origin;
import org.apache.spark.sql.types.Metadata;
import scala.Option;

/**
 * Turns the plan Spark's parser made of the query before {@code WITH ERROR} into an {@link
 * ApproxSqlQuery}, or fails naming what has no approximate counterpart. Works on the unresolved
 * plan, so only the shape of the query is checked here; tables, columns and types are checked when
 * the input is analysed.
 *
 * <p>Accepted: {@code SELECT <group columns and aggregates> FROM ... [WHERE ...] GROUP BY <columns,
 * aliases, ordinals or named expressions>}, optionally inside {@code WITH cte AS (...)}.
 * Aggregates: {@code avg|mean(x)}, {@code sum(x)}, {@code count(*)}, {@code median(x)}, {@code
 * percentile|percentile_approx|approx_percentile(x, q)}, {@code percentile_cont|percentile_disc(q)
 * WITHIN GROUP (ORDER BY x [ASC|DESC])}, {@code approx_top_k(x, k)}; {@code x} is a column or an
 * expression over the input row. Each means what Spark's function of that name means: {@code
 * median}, {@code percentile} and {@code percentile_cont} interpolate between the two closest
 * ranks, {@code percentile_disc} is the {@code ceil(qN)}-th value, and so is what {@code
 * approx_percentile} / {@code percentile_approx} approximate ({@link
 * io.netapprox.spark.ApproxSpec.QuantileMethod}).
 */
final class ApproxSqlTranslator {
    private static final Set<String> AGGREGATE_NAMES =
            Set.of(
                    "avg",
                    "mean",
                    "sum",
                    "count",
                    "count_if",
                    "min",
                    "max",
                    "median",
                    "percentile",
                    "percentile_approx",
                    "approx_percentile",
                    "percentile_cont",
                    "percentile_disc",
                    "approx_top_k",
                    "top_k",
                    "approx_count_distinct",
                    "first",
                    "last",
                    "any_value",
                    "collect_list",
                    "collect_set",
                    "stddev",
                    "stddev_pop",
                    "stddev_samp",
                    "std",
                    "variance",
                    "var_pop",
                    "var_samp",
                    "corr",
                    "covar_pop",
                    "covar_samp",
                    "mode",
                    "skewness",
                    "kurtosis",
                    "bool_and",
                    "bool_or",
                    "every",
                    "some",
                    "any",
                    "bit_and",
                    "bit_or",
                    "bit_xor",
                    "max_by",
                    "min_by",
                    "sum_distinct",
                    "try_avg",
                    "try_sum");

    private static final String SUPPORTED =
            "avg/mean(x), sum(x), count(*), median(x), percentile(x, q), percentile_approx(x, q),"
                    + " approx_percentile(x, q), percentile_cont(q) WITHIN GROUP (ORDER BY x),"
                    + " percentile_disc(q) WITHIN GROUP (ORDER BY x), approx_top_k(x, k)";

    private final String sql;

    /**
     * GROUP BY names that are also select aliases of a column ({@code SELECT hour AS h ... GROUP BY
     * h}): the column each stands for when the input has no column of that name (Spark's
     * group-by-alias rule: a name of the input wins, else the alias).
     */
    private final Map<String, Expression> aliasFallbacks = new LinkedHashMap<>();

    private ApproxSqlTranslator(String sql) {
        this.sql = sql;
    }

    /**
     * @param plan Spark's parse of {@code sql}'s query part
     * @param clause the clause
     * @param sql the whole statement (for positions in messages)
     */
    static ApproxSqlQuery translate(LogicalPlan plan, ApproxClause clause, String sql) {
        return new ApproxSqlTranslator(sql).query(plan, clause);
    }

    private ApproxSqlQuery query(LogicalPlan plan, ApproxClause clause) {
        LogicalPlan cte = null;
        LogicalPlan top = plan;
        if (top.nodeName().equals("UnresolvedWith")) {
            cte = top;
            top = top.children().head();
        }
        if (!(top instanceof org.apache.spark.sql.catalyst.plans.logical.Aggregate agg)) {
            throw notAnAggregate(top, clause);
        }
        List<Expression> grouping = ScalaInterop.javaList(agg.groupingExpressions());
        List<NamedExpression> select = ScalaInterop.javaList(agg.aggregateExpressions());
        if (grouping.isEmpty()) {
            throw new ApproxSqlException(
                    "WITH ERROR needs GROUP BY: the error bound holds per group (a query over the"
                            + " whole table is one group: GROUP BY a constant column)",
                    sql,
                    clause.queryEnd(),
                    4);
        }
        // name -> expression of every column the input projection has
        Map<String, Expression> columns = new LinkedHashMap<>();
        List<String> groups = new ArrayList<>();
        for (Expression g : grouping) {
            String name = groupName(g, select);
            Expression e = groupExpression(g, select);
            addColumn(columns, name, e);
            if (groups.stream().anyMatch(name::equalsIgnoreCase)) {
                throw new ApproxSqlException(
                        "GROUP BY names " + name + " twice", sql, start(g), length(g));
            }
            groups.add(name);
        }
        List<Aggregate> aggregates = new ArrayList<>();
        for (NamedExpression item : select) {
            Expression e = unalias(item);
            if (e instanceof UnresolvedFunction f && isAggregateName(f)) {
                aggregates.add(aggregate(f, columns));
            } else if (e instanceof AggregateExpression ae) {
                aggregates.add(withinGroup(ae, columns));
            } else if (isGroupReference(e, item, groups, grouping)) {
                continue; // the group key carries it
            } else if (e instanceof UnresolvedStar) {
                throw new ApproxSqlException(
                        "SELECT * has no approximate counterpart: select the GROUP BY columns and"
                                + " the aggregates",
                        sql,
                        start(e),
                        length(e));
            } else if (containsAggregate(e)) {
                throw new ApproxSqlException(
                        "an aggregate inside an expression ("
                                + text(e)
                                + ") is not supported: select the aggregates themselves ("
                                + SUPPORTED
                                + ")",
                        sql,
                        start(e),
                        length(e));
            } else {
                throw new ApproxSqlException(
                        text(e)
                                + " is neither a GROUP BY column nor a supported aggregate ("
                                + SUPPORTED
                                + ")",
                        sql,
                        start(e),
                        length(e));
            }
        }
        if (aggregates.isEmpty()) {
            throw new ApproxSqlException(
                    "no aggregate in the SELECT list (" + SUPPORTED + ")",
                    sql,
                    start(agg),
                    length(agg));
        }
        LogicalPlan input = input(columns, agg, cte);
        LogicalPlan aliased = null;
        if (!aliasFallbacks.isEmpty()) {
            Map<String, Expression> substituted = new LinkedHashMap<>(columns);
            substituted.putAll(aliasFallbacks);
            aliased = input(substituted, agg, cte);
        }
        return new ApproxSqlQuery(
                input,
                aliased,
                List.copyOf(groups),
                List.copyOf(aggregates),
                clause.errorBound(),
                groupBounds(clause, groups),
                clause.confidence(),
                clause.seed(),
                clause.within(),
                clause.behavior());
    }

    /** The projection of the named columns over the aggregate's input (inside the CTE, if any). */
    private static LogicalPlan input(
            Map<String, Expression> columns,
            org.apache.spark.sql.catalyst.plans.logical.Aggregate agg,
            LogicalPlan cte) {
        List<NamedExpression> projection = new ArrayList<>();
        columns.forEach((name, e) -> projection.add(named(name, e)));
        LogicalPlan input = new Project(ScalaInterop.list(projection), agg.child());
        if (cte != null) {
            input = cte.withNewChildren(ScalaInterop.list(List.of(input)));
        }
        return input;
    }

    private ApproxSqlException notAnAggregate(LogicalPlan top, ApproxClause clause) {
        String node = top.nodeName();
        String problem =
                switch (node) {
                    case "Sort" ->
                            "ORDER BY is not supported with WITH ERROR (the result has one row per"
                                    + " group and aggregate: order the result instead)";
                    case "GlobalLimit", "LocalLimit", "Limit", "Offset" ->
                            "LIMIT/OFFSET is not supported with WITH ERROR (limit the result"
                                    + " instead)";
                    case "Project" ->
                            ((Project) top)
                                            .projectList()
                                            .exists(e -> containsAggregate((Expression) e))
                                    ? "WITH ERROR needs GROUP BY: the error bound holds per group"
                                            + " (a query over the whole table is one group: GROUP"
                                            + " BY a constant column)"
                                    : "WITH ERROR applies to a SELECT ... GROUP BY query with"
                                            + " aggregates ("
                                            + SUPPORTED
                                            + ")";
                    case "UnresolvedHaving" ->
                            "HAVING is not supported with WITH ERROR (filter the result instead)";
                    case "Filter" ->
                            top.children().head()
                                            instanceof
                                            org.apache.spark.sql.catalyst.plans.logical.Aggregate
                                    ? "HAVING is not supported with WITH ERROR (filter the result"
                                            + " instead)"
                                    : "WITH ERROR applies to a SELECT ... GROUP BY query";
                    case "Distinct", "Deduplicate" ->
                            "SELECT DISTINCT is not supported with WITH ERROR";
                    case "ExplainCommand" ->
                            "EXPLAIN ... WITH ERROR is not supported: explain the DataFrame"
                                    + " spark.sql(...) returns";
                    case "Union", "Intersect", "Except" ->
                            "WITH ERROR applies to one SELECT ... GROUP BY query, not to a set"
                                    + " operation";
                    default ->
                            "WITH ERROR applies to a SELECT ... GROUP BY query (Spark parsed the"
                                    + " statement as "
                                    + node
                                    + ")";
                };
        return new ApproxSqlException(problem, sql, clause.queryEnd(), 4);
    }

    /** The name the group has in the result's keys: the column, the select alias, or an error. */
    private String groupName(Expression g, List<NamedExpression> select) {
        Expression ordinal = ordinal(g, select);
        if (ordinal != null) {
            NamedExpression item = select.get(ordinalIndex(g));
            if (item instanceof Alias a) {
                return a.name();
            }
            if (unalias(item) instanceof UnresolvedAttribute ua) {
                return ua.nameParts().last();
            }
            throw new ApproxSqlException(
                    "GROUP BY "
                            + text(g)
                            + " refers to "
                            + text((Expression) item)
                            + ", which needs a name: write "
                            + text(unalias(item))
                            + " AS <name>",
                    sql,
                    start(g),
                    length(g));
        }
        if (g instanceof UnresolvedAttribute ua) {
            if (ua.nameParts().size() == 1 && ua.name().equalsIgnoreCase("ALL")) {
                throw new ApproxSqlException(
                        "GROUP BY ALL is not supported with WITH ERROR: name the columns",
                        sql,
                        start(g),
                        length(g));
            }
            return ua.nameParts().last();
        }
        String node = g.nodeName();
        if (node.equals("Cube") || node.equals("Rollup") || node.equals("GroupingSets")) {
            throw new ApproxSqlException(
                    "GROUPING SETS, ROLLUP and CUBE are not supported with WITH ERROR",
                    sql,
                    start(g),
                    length(g));
        }
        for (NamedExpression item : select) {
            if (item instanceof Alias a && a.child().equals(g)) {
                return a.name();
            }
        }
        throw new ApproxSqlException(
                "the GROUP BY expression "
                        + text(g)
                        + " needs a name for the group keys: select it as "
                        + text(g)
                        + " AS <name> (GROUP BY <name> or the expression)",
                sql,
                start(g),
                length(g));
    }

    /** What the input projects for a group: the select list's expression behind an alias. */
    private Expression groupExpression(Expression g, List<NamedExpression> select) {
        Expression ordinal = ordinal(g, select);
        if (ordinal != null) {
            return ordinal;
        }
        if (g instanceof UnresolvedAttribute ua && ua.nameParts().size() == 1) {
            for (NamedExpression item : select) {
                // GROUP BY h with "hour(ts) AS h" in the select list (Spark's groupByAliases)
                if (item instanceof Alias a
                        && a.name().equalsIgnoreCase(ua.name())
                        && !(a.child() instanceof UnresolvedAttribute)) {
                    return a.child();
                }
                // GROUP BY h with "hour AS h": the input's h if it has one, else hour (decided
                // when the input is analysed)
                if (item instanceof Alias a
                        && a.name().equalsIgnoreCase(ua.name())
                        && a.child() instanceof UnresolvedAttribute c
                        && !c.nameParts().last().equalsIgnoreCase(ua.name())) {
                    aliasFallbacks.put(ua.name(), c);
                }
            }
        }
        return g;
    }

    /** {@code GROUP BY 2}: the select list's second item, or null. */
    private Expression ordinal(Expression g, List<NamedExpression> select) {
        int i = ordinalIndex(g);
        if (i < 0) {
            return null;
        }
        if (i >= select.size()) {
            throw new ApproxSqlException(
                    "GROUP BY position "
                            + (i + 1)
                            + " is not in the select list (1.."
                            + select.size()
                            + ")",
                    sql,
                    start(g),
                    length(g));
        }
        return unalias(select.get(i));
    }

    /** 0-based, or -1: a literal (Spark 3.5's parser) or an UnresolvedOrdinal (4.x's). */
    private static int ordinalIndex(Expression g) {
        if (g instanceof Literal l && l.value() instanceof Integer i) {
            return i - 1;
        }
        if (g.nodeName().equals("UnresolvedOrdinal") && g.productElement(0) instanceof Integer i) {
            return i - 1;
        }
        return -1;
    }

    private boolean isGroupReference(
            Expression e, NamedExpression item, List<String> groups, List<Expression> grouping) {
        if (e instanceof UnresolvedAttribute ua
                && groups.stream().anyMatch(ua.nameParts().last()::equalsIgnoreCase)) {
            return true;
        }
        if (item instanceof Alias a && groups.stream().anyMatch(a.name()::equalsIgnoreCase)) {
            return true;
        }
        return grouping.stream().anyMatch(e::equals);
    }

    private static boolean isAggregateName(UnresolvedFunction f) {
        return AGGREGATE_NAMES.contains(functionName(f));
    }

    private static String functionName(UnresolvedFunction f) {
        return f.nameParts().last().toLowerCase(Locale.ROOT);
    }

    private boolean containsAggregate(Expression e) {
        if ((e instanceof UnresolvedFunction f && isAggregateName(f))
                || e instanceof AggregateExpression) {
            return true;
        }
        for (Expression c : ScalaInterop.javaList(e.children())) {
            if (containsAggregate(c)) {
                return true;
            }
        }
        return false;
    }

    private Aggregate aggregate(UnresolvedFunction f, Map<String, Expression> columns) {
        String name = functionName(f);
        List<Expression> args = ScalaInterop.javaList(f.arguments());
        if (f.isDistinct()) {
            throw unsupported(f, "DISTINCT aggregates are not supported with WITH ERROR");
        }
        if (f.filter().isDefined()) {
            throw unsupported(
                    f, "FILTER (WHERE ...) is not supported with WITH ERROR: use the WHERE clause");
        }
        if (SparkCompat.ignoreNulls(f)) {
            throw unsupported(f, "IGNORE NULLS is not supported with WITH ERROR");
        }
        for (Expression a : args) {
            if (containsAggregate(a)) {
                throw unsupported(f, "an aggregate inside an aggregate is not supported");
            }
        }
        String written = text(f);
        List<Expression> within = orderingWithinGroup(f);
        if (!within.isEmpty()
                && !name.equals("percentile_cont")
                && !name.equals("percentile_disc")) {
            throw unsupported(
                    f,
                    "WITHIN GROUP (ORDER BY ...) applies to percentile_cont and percentile_disc"
                            + " here");
        }
        switch (name) {
            case "avg", "mean", "sum" -> {
                arity(f, args, 1, name + "(x)");
                String col = valueColumn(args.get(0), columns);
                return new Aggregate(
                        name.equals("sum") ? AggregateKind.SUM : AggregateKind.AVG,
                        col,
                        0,
                        0,
                        written);
            }
            case "count" -> {
                // Spark's parser turns count(*) into count(1)
                if (args.size() == 1 && args.get(0) instanceof Literal l && l.value() != null) {
                    return new Aggregate(AggregateKind.COUNT, "*", 0, 0, written);
                }
                throw unsupported(
                        f,
                        "only count(*) is supported with WITH ERROR (count(x) counts non-NULL x;"
                                + " filter with WHERE x IS NOT NULL and use count(*))");
            }
            case "median" -> {
                // Spark's median is percentile(x, 0.5): interpolated
                arity(f, args, 1, "median(x)");
                return new Aggregate(
                        AggregateKind.QUANTILE,
                        valueColumn(args.get(0), columns),
                        0.5,
                        0,
                        written,
                        true,
                        false);
            }
            case "percentile_cont", "percentile_disc" -> {
                // Spark 4's parse: percentile_cont(q) WITHIN GROUP (ORDER BY x) is the function
                // with the argument q and the ordering x
                if (args.size() != 1 || within.size() != 1) {
                    throw unsupported(f, name + " takes (q) WITHIN GROUP (ORDER BY x [ASC|DESC])");
                }
                SortOrder order = (SortOrder) within.get(0);
                return withinGroupAggregate(
                        f,
                        name.equals("percentile_cont"),
                        args.get(0),
                        order.child(),
                        order.direction() instanceof Descending$,
                        columns,
                        written);
            }
            case "percentile", "percentile_approx", "approx_percentile" -> {
                if (args.size() != 2 && !(args.size() == 3 && !name.equals("percentile"))) {
                    throw unsupported(
                            f,
                            name
                                    + " takes (x, q)"
                                    + (name.equals("percentile") ? "" : " or (x, q, accuracy)"));
                }
                double q = percentage(args.get(1), f);
                // percentile interpolates (as median); approx_percentile estimates the
                // ceil(qN)-th value, which is percentile_disc's answer
                return new Aggregate(
                        AggregateKind.QUANTILE,
                        valueColumn(args.get(0), columns),
                        q,
                        0,
                        written,
                        name.equals("percentile"),
                        false);
            }
            case "approx_top_k", "top_k" -> {
                arity(f, args, 2, name + "(x, k)");
                double k = number(args.get(1), f, "k");
                if (k != Math.rint(k) || k < 1 || k > 100_000) {
                    throw unsupported(
                            f, "k must be an integer in [1, 100000], got " + text(args.get(1)));
                }
                return new Aggregate(
                        AggregateKind.TOPK, valueColumn(args.get(0), columns), 0, (int) k, written);
            }
            default ->
                    throw unsupported(
                            f, name + " has no approximate counterpart; supported: " + SUPPORTED);
        }
    }

    /**
     * Spark 3.5's parse of {@code percentile_cont(q) WITHIN GROUP (ORDER BY x)} and {@code
     * percentile_disc}: the aggregate expression itself (Spark 4 parses them as functions, {@link
     * #aggregate}).
     */
    private Aggregate withinGroup(AggregateExpression ae, Map<String, Expression> columns) {
        if (ae.isDistinct()) {
            throw unsupported(ae, "DISTINCT aggregates are not supported with WITH ERROR");
        }
        if (ae.filter().isDefined()) {
            throw unsupported(
                    ae,
                    "FILTER (WHERE ...) is not supported with WITH ERROR: use the WHERE clause");
        }
        if (ae.aggregateFunction() instanceof PercentileCont pc) {
            return withinGroupAggregate(
                    ae, true, pc.right(), pc.left(), pc.reverse(), columns, text(ae));
        }
        if (ae.aggregateFunction() instanceof PercentileDisc pd) {
            return withinGroupAggregate(
                    ae,
                    false,
                    pd.percentageExpression(),
                    pd.child(),
                    pd.reverse(),
                    columns,
                    text(ae));
        }
        throw unsupported(
                ae,
                ae.aggregateFunction().prettyName()
                        + " has no approximate counterpart; supported: "
                        + SUPPORTED);
    }

    private Aggregate withinGroupAggregate(
            Expression f,
            boolean interpolated,
            Expression percentage,
            Expression value,
            boolean descending,
            Map<String, Expression> columns,
            String written) {
        if (containsAggregate(value)) {
            throw unsupported(f, "an aggregate inside an aggregate is not supported");
        }
        double q = percentage(percentage, f);
        return new Aggregate(
                AggregateKind.QUANTILE,
                valueColumn(value, columns),
                q,
                0,
                written,
                interpolated,
                descending);
    }

    /** A percentage literal in (0, 1) (Spark allows 0 and 1: the minimum and maximum). */
    private double percentage(Expression e, Expression f) {
        double q = number(e, f, "the percentage");
        if (!(q > 0 && q < 1)) {
            throw unsupported(
                    f,
                    "the percentage must be in (0, 1), got "
                            + q
                            + " (the minimum and maximum have no sampling interval)");
        }
        return q;
    }

    /**
     * The {@code WITHIN GROUP (ORDER BY ...)} of a function call: Spark 4's {@code
     * UnresolvedFunction.orderingWithinGroup}, which Spark 3.5's lacks (there the parser makes the
     * aggregate itself, {@link #withinGroup}).
     */
    private static List<Expression> orderingWithinGroup(UnresolvedFunction f) {
        try {
            Object o = UnresolvedFunction.class.getMethod("orderingWithinGroup").invoke(f);
            @SuppressWarnings("unchecked")
            scala.collection.Seq<Expression> seq = (scala.collection.Seq<Expression>) o;
            return ScalaInterop.javaList(seq);
        } catch (NoSuchMethodException e) {
            return List.of();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("UnresolvedFunction.orderingWithinGroup", e);
        }
    }

    private void arity(UnresolvedFunction f, List<Expression> args, int n, String form) {
        if (args.size() != n) {
            throw unsupported(f, "expected " + form + ", got " + args.size() + " argument(s)");
        }
    }

    private double number(Expression e, Expression f, String what) {
        if (e instanceof Literal l && l.value() != null) {
            try {
                return Double.parseDouble(l.value().toString());
            } catch (NumberFormatException ex) {
                // below
            }
        }
        throw unsupported(f, what + " must be a number literal, got " + text(e));
    }

    /** The input column an aggregate reads: a column by name, an expression by its text. */
    private String valueColumn(Expression arg, Map<String, Expression> columns) {
        String name =
                arg instanceof UnresolvedAttribute ua
                        ? ua.nameParts().last()
                        : text(arg).replaceAll("\\s+", " ");
        addColumn(columns, name, arg);
        return name;
    }

    private void addColumn(Map<String, Expression> columns, String name, Expression e) {
        for (Map.Entry<String, Expression> c : columns.entrySet()) {
            if (c.getKey().equalsIgnoreCase(name)) {
                if (!c.getValue().equals(e)) {
                    throw new ApproxSqlException(
                            "two different inputs are named "
                                    + name
                                    + " ("
                                    + text(c.getValue())
                                    + " and "
                                    + text(e)
                                    + "): give one an alias in a subquery",
                            sql,
                            start(e),
                            length(e));
                }
                return;
            }
        }
        columns.put(name, e);
    }

    private static NamedExpression named(String name, Expression e) {
        if (e instanceof UnresolvedAttribute ua && ua.nameParts().last().equals(name)) {
            return ua;
        }
        return new Alias(
                e,
                name,
                NamedExpression$.MODULE$.newExprId(),
                ScalaInterop.<String>emptyList(),
                Option.<Metadata>empty(),
                ScalaInterop.<String>emptyList());
    }

    private static Expression unalias(NamedExpression item) {
        if (item instanceof Alias a) {
            return a.child();
        }
        if (item instanceof UnresolvedAlias ua) {
            return ua.child();
        }
        return (Expression) item;
    }

    private Map<String, Double> groupBounds(ApproxClause clause, List<String> groups) {
        Map<String, Double> bounds = new LinkedHashMap<>();
        for (ApproxClause.GroupBound b : clause.groupBounds()) {
            String[] values = new String[groups.size()];
            for (ApproxClause.ColumnValue cv : b.values()) {
                int i = indexOfIgnoreCase(groups, cv.column());
                if (i < 0) {
                    throw new ApproxSqlException(
                            cv.column() + " is not a GROUP BY column " + groups,
                            sql,
                            cv.offset(),
                            cv.column().length());
                }
                if (values[i] != null) {
                    throw new ApproxSqlException(
                            cv.column() + " is given twice",
                            sql,
                            cv.offset(),
                            cv.column().length());
                }
                values[i] = cv.value();
            }
            StringBuilder key = new StringBuilder();
            for (int i = 0; i < groups.size(); i++) {
                if (values[i] == null) {
                    throw new ApproxSqlException(
                            "a per-group bound names one group: give every GROUP BY column "
                                    + groups
                                    + "; missing "
                                    + groups.get(i),
                            sql,
                            b.offset(),
                            b.length());
                }
                key.append(i == 0 ? "" : ",")
                        .append(groups.get(i))
                        .append('=')
                        .append(
                                groups.size() > 1
                                        ? io.netapprox.spark.ApproxQuery.keyValue(values[i])
                                        : values[i]);
            }
            if (bounds.put(key.toString(), b.errorBound()) != null) {
                throw new ApproxSqlException(
                        "two bounds for the group " + key, sql, b.offset(), b.length());
            }
        }
        return bounds;
    }

    private static int indexOfIgnoreCase(List<String> names, String name) {
        for (int i = 0; i < names.size(); i++) {
            if (names.get(i).equalsIgnoreCase(name)) {
                return i;
            }
        }
        return -1;
    }

    private ApproxSqlException unsupported(Expression e, String problem) {
        return new ApproxSqlException(text(e) + ": " + problem, sql, start(e), length(e));
    }

    /** The expression as written in the statement (from the parser's origin), else Spark's form. */
    private String text(org.apache.spark.sql.catalyst.trees.TreeNode<?> e) {
        Origin o = e.origin();
        if (o.startIndex().isDefined() && o.stopIndex().isDefined()) {
            int s = (Integer) o.startIndex().get();
            int t = (Integer) o.stopIndex().get();
            String text = o.sqlText().isDefined() ? o.sqlText().get() : sql;
            if (s >= 0 && t >= s && t < text.length()) {
                return text.substring(s, t + 1);
            }
        }
        return e instanceof Expression x ? x.toString().replace("'", "") : e.nodeName();
    }

    private int start(org.apache.spark.sql.catalyst.trees.TreeNode<?> e) {
        Option<Object> s = e.origin().startIndex();
        return s.isDefined() ? Math.min((Integer) s.get(), sql.length()) : 0;
    }

    private int length(org.apache.spark.sql.catalyst.trees.TreeNode<?> e) {
        Origin o = e.origin();
        if (o.startIndex().isDefined() && o.stopIndex().isDefined()) {
            return Math.max(1, (Integer) o.stopIndex().get() - (Integer) o.startIndex().get() + 1);
        }
        return 1;
    }
}
