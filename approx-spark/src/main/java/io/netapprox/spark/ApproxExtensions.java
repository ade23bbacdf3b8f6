package io.netapprox.spark;

import io.netapprox.spark.sql.ApproxAggregate;
import io.netapprox.spark.sql.ApproxSqlParser;
import io.netapprox.spark.sql.ApproxStrategy;
import java.util.function.BiConsumer;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.AnalysisHelper$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.Function1;
import scala.runtime.AbstractFunction0;
import scala.runtime.AbstractFunction1;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=io.netapprox.spark.ApproxExtensions}: SQL with error bounds.
 *
 * <pre>
 * SELECT hour, avg(distance), median(fare) FROM trips WHERE fare > 0 GROUP BY hour
 * WITH ERROR 0.05 CONFIDENCE 0.95, ERROR 0.01 FOR hour = 17
 * </pre>
 *
 * runs as {@link ApproxQuery} (same result columns, {@link ApproxQuery#SCHEMA}). Injects Spark's
 * parser wrapped by {@link ApproxSqlParser} (statements without the clause are parsed by Spark
 * alone), the planner strategy for the approximate aggregate, and a check that analyses its input
 * when the statement is analysed (so unknown tables or columns fail in {@code spark.sql(...)}, as
 * for any query).
 */
public final class ApproxExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectParser(
                new AbstractFunction2<SparkSession, ParserInterface, ParserInterface>() {
                    @Override
                    public ParserInterface apply(SparkSession session, ParserInterface delegate) {
                        return new ApproxSqlParser(delegate);
                    }
                });
        extensions.injectPlannerStrategy(
                new AbstractFunction1<SparkSession, SparkStrategy>() {
                    @Override
                    public SparkStrategy apply(SparkSession session) {
                        return new ApproxStrategy();
                    }
                });
        extensions.injectCheckRule(
                checkRule(
                        (session, plan) -> {
                            if (plan instanceof ApproxAggregate a) {
                                // a separate analysis of the input, not a rewrite of this plan
                                AnalysisHelper$.MODULE$.allowInvokingTransformsInAnalyzer(
                                        new AbstractFunction0<BoxedUnit>() {
                                            @Override
                                            public BoxedUnit apply() {
                                                a.query().checkInput(session);
                                                return BoxedUnit.UNIT;
                                            }
                                        });
                            }
                        }));
        return BoxedUnit.UNIT;
    }

    /** A check rule (Spark runs it after every analysis) from a Java callback. */
    static Function1<SparkSession, Function1<LogicalPlan, BoxedUnit>> checkRule(
            BiConsumer<SparkSession, LogicalPlan> check) {
        return new AbstractFunction1<SparkSession, Function1<LogicalPlan, BoxedUnit>>() {
            @Override
            public Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
                return new AbstractFunction1<LogicalPlan, BoxedUnit>() {
                    @Override
                    public BoxedUnit apply(LogicalPlan plan) {
                        check.accept(session, plan);
                        return BoxedUnit.UNIT;
                    }
                };
            }
        };
    }
}
