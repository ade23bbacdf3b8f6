package io.netapprox.core.engine;

/**
 * One group of a job: the application's group id (reported back unchanged), N_g messages and the minimal sampling
 * rate MSR_g in [0, 1]; the engine delivers at least ceil(MSR_g * N_g) of them. MSR_g = 1 is exact: reliable and
 * in order.
 */
public final class GroupSpec {
  private final long groupId;
  private final int size;
  private final double msr;

  private GroupSpec(long groupId, int size, double msr) {
    if (size <= 0) {
      throw new IllegalArgumentException("group " + groupId + ": size (N_g) must be positive, got " + size);
    }
    if (!(msr >= 0 && msr <= 1)) {
      throw new IllegalArgumentException("group " + groupId + ": msr must be in [0, 1], got " + msr);
    }
    this.groupId = groupId;
    this.size = size;
    this.msr = msr;
  }

  public static GroupSpec of(long groupId, int size, double msr) {
    return new GroupSpec(groupId, size, msr);
  }

  public long groupId() { return groupId; }
  public int size() { return size; }
  public double msr() { return msr; }
  /** ceil(msr * size), the number of messages the engine guarantees. */
  public int target() {
    return msr >= 1 ? size : (int) Math.min(size, Math.ceil(msr * size - 1e-9));
  }

  @Override
  public String toString() {
    return "GroupSpec{id=" + groupId + ", size=" + size + ", msr=" + msr + "}";
  }
}
