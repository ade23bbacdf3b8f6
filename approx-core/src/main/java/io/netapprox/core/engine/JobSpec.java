package io.netapprox.core.engine;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A job announcement: its groups (message ids are assigned in group order: group 0 owns [0, N_0), group 1 the
 * next N_1 ids, ...), an optional explicit job id, and whether MRDF scheduling may reorder messages (exact groups
 * are always in order).
 */
public final class JobSpec {
  private final List<GroupSpec> groups;
  private final Integer jobId;
  private final boolean mrdf;

  private JobSpec(List<GroupSpec> groups, Integer jobId, boolean mrdf) {
    this.groups = groups;
    this.jobId = jobId;
    this.mrdf = mrdf;
  }

  /** One global group (id 0) of {@code messages} messages with the job's MSR. */
  public static JobSpec of(int messages, double msr) {
    return builder().addGroup(0, messages, msr).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<GroupSpec> groups() { return groups; }
  /** The explicit job id, or null to let the session allocate one. */
  public Integer jobId() { return jobId; }
  public boolean mrdf() { return mrdf; }

  public long totalMessages() {
    long n = 0;
    for (GroupSpec g : groups) {
      n += g.size();
    }
    return n;
  }

  @Override
  public String toString() {
    return "JobSpec{jobId=" + jobId + ", mrdf=" + mrdf + ", groups=" + groups + "}";
  }

  public static final class Builder {
    private final List<GroupSpec> groups = new ArrayList<>();
    private Integer jobId;
    private boolean mrdf = true;

    private Builder() {}

    public Builder addGroup(GroupSpec g) {
      groups.add(java.util.Objects.requireNonNull(g, "group"));
      return this;
    }

    public Builder addGroup(long groupId, int size, double msr) {
      return addGroup(GroupSpec.of(groupId, size, msr));
    }

    /** An explicit job id (unique among this side's live jobs on the session); by default the session picks. */
    public Builder jobId(int id) {
      jobId = id;
      return this;
    }

    public Builder mrdf(boolean on) {
      mrdf = on;
      return this;
    }

    public JobSpec build() {
      if (groups.isEmpty()) {
        throw new IllegalArgumentException("a job needs at least one group");
      }
      long n = 0;
      for (GroupSpec g : groups) {
        n += g.size();
      }
      if (n > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("a job has at most 2^31-1 messages, got " + n);
      }
      return new JobSpec(Collections.unmodifiableList(new ArrayList<>(groups)), jobId, mrdf);
    }
  }
}
