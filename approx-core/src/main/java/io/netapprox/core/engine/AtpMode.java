package io.netapprox.core.engine;

/** The paper's ablations (enum na_mode); {@link #FULL} is the product. */
public enum AtpMode {
  /** Send at line rate, FIFO, retransmit until targets are met, no slack priority (ATP_Base). */
  BASE,
  /** + rate control against a static TLR = 1 - MSR (ATP_RC). */
  RC,
  /** + minimal-remaining-data-first scheduling (ATP_RC+MRDF). */
  RC_MRDF,
  /** + slack priority from the static TLR (ATP_FixTLR). */
  FIX_TLR,
  /** Dynamic TLR for rate control, static priority class (ATP_FixPrio). */
  FIX_PRIO,
  /** Dynamic TLR, rate control, MRDF, dynamic slack priority (ATP_Full): the product. */
  FULL,
  /** FULL with the paper's rate law (eqs. 2-3 exactly), for comparisons. */
  PAPER
}
