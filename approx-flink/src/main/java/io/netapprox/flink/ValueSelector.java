package io.netapprox.flink;

import org.apache.flink.api.common.functions.Function;

/**
 * Extracts the number an aggregate works on from a record, e.g. {@code Trip::fare}. Serializable (a
 * Flink {@link Function}), so a lambda or method reference travels to the TaskManagers.
 */
@FunctionalInterface
public interface ValueSelector<T> extends Function {
    double value(T record) throws Exception;
}
