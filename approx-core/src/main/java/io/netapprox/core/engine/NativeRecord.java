package io.netapprox.core.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ObjLongConsumer;
import java.util.function.ToLongFunction;

/**
 * A record that crosses JNI with named slots: a {@code long[]} (configuration, reports, counters;
 * doubles travel as their IEEE-754 bits) or a fixed byte layout ("name@offset": events, submit
 * descriptors). The library lists the same names in native/src/jni/netapprox_jni.cpp ({@code
 * NativeEngine.recordFields}); {@link NativeLibrary} compares them with this side's when it loads
 * the library, so a jar and a library from different builds fail there, naming the first slot that
 * differs - never by reading one field as another. A new field is one line in the native table and
 * one line in the Java table of the same record.
 *
 * @param <T> what the slots are written from ({@link #write}) or read into ({@link #read})
 */
final class NativeRecord<T> {
    /** One slot: its native name and how to produce or consume its value (either may be null). */
    record Slot<T>(String name, ToLongFunction<T> write, ObjLongConsumer<T> read) {}

    /** A slot Java writes (configuration). */
    static <T> Slot<T> out(String name, ToLongFunction<T> write) {
        return new Slot<>(name, write, null);
    }

    /** A slot Java reads (reports, counters). */
    static <T> Slot<T> in(String name, ObjLongConsumer<T> read) {
        return new Slot<>(name, null, read);
    }

    /** A slot known by name only (read by {@link #slot}). */
    static <T> Slot<T> named(String name) {
        return new Slot<>(name, null, null);
    }

    private final int id;
    private final String what;
    private final List<Slot<T>> slots;
    private final Map<String, Integer> index = new HashMap<>();

    NativeRecord(int id, String what, List<Slot<T>> slots) {
        this.id = id;
        this.what = what;
        this.slots = List.copyOf(slots);
        for (int i = 0; i < this.slots.size(); i++) {
            if (index.put(this.slots.get(i).name(), i) != null) {
                throw new IllegalStateException(
                        what + ": slot " + this.slots.get(i).name() + " twice");
            }
        }
    }

    /** A record of byte offsets: "name@offset" slots. */
    static NativeRecord<Void> layout(int id, String what, Object... nameOffsetPairs) {
        List<Slot<Void>> s = new ArrayList<>();
        for (int i = 0; i < nameOffsetPairs.length; i += 2) {
            s.add(named(nameOffsetPairs[i] + "@" + nameOffsetPairs[i + 1]));
        }
        return new NativeRecord<>(id, what, s);
    }

    /** The record's id for {@code NativeEngine.recordFields}. */
    int id() {
        return id;
    }

    int size() {
        return slots.size();
    }

    List<String> names() {
        List<String> n = new ArrayList<>(slots.size());
        for (Slot<T> s : slots) {
            n.add(s.name());
        }
        return Collections.unmodifiableList(n);
    }

    /** The position of slot {@code name}. */
    int slot(String name) {
        Integer i = index.get(name);
        if (i == null) {
            throw new IllegalArgumentException(
                    what + " has no slot " + name + "; slots: " + names());
        }
        return i;
    }

    /** The slots' values from {@code from}, in slot order. */
    long[] write(T from) {
        long[] v = new long[slots.size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = slots.get(i).write().applyAsLong(from);
        }
        return v;
    }

    /** Hands every readable slot's value to {@code into}. */
    void read(long[] values, T into) {
        for (int i = 0; i < slots.size(); i++) {
            ObjLongConsumer<T> r = slots.get(i).read();
            if (r != null) {
                r.accept(into, values[i]);
            }
        }
    }

    /**
     * Checks the library's slot names against this side's.
     *
     * @throws UnsatisfiedLinkError naming the record and the first slot that differs
     */
    void verify(String[] nativeNames) {
        List<String> mine = names();
        if (nativeNames == null) {
            throw new UnsatisfiedLinkError(
                    "libnetapprox does not know the JNI record '"
                            + what
                            + "'"
                            + " (jar and library from different builds?)");
        }
        int n = Math.max(mine.size(), nativeNames.length);
        for (int i = 0; i < n; i++) {
            String java = i < mine.size() ? mine.get(i) : "(none)";
            String lib = i < nativeNames.length ? nativeNames[i] : "(none)";
            if (!java.equals(lib)) {
                throw new UnsatisfiedLinkError(
                        "libnetapprox JNI record '"
                                + what
                                + "' differs at slot "
                                + i
                                + ": library '"
                                + lib
                                + "', Java '"
                                + java
                                + "' (jar and library from different builds?)");
            }
        }
    }
}
