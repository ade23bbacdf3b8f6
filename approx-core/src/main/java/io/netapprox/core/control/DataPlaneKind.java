package io.netapprox.core.control;

import java.util.EnumSet;
import java.util.Set;

/**
 * The two data planes a session can run its jobs on. The control plane negotiates which (HELLO
 * offers, HELLO_ACK answers with the planes both ends can run, DATA_PLANE_SELECT picks one); the
 * jobs, groups, targets and reports are the same on both.
 */
public enum DataPlaneKind {
    /** ATP over UDP: the native engine's sessions (approximate-aware, loss-tolerant). */
    ATP(1),
    /**
     * One TCP connection per session, reliable and in order: the network-oblivious baseline (the
     * paper's SampleSend / EarlySend) and the fallback where ATP cannot run.
     */
    TCP(2);

    /** Every bit a plane set may carry on the wire. */
    static final int ALL_BITS = 3;

    private final int bit;

    DataPlaneKind(int bit) {
        this.bit = bit;
    }

    /** Its bit in HELLO / HELLO_ACK's {@code data_planes} and DATA_PLANE_SELECT's {@code plane}. */
    int bit() {
        return bit;
    }

    /** The lower-case name used in configuration and messages ("atp", "tcp"). */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    static int bits(Set<DataPlaneKind> planes) {
        int b = 0;
        for (DataPlaneKind k : planes) {
            b |= k.bit;
        }
        return b;
    }

    static Set<DataPlaneKind> fromBits(int bits) {
        Set<DataPlaneKind> s = EnumSet.noneOf(DataPlaneKind.class);
        for (DataPlaneKind k : values()) {
            if ((bits & k.bit) != 0) {
                s.add(k);
            }
        }
        return s;
    }

    /** The plane of exactly one bit, or null. */
    static DataPlaneKind ofBit(int bit) {
        for (DataPlaneKind k : values()) {
            if (k.bit == bit) {
                return k;
            }
        }
        return null;
    }

    /** "atp+tcp", "tcp", "none": for messages. */
    static String describe(Set<DataPlaneKind> planes) {
        if (planes.isEmpty()) {
            return "none";
        }
        StringBuilder b = new StringBuilder();
        for (DataPlaneKind k : planes) {
            b.append(b.length() == 0 ? "" : "+").append(k.label());
        }
        return b.toString();
    }
}
