package io.netapprox.core.sampling;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.io.Serializable;
import java.util.Arrays;

/**
 * The exact sum of doubles, rounded once: the result is the correctly rounded value of the real
 * sum, the same whatever order the values were added or accumulators merged in. Complete groups use
 * it so that an answer computed from a fully delivered sample is bitwise the answer of the exact
 * (non-sampled) path, and {@link #roundingBound()} says how far any other floating-point summation
 * of the same values (Spark's own {@code sum}/{@code avg}, in any order or tree) can be from it.
 *
 * <p><b>Method.</b> The sum is kept as a short expansion of non-overlapping doubles ("partials",
 * increasing magnitude) whose real sum is the exact sum of everything added: adding {@code x}
 * replaces each partial {@code y} by the rounding error of {@code x + y} (an error-free
 * transformation, Knuth's two-sum) and carries the rounded sum upwards (Shewchuk 1997, "Adaptive
 * precision floating-point arithmetic"). {@link #value()} rounds the expansion once, from the
 * largest partial down, with the half-way correction for ties. Typically 1-3 partials.
 *
 * <p><b>Non-finite values</b> follow IEEE (and Spark): NaN if any value is NaN or both infinities
 * occur, otherwise the infinity. If finite values overflow the double range while summing, {@link
 * #value()} is the infinity of the overflow's sign (a naive summation overflows too).
 *
 * <p>Mergeable and serializable; not thread-safe.
 */
public final class ExactSum implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Unit roundoff of double, 2^-53. */
    private static final double UNIT_ROUNDOFF = 0x1.0p-53;

    private double[] partials = new double[4];
    private int size;
    private long count;
    private double absoluteSum;
    private boolean nan;
    private boolean positiveInfinity;
    private boolean negativeInfinity;
    private int overflow; // sign of an overflow of finite values, 0 if none

    /** Creates a sum of nothing (0). */
    public ExactSum() {}

    /**
     * @param x a value (any double)
     * @return this
     */
    public ExactSum add(double x) {
        count++;
        if (Double.isNaN(x)) {
            nan = true;
            return this;
        }
        if (Double.isInfinite(x)) {
            if (x > 0) {
                positiveInfinity = true;
            } else {
                negativeInfinity = true;
            }
            return this;
        }
        absoluteSum += Math.abs(x);
        addFinite(x);
        return this;
    }

    private void addFinite(double value) {
        double x = value;
        int kept = 0;
        for (int i = 0; i < size; i++) {
            double y = partials[i];
            if (Math.abs(x) < Math.abs(y)) {
                double t = x;
                x = y;
                y = t;
            }
            double hi = x + y;
            if (Double.isInfinite(hi)) {
                overflow = hi > 0 ? 1 : -1; // finite values left the double range
                return;
            }
            double lo = y - (hi - x); // exact rounding error of x + y (|x| >= |y|)
            if (lo != 0.0) {
                partials[kept++] = lo;
            }
            x = hi;
        }
        if (kept == partials.length) {
            partials = Arrays.copyOf(partials, kept * 2);
        }
        partials[kept++] = x;
        size = kept;
    }

    /**
     * @param other another sum (unchanged)
     * @return this, now the exact sum of both
     */
    public ExactSum merge(ExactSum other) {
        if (other == null) {
            throw new IllegalArgumentException("cannot merge a null sum");
        }
        for (int i = 0; i < other.size; i++) {
            addFinite(other.partials[i]);
        }
        count += other.count;
        absoluteSum += other.absoluteSum;
        nan |= other.nan;
        positiveInfinity |= other.positiveInfinity;
        negativeInfinity |= other.negativeInfinity;
        if (overflow == 0) {
            overflow = other.overflow;
        } else if (other.overflow != 0 && other.overflow != overflow) {
            nan = true; // +overflow and -overflow: the rounded sums would be inf - inf
        }
        return this;
    }

    /**
     * @return the number of values added (non-finite ones included).
     */
    public long count() {
        return count;
    }

    /**
     * @return whether every value was finite (no NaN, no infinity) and the sum did not overflow.
     */
    public boolean isFinite() {
        return !nan && !positiveInfinity && !negativeInfinity && overflow == 0;
    }

    /**
     * @return the sum of the absolute values of the finite values (added naively; used for the
     *     error bound).
     */
    public double absoluteSum() {
        return absoluteSum;
    }

    /**
     * @return the correctly rounded sum (NaN or an infinity for non-finite input, see the class
     *     comment).
     */
    public double value() {
        if (nan || (positiveInfinity && negativeInfinity)) {
            return Double.NaN;
        }
        if (positiveInfinity) {
            return Double.POSITIVE_INFINITY;
        }
        if (negativeInfinity) {
            return Double.NEGATIVE_INFINITY;
        }
        if (overflow != 0) {
            return overflow > 0 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
        }
        if (size == 0) {
            return 0.0;
        }
        int i = size - 1;
        double hi = partials[i];
        double lo = 0.0;
        while (i > 0) {
            double x = hi;
            double y = partials[--i];
            hi = x + y;
            lo = y - (hi - x);
            if (lo != 0.0) {
                break;
            }
        }
        // Round-half-even on the expansion: if the discarded part lo is exactly half an ulp and the
        // partials below
        // it push the same way, the true sum is past the half-way point and rounds away from hi.
        if (i > 0 && ((lo < 0 && partials[i - 1] < 0) || (lo > 0 && partials[i - 1] > 0))) {
            double y = lo * 2;
            double x = hi + y;
            if (y == x - hi) {
                hi = x;
            }
        }
        return hi;
    }

    /**
     * A bound on {@code |naive - value()|} for any recursive or tree summation {@code naive} of the
     * same finite values in double arithmetic, in any order: {@code gamma_(n-1) * sum|x_i|} with
     * {@code gamma_k = k u / (1 - k u)}, {@code u = 2^-53} (Higham, "Accuracy and Stability of
     * Numerical Algorithms", 2nd ed., section 4.2), plus one ulp of the result for our own
     * rounding, with the bound computed generously (the absolute sum itself rounded upwards by the
     * same factor). {@code +Infinity} when {@code n u} approaches 1.
     *
     * @return the bound (0 for at most one value)
     */
    public double roundingBound() {
        return roundingBound(count, absoluteSum, value());
    }

    /**
     * {@link #roundingBound()} from its parts.
     *
     * @param count number of values summed
     * @param absoluteSum sum of their absolute values
     * @param value the correctly rounded sum
     * @return the bound (0 for at most one value)
     */
    public static double roundingBound(long count, double absoluteSum, double value) {
        if (count <= 1) {
            return 0.0;
        }
        double ku = (count - 1) * UNIT_ROUNDOFF;
        if (ku >= 0.5) {
            return Double.POSITIVE_INFINITY;
        }
        double gamma = ku / (1 - ku);
        return gamma * absoluteSum * (1 + 2 * gamma) + Math.ulp(value);
    }

    /**
     * Most partials {@link #read} accepts. The partials of an expansion do not overlap, so the
     * double range (2^-1074 .. 2^1024) holds at most about 40 of them.
     */
    public static final int MAX_WIRE_PARTIALS = 64;

    /**
     * Writes this sum (count, absolute sum, non-finite flags, partials) for {@link #read}: a few
     * dozen bytes, so a share's exact partial can travel with its metadata.
     *
     * @param out where to write
     * @throws IOException from {@code out}
     */
    public void write(DataOutput out) throws IOException {
        out.writeLong(count);
        out.writeDouble(absoluteSum);
        int flags =
                (nan ? 1 : 0)
                        | (positiveInfinity ? 2 : 0)
                        | (negativeInfinity ? 4 : 0)
                        | (overflow > 0 ? 8 : 0)
                        | (overflow < 0 ? 16 : 0);
        out.writeByte(flags);
        out.writeByte(size);
        for (int i = 0; i < size; i++) {
            out.writeDouble(partials[i]);
        }
    }

    /**
     * Reads a sum {@link #write} wrote, from untrusted bytes: every field is checked, and the
     * partials are added again, so the result is a valid expansion whatever they were.
     *
     * @param in where to read
     * @return the sum
     * @throws IOException on a read error or a field out of range
     */
    public static ExactSum read(DataInput in) throws IOException {
        long count = in.readLong();
        double abs = in.readDouble();
        int flags = in.readUnsignedByte();
        int n = in.readUnsignedByte();
        if (count < 0 || !(abs >= 0) || (flags & ~31) != 0 || (flags & 24) == 24) {
            throw new IOException(
                    "corrupt exact sum: count " + count + ", |sum| " + abs + ", flags " + flags);
        }
        if (n > MAX_WIRE_PARTIALS || n > count) {
            throw new IOException("corrupt exact sum: " + n + " partials of " + count + " values");
        }
        ExactSum s = new ExactSum();
        for (int i = 0; i < n; i++) {
            double p = in.readDouble();
            if (!Double.isFinite(p)) {
                throw new IOException("corrupt exact sum: partial " + p);
            }
            s.addFinite(p);
        }
        s.count = count;
        s.absoluteSum = abs;
        s.nan = (flags & 1) != 0;
        s.positiveInfinity = (flags & 2) != 0;
        s.negativeInfinity = (flags & 4) != 0;
        if (s.overflow == 0) {
            s.overflow = (flags & 8) != 0 ? 1 : (flags & 16) != 0 ? -1 : 0;
        }
        return s;
    }

    @Override
    public String toString() {
        return "ExactSum{value=" + value() + ", count=" + count + ", partials=" + size + "}";
    }
}
