package io.netapprox.spark;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.SparkSessionExtensions;
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
                ApproxExtensions.checkRule((session, plan) -> ANALYSES.incrementAndGet()));
        return BoxedUnit.UNIT;
    }
}
