package io.netapprox.core.job;

import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;
import java.util.function.IntConsumer;

/**
 * An immutable set of message ids (non-negative ints), stored compactly: as sorted disjoint ranges
 * or as a bitmap over {@code [base, base + nbits)}, whichever takes less space ({@code 4 + 8 *
 * ranges} versus {@code 8 + nbits / 8} bytes). The control plane's codec encodes a set the same way
 * (docs/control-plane.md), so a decoded set costs about as much memory as its frame (no
 * amplification).
 */
public final class IdSet {
    private static final IdSet EMPTY = new IdSet(new int[0], new int[0], 0L);

    // Ranges representation (bits == null): firsts[i]..lasts[i] inclusive, sorted, disjoint,
    // non-adjacent.
    private final int[] firsts;
    private final int[] lasts;
    // Bitset representation (bits != null).
    private final int base;
    private final int nbits;
    private final long[] bits;
    private final long cardinality;

    private IdSet(int[] firsts, int[] lasts, long cardinality) {
        this.firsts = firsts;
        this.lasts = lasts;
        this.base = 0;
        this.nbits = 0;
        this.bits = null;
        this.cardinality = cardinality;
    }

    private IdSet(int base, int nbits, long[] bits) {
        this.firsts = null;
        this.lasts = null;
        this.base = base;
        this.nbits = nbits;
        this.bits = bits;
        long c = 0;
        for (long w : bits) {
            c += Long.bitCount(w);
        }
        this.cardinality = c;
    }

    public static IdSet empty() {
        return EMPTY;
    }

    /** The ids {@code first .. first + count - 1}. */
    public static IdSet ofRange(int first, int count) {
        if (first < 0 || count < 0 || (long) first + count - 1 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("bad id range: first=" + first + ", count=" + count);
        }
        if (count == 0) {
            return EMPTY;
        }
        return new IdSet(new int[] {first}, new int[] {first + count - 1}, count);
    }

    /** The given ids (any order, duplicates ignored); every id must be {@code >= 0}. */
    public static IdSet of(int... ids) {
        int[] sorted = ids.clone();
        Arrays.sort(sorted);
        if (sorted.length > 0 && sorted[0] < 0) {
            throw new IllegalArgumentException("message ids must be >= 0, got " + sorted[0]);
        }
        int n = 0;
        int[] f = new int[Math.min(sorted.length, 16)];
        int[] l = new int[f.length];
        long card = 0;
        for (int i = 0; i < sorted.length; i++) {
            int id = sorted[i];
            if (n > 0 && id <= l[n - 1]) {
                continue; // duplicate
            }
            card++;
            if (n > 0 && id == l[n - 1] + 1) {
                l[n - 1] = id;
                continue;
            }
            if (n == f.length) {
                f = Arrays.copyOf(f, n * 2);
                l = Arrays.copyOf(l, n * 2);
            }
            f[n] = id;
            l[n] = id;
            n++;
        }
        return compact(Arrays.copyOf(f, n), Arrays.copyOf(l, n), card);
    }

    /**
     * The ids of the inclusive ranges {@code [firsts[i], lasts[i]]}, which must be sorted, disjoint
     * and separated (a range starts at least 2 after the previous one ends).
     *
     * @throws IllegalArgumentException for negative ids, empty, unsorted, overlapping or adjacent
     *     ranges
     */
    public static IdSet ofRanges(int[] firsts, int[] lasts) {
        if (firsts.length != lasts.length) {
            throw new IllegalArgumentException(
                    firsts.length + " range starts but " + lasts.length + " range ends");
        }
        long card = 0;
        long prevLast = -2;
        for (int i = 0; i < firsts.length; i++) {
            if (firsts[i] < 0 || lasts[i] < firsts[i]) {
                throw new IllegalArgumentException(
                        "range "
                                + i
                                + " ["
                                + firsts[i]
                                + ", "
                                + lasts[i]
                                + "] is empty or negative");
            }
            if (firsts[i] <= prevLast + 1) {
                throw new IllegalArgumentException(
                        "range "
                                + i
                                + " is not sorted, disjoint and separated from the previous one");
            }
            card += (long) lasts[i] - firsts[i] + 1;
            prevLast = lasts[i];
        }
        return compact(firsts.clone(), lasts.clone(), card);
    }

    /**
     * The ids {@code base + i} for every bit {@code i < nbits} set in {@code words} (bit {@code i}
     * is bit {@code i % 64} of {@code words[i / 64]}).
     *
     * @throws IllegalArgumentException for an empty bitmap, one beyond the id space, or bits set at
     *     or above {@code nbits}
     */
    public static IdSet ofBitmap(int base, int nbits, long[] words) {
        if (base < 0 || nbits <= 0 || (long) base + nbits - 1 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "bitmap [" + base + ", +" + nbits + ") is empty or exceeds the id space");
        }
        if (words.length != (nbits + 63) / 64) {
            throw new IllegalArgumentException(
                    "a bitmap of "
                            + nbits
                            + " bits has "
                            + ((nbits + 63) / 64)
                            + " words, got "
                            + words.length);
        }
        int tail = nbits & 63;
        if (tail != 0 && (words[words.length - 1] >>> tail) != 0) {
            throw new IllegalArgumentException("bits at or above nbits = " + nbits + " are set");
        }
        IdSet bitmap = new IdSet(base, nbits, words.clone());
        if (bitmap.cardinality == 0) {
            return EMPTY;
        }
        // Keep the smaller representation (a sparse bitmap is stored as ranges).
        return bitmapBytes(bitmap.first(), bitmap.last()) < rangesBytes(bitmap.rangeCount())
                ? new IdSet(bitmap.first(), bitmap.last() - bitmap.first() + 1, shifted(bitmap))
                : rangesOf(bitmap);
    }

    private static long[] shifted(IdSet b) {
        int first = b.first();
        int span = b.last() - first + 1;
        long[] w = new long[(span + 63) / 64];
        b.forEach(id -> w[(id - first) >>> 6] |= 1L << ((id - first) & 63));
        return w;
    }

    private static IdSet rangesOf(IdSet b) {
        int n = b.rangeCount();
        int[] f = new int[n];
        int[] l = new int[n];
        int[] i = {0};
        b.forEachRange(
                (first, last) -> {
                    f[i[0]] = first;
                    l[i[0]] = last;
                    i[0]++;
                });
        return new IdSet(f, l, b.cardinality);
    }

    /** Bytes of the ranges form: a count and (first, length) per range. */
    private static long rangesBytes(long ranges) {
        return 4L + 8L * ranges;
    }

    /** Bytes of the bitmap form over {@code [first, last]}: base, length and one bit per id. */
    private static long bitmapBytes(int first, int last) {
        long span = (long) last - first + 1;
        return 8L + (span + 7) / 8;
    }

    /** Picks the representation that takes less space. */
    private static IdSet compact(int[] f, int[] l, long card) {
        if (f.length == 0) {
            return EMPTY;
        }
        long span = (long) l[l.length - 1] - f[0] + 1;
        if (bitmapBytes(f[0], l[l.length - 1]) < rangesBytes(f.length)) {
            long[] words = new long[(int) ((span + 63) / 64)];
            for (int i = 0; i < f.length; i++) {
                for (long id = f[i]; id <= l[i]; id++) {
                    long off = id - f[0];
                    words[(int) (off >>> 6)] |= 1L << (off & 63);
                }
            }
            return new IdSet(f[0], (int) span, words);
        }
        return new IdSet(f, l, card);
    }

    /** Number of ids. */
    public long cardinality() {
        return cardinality;
    }

    public boolean isEmpty() {
        return cardinality == 0;
    }

    public boolean contains(int id) {
        if (bits != null) {
            long off = (long) id - base;
            return off >= 0 && off < nbits && (bits[(int) (off >>> 6)] & (1L << (off & 63))) != 0;
        }
        int i = Arrays.binarySearch(firsts, id);
        if (i >= 0) {
            return true;
        }
        int ins = -i - 1;
        return ins > 0 && id <= lasts[ins - 1];
    }

    /** The smallest id. @throws java.util.NoSuchElementException when empty */
    public int first() {
        if (cardinality == 0) {
            throw new NoSuchElementException("empty id set");
        }
        return iterator().nextInt();
    }

    /** The largest id. @throws java.util.NoSuchElementException when empty */
    public int last() {
        if (cardinality == 0) {
            throw new NoSuchElementException("empty id set");
        }
        if (bits == null) {
            return lasts[lasts.length - 1];
        }
        for (int w = bits.length - 1; ; w--) {
            if (bits[w] != 0) {
                return base + w * 64 + 63 - Long.numberOfLeadingZeros(bits[w]);
            }
        }
    }

    /** A consumer of inclusive id ranges. */
    @FunctionalInterface
    public interface RangeConsumer {
        void accept(int first, int last);
    }

    /** Calls {@code action} for every maximal run of consecutive ids, in ascending order. */
    public void forEachRange(RangeConsumer action) {
        if (bits == null) {
            for (int i = 0; i < firsts.length; i++) {
                action.accept(firsts[i], lasts[i]);
            }
            return;
        }
        PrimitiveIterator.OfInt it = iterator();
        if (!it.hasNext()) {
            return;
        }
        int first = it.nextInt();
        int last = first;
        while (it.hasNext()) {
            int id = it.nextInt();
            if (id != last + 1) {
                action.accept(first, last);
                first = id;
            }
            last = id;
        }
        action.accept(first, last);
    }

    /** The number of maximal runs of consecutive ids. */
    public int rangeCount() {
        if (bits == null) {
            return firsts.length;
        }
        int[] n = {0};
        forEachRange((f, l) -> n[0]++);
        return n[0];
    }

    /** Calls {@code action} for every id in ascending order. */
    public void forEach(IntConsumer action) {
        PrimitiveIterator.OfInt it = iterator();
        while (it.hasNext()) {
            action.accept(it.nextInt());
        }
    }

    /** The ids in ascending order. */
    public PrimitiveIterator.OfInt iterator() {
        if (bits != null) {
            return new PrimitiveIterator.OfInt() {
                int next = advance(0);

                private int advance(int from) {
                    for (int off = from; off < nbits; off++) {
                        if ((bits[off >>> 6] & (1L << (off & 63))) != 0) {
                            return off;
                        }
                    }
                    return -1;
                }

                @Override
                public boolean hasNext() {
                    return next >= 0;
                }

                @Override
                public int nextInt() {
                    if (next < 0) {
                        throw new NoSuchElementException();
                    }
                    int r = base + next;
                    next = advance(next + 1);
                    return r;
                }
            };
        }
        return new PrimitiveIterator.OfInt() {
            int range = 0;
            long cur = firsts.length > 0 ? firsts[0] : 0;

            @Override
            public boolean hasNext() {
                return range < firsts.length;
            }

            @Override
            public int nextInt() {
                if (range >= firsts.length) {
                    throw new NoSuchElementException();
                }
                int r = (int) cur;
                if (cur == lasts[range]) {
                    range++;
                    cur = range < firsts.length ? firsts[range] : 0;
                } else {
                    cur++;
                }
                return r;
            }
        };
    }

    /** The ids as an array (ascending); use {@link #iterator()} for very large sets. */
    public int[] toArray() {
        if (cardinality > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("too many ids for an array: " + cardinality);
        }
        int[] out = new int[(int) cardinality];
        PrimitiveIterator.OfInt it = iterator();
        for (int i = 0; i < out.length; i++) {
            out[i] = it.nextInt();
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof IdSet other) || other.cardinality != cardinality) {
            return false;
        }
        PrimitiveIterator.OfInt a = iterator();
        PrimitiveIterator.OfInt b = other.iterator();
        while (a.hasNext()) {
            if (a.nextInt() != b.nextInt()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = Long.hashCode(cardinality);
        PrimitiveIterator.OfInt it = iterator();
        for (int i = 0; i < 64 && it.hasNext(); i++) {
            h = 31 * h + it.nextInt();
        }
        return h;
    }

    @Override
    public String toString() {
        StringBuilder sb =
                new StringBuilder("IdSet{n=")
                        .append(cardinality)
                        .append(bits != null ? ", bitset" : "");
        sb.append(", [");
        PrimitiveIterator.OfInt it = iterator();
        for (int i = 0; i < 16 && it.hasNext(); i++) {
            sb.append(i == 0 ? "" : ",").append(it.nextInt());
        }
        return sb.append(cardinality > 16 ? ",...]}" : "]}").toString();
    }
}
