package io.netapprox.spark.sql;

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
     * 3.5's interface, where this method is never called.
     */
    @Override
    public LogicalPlan parsePlanWithParameters(String sqlText, ParameterContext parameters)
            throws ParseException {
        Optional<ApproxClause> clause = clause(sqlText);
        if (clause.isEmpty()) {
            return delegate.parsePlanWithParameters(sqlText, parameters);
        }
        LogicalPlan query =
                delegate.parsePlanWithParameters(
                        sqlText.substring(0, clause.get().queryEnd()), parameters);
        return ApproxAggregate.of(ApproxSqlTranslator.translate(query, clause.get(), sqlText));
    }

    /** The clause, if any; a text without the word "error" is not tokenized at all. */
    private static Optional<ApproxClause> clause(String sqlText) {
        if (sqlText == null || !containsIgnoreCase(sqlText, "error")) {
            return Optional.empty();
        }
        return ApproxClauseParser.parse(sqlText);
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
        return delegate.parseMultipartIdentifier(sqlText);
    }

    @Override
    public StructType parseRoutineParam(String sqlText) throws ParseException {
        return delegate.parseRoutineParam(sqlText);
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
