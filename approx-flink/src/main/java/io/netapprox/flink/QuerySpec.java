package io.netapprox.flink;

import java.io.Serializable;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.java.functions.KeySelector;

/**
 * A frozen approximate query: how records are stratified, the aggregates, the error bound of every
 * group (default and overrides) and the confidence. Built by {@link ApproxWindowedStream}; shared
 * by the exact and the approximate topology.
 */
public final class QuerySpec<T, K> implements Serializable {
  private static final long serialVersionUID = 1L;

  private final KeySelector<T, K> groupSelector;
  private final List<Aggregate<T>> aggregates;
  private final double defaultErrorBound;
  private final HashMap<K, Double> errorBounds;
  private final double confidence;

  QuerySpec(
      KeySelector<T, K> groupSelector,
      List<Aggregate<T>> aggregates,
      double defaultErrorBound,
      Map<K, Double> errorBounds,
      double confidence) {
    this.groupSelector = groupSelector;
    this.aggregates = List.copyOf(aggregates);
    this.defaultErrorBound = defaultErrorBound;
    this.errorBounds = new HashMap<>(errorBounds);
    this.confidence = confidence;
  }

  public KeySelector<T, K> groupSelector() {
    return groupSelector;
  }

  public List<Aggregate<T>> aggregates() {
    return aggregates;
  }

  /** e_max of {@code group}: its override, else the query's default. */
  public double errorBound(K group) {
    Double e = errorBounds.get(group);
    return e != null ? e : defaultErrorBound;
  }

  public double confidence() {
    return confidence;
  }

  /** Number of aggregates that read a value (avg, sum, quantile): the width of a record's values. */
  public int valueCount() {
    int n = 0;
    for (Aggregate<T> a : aggregates) {
      if (a.readsValue()) {
        n++;
      }
    }
    return n;
  }

  /** Index of aggregate {@code i}'s value among the values a record carries, or -1. */
  public int valueIndex(int i) {
    if (!aggregates.get(i).readsValue()) {
      return -1;
    }
    int n = 0;
    for (int j = 0; j < i; j++) {
      if (aggregates.get(j).readsValue()) {
        n++;
      }
    }
    return n;
  }

  /** The topK aggregate's key selector, or null (a query has at most one topK). */
  public KeySelector<T, String> topKeySelector() {
    for (Aggregate<T> a : aggregates) {
      if (a.kind() == Aggregate.Kind.TOPK) {
        return a.keySelector();
      }
    }
    return null;
  }

  /** The values a record contributes, in {@link #valueIndex} order. */
  public double[] values(T record) throws Exception {
    double[] v = new double[valueCount()];
    int n = 0;
    for (Aggregate<T> a : aggregates) {
      if (a.readsValue()) {
        v[n++] = a.valueSelector().value(record);
      }
    }
    return v;
  }
}
