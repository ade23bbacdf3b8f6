package io.netapprox.spark.sql;

import io.netapprox.core.sql.ApproxClause;
import io.netapprox.core.sql.ApproxClauseParser;
import io.netapprox.core.sql.SqlDialect;
import io.netapprox.spark.ScalaInterop;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Optional;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's SQL parser with the {@code WITH ERROR} clause: a statement with the clause is split
 * there, Spark's parser (the delegate) parses the query before it, and the result is an {@link
 * ApproxAggregate} over that query; every other statement, and every other kind of parse
 * (expressions, identifiers, types), goes to the delegate unchanged.
 */
public final class ApproxSqlParser implements ParserInterface {
    private final ParserInterface delegate;

    public ApproxSqlParser(ParserInterface delegate) {
        this.delegate = delegate;
    }

    @Override
    public LogicalPlan parsePlan(String sqlText) throws ParseException {
        Optional<ApproxClause> clause = clause(sqlText);
        if (clause.isEmpty()) {
            return delegate.parsePlan(sqlText);
        }
        LogicalPlan query = delegate.parsePlan(sqlText.substring(0, clause.get().queryEnd()));
        return ApproxAggregate.of(ApproxSqlTranslator.translate(query, clause.get(), sqlText));
    }

    /**
     * Spark 4.x's entry point for {@code spark.sql} (named and positional parameters); not in Spark
     * 3.5's interface, where this method is never called. No @Override: the Scala 2.12 build
     * compiles against Spark 3.5 (a compile-only stub of ParameterContext, approx-spark_2.12), so
     * the delegate's method is called through {@link Spark4}.
     */
    public LogicalPlan parsePlanWithParameters(String sqlText, ParameterContext parameters)
            throws ParseException {
        Optional<ApproxClause> clause = clause(sqlText);
        if (clause.isEmpty()) {
            return Spark4.parsePlanWithParameters(delegate, sqlText, parameters);
        }
        LogicalPlan query =
                Spark4.parsePlanWithParameters(
                        delegate, sqlText.substring(0, clause.get().queryEnd()), parameters);
        return ApproxAggregate.of(ApproxSqlTranslator.translate(query, clause.get(), sqlText));
    }

    /**
     * ParserInterface's Spark 4 methods, called through method handles so that the sources compile
     * against Spark 3.5 too; each handle is looked up on first use (its holder class), so only on
     * Spark 4.
     */
    private static final class Spark4 {
        private Spark4() {}

        static final class WithParameters {
            static final MethodHandle HANDLE =
                    find(
                            "parsePlanWithParameters",
                            MethodType.methodType(
                                    LogicalPlan.class, String.class, ParameterContext.class));
        }

        static final class RoutineParam {
            static final MethodHandle HANDLE =
                    find(
                            "parseRoutineParam",
                            MethodType.methodType(StructType.class, String.class));
        }

        static LogicalPlan parsePlanWithParameters(
                ParserInterface parser, String sqlText, ParameterContext parameters)
                throws ParseException {
            return (LogicalPlan) invoke(WithParameters.HANDLE, parser, sqlText, parameters);
        }

        private static MethodHandle find(String name, MethodType type) {
            try {
                return MethodHandles.publicLookup().findVirtual(ParserInterface.class, name, type);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("ParserInterface." + name + type, e);
            }
        }

        static Object invoke(MethodHandle h, ParserInterface parser, Object... args)
                throws ParseException {
            Object[] all = new Object[args.length + 1];
            all[0] = parser;
            System.arraycopy(args, 0, all, 1, args.length);
            try {
                return h.invokeWithArguments(all);
            } catch (ParseException | RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("ParserInterface: " + h, e);
            }
        }
    }

    /**
     * The clause, if any; a text without the word "error" or "within" (a time bound alone) is not
     * tokenized at all.
     */
    private static Optional<ApproxClause> clause(String sqlText) {
        if (sqlText == null
                || !(containsIgnoreCase(sqlText, "error")
                        || containsIgnoreCase(sqlText, "within"))) {
            return Optional.empty();
        }
        return ApproxClauseParser.parse(sqlText, SqlDialect.SPARK);
    }

    private static boolean containsIgnoreCase(String s, String word) {
        for (int i = 0; i + word.length() <= s.length(); i++) {
            if (s.regionMatches(true, i, word, 0, word.length())) {
                return true;
            }
        }
        return false;
    }

    @Override
    public LogicalPlan parseQuery(String sqlText) throws ParseException {
        return delegate.parseQuery(sqlText);
    }

    @Override
    public Expression parseExpression(String sqlText) throws ParseException {
        return delegate.parseExpression(sqlText);
    }

    @Override
    public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
        return delegate.parseTableIdentifier(sqlText);
    }

    @Override
    public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
        return delegate.parseFunctionIdentifier(sqlText);
    }

    @Override
    public scala.collection.immutable.Seq<String> parseMultipartIdentifier(String sqlText)
            throws ParseException {
        // scala.collection.Seq on Scala 2.12, immutable.Seq on 2.13: one immutable list for both
        return ScalaInterop.list(ScalaInterop.javaList(delegate.parseMultipartIdentifier(sqlText)));
    }

    /**
     * Spark 4.x's (not in 3.5's interface): no @Override, the delegate's through {@link Spark4}.
     */
    public StructType parseRoutineParam(String sqlText) throws ParseException {
        return (StructType) Spark4.invoke(Spark4.RoutineParam.HANDLE, delegate, sqlText);
    }

    @Override
    public StructType parseTableSchema(String sqlText) throws ParseException {
        return delegate.parseTableSchema(sqlText);
    }

    @Override
    public DataType parseDataType(String sqlText) throws ParseException {
        return delegate.parseDataType(sqlText);
    }
}
