package org.apache.spark.sql.catalyst.parser;

/**
 * Compile-only stand-in for Spark 4's ParameterContext (absent in Spark 3.5), named only by
 * ApproxSqlParser.parsePlanWithParameters, which Spark 3.5 never calls. Found by javac on the source
 * path and never compiled to a class file (-implicit:none, excluded from the compiled sources), so
 * it is neither in target/classes nor in the jar.
 */
public interface ParameterContext {}
