package io.netapprox.core.control;

import java.util.Arrays;
import java.util.NoSuchElementException;
import java.util.PrimitiveIterator;
import java.util.function.IntConsumer;

/**
 * An immutable set of message ids (non-negative ints), stored and sent compactly: as sorted disjoint ranges or as
 * a bitset over {@code [base, base + nbits)}, whichever is smaller on the wire. The in-memory representation is
 * the one chosen for the wire, so a decoded set costs about as much memory as its frame (no amplification).
 */
public final class IdSet {
    /** Wire encoding tags. */
    static final int ENC_RANGES = 0;
    static final int ENC_BITSET = 1;

    private static final IdSet EMPTY = new IdSet(new int[0], new int[0], 0L);

    // Ranges representation (bits == null): firsts[i]..lasts[i] inclusive, sorted, disjoint, non-adjacent.
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

    /** Picks the representation that is smaller on the wire. */
    private static IdSet compact(int[] f, int[] l, long card) {
        if (f.length == 0) {
            return EMPTY;
        }
        long rangesBytes = 4L + 8L * f.length;
        long span = (long) l[l.length - 1] - f[0] + 1;
        long bitsetBytes = 8L + (span + 7) / 8;
        if (bitsetBytes < rangesBytes) {
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

    // ---- wire format ---------------------------------------------------------------------------------------------

    boolean isBitset() {
        return bits != null;
    }

    int encodedLength() {
        return 1 + (bits != null ? 8 + (nbits + 7) / 8 : 4 + 8 * firsts.length);
    }

    void encode(io.netty.buffer.ByteBuf out) {
        if (bits != null) {
            out.writeByte(ENC_BITSET);
            out.writeInt(base);
            out.writeInt(nbits);
            int nbytes = (nbits + 7) / 8;
            for (int i = 0; i < nbytes; i++) {
                out.writeByte((int) (bits[i >>> 3] >>> ((i & 7) * 8)));
            }
        } else {
            out.writeByte(ENC_RANGES);
            out.writeInt(firsts.length);
            for (int i = 0; i < firsts.length; i++) {
                out.writeInt(firsts[i]);
                out.writeInt(lasts[i] - firsts[i] + 1);
            }
        }
    }

    /** Strict decoder; throws {@link WireFormat.MalformedException} naming {@code field} on any violation. */
    static IdSet decode(io.netty.buffer.ByteBuf in, String field) {
        int enc = WireFormat.readU8(in, field + ".encoding");
        if (enc == ENC_RANGES) {
            long count = WireFormat.readU32(in, field + ".rangeCount");
            if (count * 8 > in.readableBytes()) {
                throw new WireFormat.MalformedException(field + ": " + count + " ranges declared but only "
                        + in.readableBytes() + " bytes remain");
            }
            int n = (int) count;
            int[] f = new int[n];
            int[] l = new int[n];
            long card = 0;
            long prevLast = -2;
            for (int i = 0; i < n; i++) {
                long first = in.readUnsignedInt();
                long len = in.readUnsignedInt();
                long last = first + len - 1;
                if (len == 0 || last > Integer.MAX_VALUE) {
                    throw new WireFormat.MalformedException(field + ": range " + i + " [" + first + ", +" + len
                            + ") is empty or exceeds the id space");
                }
                if (first <= prevLast + 1) {
                    throw new WireFormat.MalformedException(field + ": range " + i
                            + " is not sorted, disjoint and separated from the previous one");
                }
                f[i] = (int) first;
                l[i] = (int) last;
                card += len;
                prevLast = last;
            }
            return n == 0 ? EMPTY : new IdSet(f, l, card);
        }
        if (enc == ENC_BITSET) {
            long base = WireFormat.readU32(in, field + ".base");
            long nbits = WireFormat.readU32(in, field + ".nbits");
            if (nbits == 0 || base + nbits - 1 > Integer.MAX_VALUE) {
                throw new WireFormat.MalformedException(field + ": bitset [" + base + ", +" + nbits
                        + ") is empty or exceeds the id space");
            }
            long nbytes = (nbits + 7) / 8;
            if (nbytes > in.readableBytes()) {
                throw new WireFormat.MalformedException(field + ": bitset of " + nbits + " bits needs " + nbytes
                        + " bytes but only " + in.readableBytes() + " remain");
            }
            long[] words = new long[(int) ((nbits + 63) / 64)];
            for (int i = 0; i < nbytes; i++) {
                words[i >>> 3] |= (in.readUnsignedByte() & 0xFFL) << ((i & 7) * 8);
            }
            int padBits = (int) (nbytes * 8 - nbits);
            if (padBits > 0) {
                long lastByte = (words[(int) ((nbytes - 1) >>> 3)] >>> (((nbytes - 1) & 7) * 8)) & 0xFF;
                if ((lastByte >>> (8 - padBits)) != 0) {
                    throw new WireFormat.MalformedException(field + ": bitset padding bits are not zero");
                }
            }
            return new IdSet((int) base, (int) nbits, words);
        }
        throw new WireFormat.MalformedException(field + ": unknown id-set encoding " + enc);
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
        StringBuilder sb = new StringBuilder("IdSet{n=").append(cardinality).append(bits != null ? ", bitset" : "");
        sb.append(", [");
        PrimitiveIterator.OfInt it = iterator();
        for (int i = 0; i < 16 && it.hasNext(); i++) {
            sb.append(i == 0 ? "" : ",").append(it.nextInt());
        }
        return sb.append(cardinality > 16 ? ",...]}" : "]}").toString();
    }
}
