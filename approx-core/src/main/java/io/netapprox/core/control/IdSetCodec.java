package io.netapprox.core.control;

import io.netapprox.core.job.IdSet;
import io.netty.buffer.ByteBuf;

/**
 * The wire form of an {@link IdSet} (docs/control-plane.md, "Id sets"): tag 0 = sorted disjoint
 * ranges {@code count u32, count x (first u32, length u32)}, tag 1 = a bitmap {@code base u32,
 * nbits u32, ceil(nbits/8) bytes} (bit i of the set is bit {@code i % 8} of byte {@code i / 8};
 * padding bits 0). The encoder picks whichever is smaller, the same rule {@link IdSet} uses in
 * memory; the decoder accepts only that canonical form (a bitmap starts and ends on a member).
 */
final class IdSetCodec {
    static final int ENC_RANGES = 0;
    static final int ENC_BITMAP = 1;

    private IdSetCodec() {}

    /** Whether {@code s} goes on the wire as a bitmap (strictly smaller than its ranges). */
    static boolean usesBitmap(IdSet s) {
        return !s.isEmpty() && bitmapBytes(s) < rangesBytes(s);
    }

    private static long rangesBytes(IdSet s) {
        return 4L + 8L * s.rangeCount();
    }

    private static long bitmapBytes(IdSet s) {
        long span = (long) s.last() - s.first() + 1;
        return 8L + (span + 7) / 8;
    }

    static int encodedLength(IdSet s) {
        return (int) (1 + (usesBitmap(s) ? bitmapBytes(s) : rangesBytes(s)));
    }

    static void encode(IdSet s, ByteBuf out) {
        if (!usesBitmap(s)) {
            out.writeByte(ENC_RANGES);
            out.writeInt(s.rangeCount());
            s.forEachRange(
                    (first, last) -> {
                        out.writeInt(first);
                        out.writeInt(last - first + 1);
                    });
            return;
        }
        int base = s.first();
        int nbits = s.last() - base + 1;
        out.writeByte(ENC_BITMAP);
        out.writeInt(base);
        out.writeInt(nbits);
        int[] pending = {0, 0}; // {index of the byte being filled, its bits}
        s.forEach(
                id -> {
                    int off = id - base;
                    while (pending[0] < off >>> 3) {
                        out.writeByte(pending[1]);
                        pending[1] = 0;
                        pending[0]++;
                    }
                    pending[1] |= 1 << (off & 7);
                });
        out.writeByte(pending[1]); // the byte holding the last id
    }

    /**
     * Strict decoder; throws {@link WireFormat.MalformedException} naming {@code field} on any
     * violation.
     */
    static IdSet decode(ByteBuf in, String field) {
        int enc = WireFormat.readU8(in, field + ".encoding");
        if (enc == ENC_RANGES) {
            long count = WireFormat.readU32(in, field + ".rangeCount");
            if (count * 8 > in.readableBytes()) {
                throw new WireFormat.MalformedException(
                        field
                                + ": "
                                + count
                                + " ranges declared but only "
                                + in.readableBytes()
                                + " bytes remain");
            }
            int n = (int) count;
            int[] f = new int[n];
            int[] l = new int[n];
            long prevLast = -2;
            for (int i = 0; i < n; i++) {
                long first = in.readUnsignedInt();
                long len = in.readUnsignedInt();
                long last = first + len - 1;
                if (len == 0 || last > Integer.MAX_VALUE) {
                    throw new WireFormat.MalformedException(
                            field
                                    + ": range "
                                    + i
                                    + " ["
                                    + first
                                    + ", +"
                                    + len
                                    + ") is empty or exceeds the id space");
                }
                if (first <= prevLast + 1) {
                    throw new WireFormat.MalformedException(
                            field
                                    + ": range "
                                    + i
                                    + " is not sorted, disjoint and separated from the previous one");
                }
                f[i] = (int) first;
                l[i] = (int) last;
                prevLast = last;
            }
            IdSet set = IdSet.ofRanges(f, l);
            if (usesBitmap(set)) {
                throw new WireFormat.MalformedException(
                        field + ": not canonical, these ranges are smaller as a bitmap");
            }
            return set;
        }
        if (enc == ENC_BITMAP) {
            long base = WireFormat.readU32(in, field + ".base");
            long nbits = WireFormat.readU32(in, field + ".nbits");
            if (nbits == 0 || base + nbits - 1 > Integer.MAX_VALUE) {
                throw new WireFormat.MalformedException(
                        field
                                + ": bitset ["
                                + base
                                + ", +"
                                + nbits
                                + ") is empty or exceeds the id space");
            }
            long nbytes = (nbits + 7) / 8;
            if (nbytes > in.readableBytes()) {
                throw new WireFormat.MalformedException(
                        field
                                + ": bitset of "
                                + nbits
                                + " bits needs "
                                + nbytes
                                + " bytes but only "
                                + in.readableBytes()
                                + " remain");
            }
            long[] words = new long[(int) ((nbits + 63) / 64)];
            for (int i = 0; i < nbytes; i++) {
                words[i >>> 3] |= (in.readUnsignedByte() & 0xFFL) << ((i & 7) * 8);
            }
            int padBits = (int) (nbytes * 8 - nbits);
            if (padBits > 0) {
                long lastByte =
                        (words[(int) ((nbytes - 1) >>> 3)] >>> (((nbytes - 1) & 7) * 8)) & 0xFF;
                if ((lastByte >>> (8 - padBits)) != 0) {
                    throw new WireFormat.MalformedException(
                            field + ": bitset padding bits are not zero");
                }
            }
            IdSet set = IdSet.ofBitmap((int) base, (int) nbits, words);
            // Canonical: the bitmap spans exactly first..last and beats the ranges form; one set,
            // one encoding, so a peer cannot make two reports that differ only in their bytes.
            if (set.isEmpty()
                    || set.first() != base
                    || set.last() != base + nbits - 1
                    || !usesBitmap(set)) {
                throw new WireFormat.MalformedException(
                        field
                                + ": not canonical, a bitmap must start and end on a member and"
                                + " be smaller than the ranges form");
            }
            return set;
        }
        throw new WireFormat.MalformedException(field + ": unknown id-set encoding " + enc);
    }
}
