package io.netapprox.core.engine;

import java.util.Arrays;

/** One group of a {@link JobReport} (immutable). Message ids are job-wide ids (group base + index). */
public final class GroupReport {
  private static final int[] EMPTY = new int[0];
  private final long groupId;
  private final int size;
  private final int target;
  private final int delivered;
  private final int lost;
  private final boolean targetUnreachable;
  private final int[] deliveredIds;
  private final int[] lostIds;

  GroupReport(long groupId, int size, int target, int delivered, int lost, boolean targetUnreachable,
      int[] deliveredIds, int[] lostIds) {
    this.groupId = groupId;
    this.size = size;
    this.target = target;
    this.delivered = delivered;
    this.lost = lost;
    this.targetUnreachable = targetUnreachable;
    this.deliveredIds = deliveredIds == null ? EMPTY : deliveredIds;
    this.lostIds = lostIds == null ? EMPTY : lostIds;
  }

  public long groupId() { return groupId; }
  /** N_g. */
  public int size() { return size; }
  /** ceil(MSR_g * N_g) (possibly clamped after an MSR update, see {@link #targetUnreachable()}). */
  public int target() { return target; }
  public int delivered() { return delivered; }
  /** Given up by the sender, or never sent because the group had already met its target. */
  public int lost() { return lost; }
  public boolean targetUnreachable() { return targetUnreachable; }
  public boolean reachedTarget() { return delivered >= target; }
  /** Delivered message ids (receiver reports only; empty on the sender). A copy. */
  public int[] deliveredIds() { return deliveredIds.clone(); }
  /** Lost message ids (receiver reports only). A copy. */
  public int[] lostIds() { return lostIds.clone(); }
  public int deliveredIdCount() { return deliveredIds.length; }
  public int lostIdCount() { return lostIds.length; }

  @Override
  public String toString() {
    return "GroupReport{id=" + groupId + ", size=" + size + ", target=" + target + ", delivered=" + delivered
        + ", lost=" + lost + (targetUnreachable ? ", UNREACHABLE" : "") + "}";
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof GroupReport)) {
      return false;
    }
    GroupReport g = (GroupReport) o;
    return groupId == g.groupId && size == g.size && target == g.target && delivered == g.delivered
        && lost == g.lost && targetUnreachable == g.targetUnreachable && Arrays.equals(deliveredIds, g.deliveredIds)
        && Arrays.equals(lostIds, g.lostIds);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(groupId) * 31 + delivered;
  }
}
