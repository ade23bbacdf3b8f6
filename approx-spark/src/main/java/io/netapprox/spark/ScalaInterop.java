package io.netapprox.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.ListIterator;

/**
 * Java and Scala collections, through API that Scala 2.12 and 2.13 share, so that one source
 * compiles (and behaves the same) against Spark 3.5 on Scala 2.12 and Spark 3.5/4.x on Scala 2.13.
 * {@code scala.jdk.javaapi.CollectionConverters} is 2.13-only and {@code
 * scala.collection.JavaConverters} is deprecated there; the types Spark's signatures use differ
 * ({@code Seq} is {@code scala.collection.Seq} in 2.12, {@code scala.collection.immutable.Seq} in
 * 2.13), so the conversions build an immutable {@code List}, which is both.
 */
public final class ScalaInterop {
    private ScalaInterop() {}

    /** An immutable Scala list of the elements, in order. */
    public static <T> scala.collection.immutable.List<T> list(List<? extends T> elements) {
        scala.collection.immutable.List<T> out = scala.collection.immutable.List$.MODULE$.empty();
        for (ListIterator<? extends T> it = elements.listIterator(elements.size());
                it.hasPrevious(); ) {
            out = new scala.collection.immutable.$colon$colon<>(it.previous(), out);
        }
        return out;
    }

    /** The empty immutable Scala list. */
    public static <T> scala.collection.immutable.List<T> emptyList() {
        return scala.collection.immutable.List$.MODULE$.empty();
    }

    /** A Java list (a copy) of a Scala collection's elements, in iteration order. */
    public static <T> List<T> javaList(scala.collection.Iterable<T> elements) {
        List<T> out = new ArrayList<>();
        for (scala.collection.Iterator<T> it = elements.iterator(); it.hasNext(); ) {
            out.add(it.next());
        }
        return out;
    }

    /** A Scala iterator over a Java iterator (not a copy). */
    public static <T> scala.collection.Iterator<T> iterator(java.util.Iterator<T> it) {
        return new scala.collection.AbstractIterator<T>() {
            @Override
            public boolean hasNext() {
                return it.hasNext();
            }

            @Override
            public T next() {
                return it.next();
            }
        };
    }
}
