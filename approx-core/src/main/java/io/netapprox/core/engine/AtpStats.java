package io.netapprox.core.engine;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** A snapshot of the engine and driver counters ({@code na_stats}), by their C names. */
public final class AtpStats {
  static final String[] NAMES = {
    "datagrams_in", "datagrams_out", "bytes_in", "bytes_out",
    "dropped_malformed", "dropped_unknown_session", "dropped_auth", "dropped_replay_or_old",
    "dropped_no_buffer", "dropped_unknown_job", "dropped_fault_in", "dropped_fault_out",
    "events_dropped", "sessions", "jobs", "recv_syscalls",
    "send_syscalls", "udp_datagrams_received", "udp_datagrams_sent", "gro_buffers",
    "gso_sends", "send_errors", "send_eagain", "recv_errors",
    "recv_truncated", "peer_evictions", "unknown_peer_transmits", "wakeups",
    "loop_iterations", "gso_enabled", "gro_enabled"
  };
  private final Map<String, Long> values;

  AtpStats(long[] raw) {
    Map<String, Long> m = new LinkedHashMap<>();
    for (int i = 0; i < NAMES.length; i++) {
      m.put(NAMES[i], raw[i]);
    }
    values = Collections.unmodifiableMap(m);
  }

  /** The counter's value; throws for an unknown name. */
  public long get(String name) {
    Long v = values.get(name);
    if (v == null) {
      throw new IllegalArgumentException("unknown counter '" + name + "'; known: " + values.keySet());
    }
    return v;
  }

  public Map<String, Long> asMap() {
    return values;
  }

  @Override
  public String toString() {
    return "AtpStats" + values;
  }
}
