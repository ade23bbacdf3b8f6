package io.netapprox.spark;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.Function1;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * Testing: {@code spark.sql.extensions=io.netapprox.spark.AnalysisCounter} counts the plans Spark
 * analyses (a check rule runs once per analysis, i.e. once per Dataset built), so a test can say
 * how much planning a query costs the driver without timing it.
 */
public final class AnalysisCounter extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    static final AtomicLong ANALYSES = new AtomicLong();

    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        extensions.injectCheckRule(
                new AbstractFunction1<SparkSession, Function1<LogicalPlan, BoxedUnit>>() {
                    @Override
                    public Function1<LogicalPlan, BoxedUnit> apply(SparkSession session) {
                        return new AbstractFunction1<LogicalPlan, BoxedUnit>() {
                            @Override
                            public BoxedUnit apply(LogicalPlan plan) {
                                ANALYSES.incrementAndGet();
                                return BoxedUnit.UNIT;
                            }
                        };
                    }
                });
        return BoxedUnit.UNIT;
    }
}
