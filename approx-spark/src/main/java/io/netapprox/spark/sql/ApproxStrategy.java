package io.netapprox.spark.sql;

import io.netapprox.spark.ScalaInterop;
import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import scala.collection.immutable.Seq;

/** Plans {@link ApproxAggregate} (and nothing else). */
public final class ApproxStrategy extends SparkStrategy {
    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
        if (plan instanceof ApproxAggregate a) {
            return ScalaInterop.list(
                    List.<SparkPlan>of(new ApproxAggregateExec(a.query(), a.output())));
        }
        return ScalaInterop.<SparkPlan>emptyList();
    }
}
