package io.netapprox.core.job;

/**
 * One group of a job: the application's group id (reported back unchanged; opaque, 0 for the single
 * group of a global-MSR job), its number of messages N_g and its minimal sampling rate MSR_g. ATP
 * delivers at least {@link #target()} = {@code ceil(MSR_g * N_g)} of the group's messages; MSR_g =
 * 1 is exact (reliable, in order).
 *
 * @param groupId the application's GroupID
 * @param size N_g, the number of messages of the group, {@code >= 1}
 * @param msr MSR_g in [0, 1]
 */
public record GroupSpec(long groupId, int size, double msr) {
    public GroupSpec {
        if (size < 1) {
            throw new IllegalArgumentException(
                    "group " + groupId + ": size (N_g) must be >= 1, got " + size);
        }
        checkMsr(msr, "group " + groupId);
    }

    public static GroupSpec of(long groupId, int size, double msr) {
        return new GroupSpec(groupId, size, msr);
    }

    /** {@code ceil(msr * size)}: the number of messages ATP guarantees ({@link Target}). */
    public int target() {
        return Target.of(msr, size);
    }

    /** The one MSR rule: a value in [0, 1] (NaN is rejected). */
    public static void checkMsr(double msr, String what) {
        if (!(msr >= 0.0 && msr <= 1.0)) {
            throw new IllegalArgumentException(what + ": MSR must be in [0, 1], got " + msr);
        }
    }
}
