package io.netapprox.core.job;

/**
 * A group's target: the number of its messages ATP must deliver, {@code ceil(MSR_g * N_g)}. The one
 * Java implementation of the formula; it matches the engine's ({@code target_of} in
 * native/src/core/engine.cpp), which {@code TargetTest} checks against jobs the native engine runs.
 */
public final class Target {
    /**
     * {@code msr * size} is computed in binary floating point: 0.07 * 100 is 7.000000000000001,
     * whose ceiling would be 8. Both sides subtract this tolerance before rounding up, so an MSR
     * written as a decimal fraction gets the target its decimal value means.
     */
    static final double TOLERANCE = 1e-9;

    private Target() {}

    /**
     * {@code ceil(msr * size)}, within {@code [0, size]}.
     *
     * @param msr the minimal sampling rate in [0, 1]
     * @param size N_g, {@code >= 0}
     * @throws IllegalArgumentException for an MSR outside [0, 1] (or NaN) or a negative size
     */
    public static long of(double msr, long size) {
        GroupSpec.checkMsr(msr, "target");
        if (size < 0) {
            throw new IllegalArgumentException("size must be >= 0, got " + size);
        }
        if (msr >= 1) {
            return size;
        }
        return (long) Math.min(size, Math.max(0, Math.ceil(msr * size - TOLERANCE)));
    }

    /** {@link #of(double, long)} for an {@code int} group size. */
    public static int of(double msr, int size) {
        return (int) of(msr, (long) size);
    }
}
