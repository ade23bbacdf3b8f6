package io.netapprox.core.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The final report of a job (immutable), on the sender ({@link OutgoingJob#outcome()}) and on the receiver
 * ({@link IncomingJobListener#onJobDone}). The receiver's report is authoritative for what was delivered and lists
 * the delivered / lost message ids per group.
 */
public final class JobReport {
  private final long sessionId;
  private final int jobId;
  private final boolean sender;
  private final AtpStatus status;
  private final int messages;
  private final int delivered;
  private final int lost;
  private final double measuredLoss;
  private final long packetsSent;
  private final long packetsRetransmitted;
  private final long bytesSent;
  private final long epochs;
  private final long startedNanos;
  private final long finishedNanos;
  private final long jctNanos;
  private final long[] timeInClassNanos;
  private final List<GroupReport> groups;

  private JobReport(long[] info, List<GroupReport> groups) {
    int k = 0;
    sessionId = info[k++];
    jobId = (int) info[k++];
    sender = info[k++] != 0;
    status = AtpStatus.of((int) info[k++]);
    messages = (int) info[k++];
    delivered = (int) info[k++];
    lost = (int) info[k++];
    measuredLoss = Double.longBitsToDouble(info[k++]);
    packetsSent = info[k++];
    packetsRetransmitted = info[k++];
    bytesSent = info[k++];
    epochs = info[k++];
    startedNanos = info[k++];
    finishedNanos = info[k++];
    jctNanos = info[k++];
    timeInClassNanos = new long[8];
    System.arraycopy(info, k, timeInClassNanos, 0, 8);
    this.groups = groups;
  }

  /** Reads a native na_report (does not free it). Returns null when the pointer is not a live report. */
  static JobReport read(long report) {
    long[] info = new long[NativeEngine.REPORT_INFO_LONGS];
    if (NativeEngine.reportInfo(report, info) != 0) {
      return null;
    }
    int n = (int) info[NativeEngine.REPORT_INFO_LONGS - 1];
    List<GroupReport> groups = new ArrayList<>(n);
    long[] g = new long[NativeEngine.GROUP_INFO_LONGS];
    for (int i = 0; i < n; i++) {
      if (NativeEngine.reportGroup(report, i, g) != 0) {
        return null;
      }
      int[] d = new int[(int) g[6]];
      int[] l = new int[(int) g[7]];
      if (d.length + l.length > 0 && NativeEngine.reportGroupIds(report, i, d, l) != 0) {
        return null;
      }
      groups.add(new GroupReport(g[0], (int) g[1], (int) g[2], (int) g[3], (int) g[4], g[5] != 0, d, l));
    }
    return new JobReport(info, Collections.unmodifiableList(groups));
  }

  public long sessionId() { return sessionId; }
  public int jobId() { return jobId; }
  /** True for the sender's report, false for the receiver's. */
  public boolean isSender() { return sender; }
  /** {@link AtpStatus#OK} or what ended the job (PEER_DEAD, IDLE_TIMEOUT, CLOSED on cancel/close, ...). */
  public AtpStatus status() { return status; }
  public boolean isSuccess() { return status == AtpStatus.OK; }
  /** N. */
  public int messages() { return messages; }
  public int delivered() { return delivered; }
  public int lost() { return lost; }
  /** Sender: 1 - acked/sent packets over the job; receiver: lost/N messages. */
  public double measuredLoss() { return measuredLoss; }
  public long packetsSent() { return packetsSent; }
  public long packetsRetransmitted() { return packetsRetransmitted; }
  public long bytesSent() { return bytesSent; }
  public long epochs() { return epochs; }
  /** Engine clock (CLOCK_MONOTONIC) at start. */
  public long startedNanos() { return startedNanos; }
  public long finishedNanos() { return finishedNanos; }
  /** Job completion time. */
  public Duration jct() { return Duration.ofNanos(jctNanos); }
  /** Sender: time spent marked with priority class k (0 = exact). */
  public Duration timeInClass(int k) { return Duration.ofNanos(timeInClassNanos[k]); }
  public long[] timeInClassNanos() { return timeInClassNanos.clone(); }
  public List<GroupReport> groups() { return groups; }

  /** True when every group delivered at least its target. */
  public boolean allTargetsReached() {
    for (GroupReport g : groups) {
      if (!g.reachedTarget()) {
        return false;
      }
    }
    return true;
  }

  @Override
  public String toString() {
    return "JobReport{session=" + Long.toUnsignedString(sessionId) + ", job=" + jobId + ", "
        + (sender ? "sender" : "receiver") + ", status=" + status + ", N=" + messages + ", delivered=" + delivered
        + ", lost=" + lost + ", measuredLoss=" + String.format("%.4f", measuredLoss) + ", packets=" + packetsSent
        + ", retx=" + packetsRetransmitted + ", jct=" + jct().toMillis() + "ms, groups=" + groups + "}";
  }
}
