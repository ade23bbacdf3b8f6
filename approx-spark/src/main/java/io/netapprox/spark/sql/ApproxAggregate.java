package io.netapprox.spark.sql;

import io.netapprox.spark.ApproxQuery;
import io.netapprox.spark.ScalaInterop;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.StructField;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * The logical plan of a {@code ... WITH ERROR} statement: a leaf (its input is analysed when it
 * runs, see {@link ApproxSqlQuery#inputFrame}) whose output is {@link ApproxQuery#SCHEMA}. Planned
 * by {@link ApproxStrategy} into an {@link ApproxAggregateExec}.
 */
public final class ApproxAggregate extends LogicalPlan {
    private static final long serialVersionUID = 1L;

    private final ApproxSqlQuery query;
    private final Seq<Attribute> output;

    /** Also the constructor Spark's tree copies use (one argument per product element). */
    public ApproxAggregate(ApproxSqlQuery query, Seq<Attribute> output) {
        this.query = query;
        this.output = output;
    }

    static ApproxAggregate of(ApproxSqlQuery query) {
        return new ApproxAggregate(query, attributes());
    }

    /** Fresh attributes for the columns of {@link ApproxQuery#SCHEMA}. */
    static Seq<Attribute> attributes() {
        List<Attribute> out = new ArrayList<>();
        for (StructField f : ApproxQuery.SCHEMA.fields()) {
            out.add(
                    new AttributeReference(
                            f.name(),
                            f.dataType(),
                            f.nullable(),
                            f.metadata(),
                            NamedExpression$.MODULE$.newExprId(),
                            ScalaInterop.<String>emptyList()));
        }
        return ScalaInterop.list(out);
    }

    public ApproxSqlQuery query() {
        return query;
    }

    @Override
    public Seq<Attribute> output() {
        return output;
    }

    @Override
    public Seq<LogicalPlan> children() {
        return ScalaInterop.<LogicalPlan>emptyList();
    }

    // A leaf: nothing to replace. Two overloads, no @Override: Spark's parameter is Scala's
    // IndexedSeq, scala.collection.IndexedSeq on 2.12 and scala.collection.immutable.IndexedSeq on
    // 2.13; each build implements its own with one of these (the other is an unused overload).
    public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> newChildren) {
        return this;
    }

    public LogicalPlan withNewChildrenInternal(
            scala.collection.IndexedSeq<LogicalPlan> newChildren) {
        return this;
    }

    /** The output is made here, not read from children (else Spark sees dangling references). */
    @Override
    public AttributeSet producedAttributes() {
        return outputSet();
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        return switch (n) {
            case 0 -> query;
            case 1 -> output;
            default -> throw new IndexOutOfBoundsException(n);
        };
    }

    @Override
    public boolean canEqual(Object that) {
        return that instanceof ApproxAggregate;
    }
}
