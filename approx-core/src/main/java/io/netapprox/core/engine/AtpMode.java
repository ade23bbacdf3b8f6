package io.netapprox.core.engine;

/** The paper's ablations ({@code enum na_mode}, with its values); {@link #FULL} is the product. */
public enum AtpMode {
    /** Send at line rate, FIFO, retransmit until targets are met, no slack priority (ATP_Base). */
    BASE(0),
    /** + rate control against a static TLR = 1 - MSR (ATP_RC). */
    RC(1),
    /** + minimal-remaining-data-first scheduling (ATP_RC+MRDF). */
    RC_MRDF(2),
    /** + slack priority from the static TLR (ATP_FixTLR). */
    FIX_TLR(3),
    /** Dynamic TLR for rate control, static priority class (ATP_FixPrio). */
    FIX_PRIO(4),
    /**
     * Dynamic TLR, rate control (the slack law), MRDF, dynamic slack priority (ATP_Full): the
     * product.
     */
    FULL(5),
    /** FULL with the paper's rate law (eqs. 2-3 exactly), for comparisons. */
    PAPER(6);

    private final int nativeValue;

    AtpMode(int nativeValue) {
        this.nativeValue = nativeValue;
    }

    /** The {@code NA_MODE_*} value. */
    int nativeValue() {
        return nativeValue;
    }
}
