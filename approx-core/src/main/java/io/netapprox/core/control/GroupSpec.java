package io.netapprox.core.control;

/**
 * One group of a job: its application group id, its number of messages N_g and its minimal sampling rate MSR_g.
 *
 * @param groupId  the application's GroupID (opaque 64-bit value; 0 for the single group of a global-MSR job)
 * @param messages N_g, the number of messages of the group, {@code >= 0}
 * @param msr      MSR_g in [0, 1]; 1 means exact (reliable, in order)
 */
public record GroupSpec(long groupId, int messages, double msr) {
    public GroupSpec {
        if (messages < 0) {
            throw new IllegalArgumentException("group " + groupId + ": messages must be >= 0, got " + messages);
        }
        checkMsr(msr, "group " + groupId);
    }

    static void checkMsr(double msr, String what) {
        if (!(msr >= 0.0 && msr <= 1.0)) { // also rejects NaN
            throw new IllegalArgumentException(what + ": MSR must be in [0, 1], got " + msr);
        }
    }
}
