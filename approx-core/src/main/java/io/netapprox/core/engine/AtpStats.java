package io.netapprox.core.engine;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot of the engine and driver counters ({@code na_stats}), by their C names: drops by cause
 * (malformed, unknown session, authentication, replay, no buffer, unknown job, fault injection,
 * auth-policy mismatches, farewells dropped), events dropped, sessions, jobs, and the driver's
 * syscall, GSO/GRO and error counters.
 */
public final class AtpStats {
    /** {@code na_stats}, slot by slot (checked against the library when it loads). */
    static final NativeRecord<Void> NATIVE =
            new NativeRecord<>(
                    NativeEngine.RECORD_STATS,
                    "counters (na_stats)",
                    List.of(
                            NativeRecord.named("datagrams_in"),
                            NativeRecord.named("datagrams_out"),
                            NativeRecord.named("bytes_in"),
                            NativeRecord.named("bytes_out"),
                            NativeRecord.named("dropped_malformed"),
                            NativeRecord.named("dropped_unknown_session"),
                            NativeRecord.named("dropped_auth"),
                            NativeRecord.named("dropped_replay_or_old"),
                            NativeRecord.named("dropped_no_buffer"),
                            NativeRecord.named("dropped_unknown_job"),
                            NativeRecord.named("dropped_fault_in"),
                            NativeRecord.named("dropped_fault_out"),
                            NativeRecord.named("events_dropped"),
                            NativeRecord.named("auth_policy_mismatches"),
                            NativeRecord.named("farewells_dropped"),
                            NativeRecord.named("sessions"),
                            NativeRecord.named("jobs"),
                            NativeRecord.named("recv_syscalls"),
                            NativeRecord.named("send_syscalls"),
                            NativeRecord.named("udp_datagrams_received"),
                            NativeRecord.named("udp_datagrams_sent"),
                            NativeRecord.named("gro_buffers"),
                            NativeRecord.named("gso_sends"),
                            NativeRecord.named("send_errors"),
                            NativeRecord.named("send_eagain"),
                            NativeRecord.named("recv_errors"),
                            NativeRecord.named("recv_truncated"),
                            NativeRecord.named("peer_evictions"),
                            NativeRecord.named("unknown_peer_transmits"),
                            NativeRecord.named("wakeups"),
                            NativeRecord.named("loop_iterations"),
                            NativeRecord.named("gso_enabled"),
                            NativeRecord.named("gro_enabled")));

    private final Map<String, Long> values;

    AtpStats(long[] raw) {
        Map<String, Long> m = new LinkedHashMap<>();
        List<String> names = NATIVE.names();
        for (int i = 0; i < names.size(); i++) {
            m.put(names.get(i), raw[i]);
        }
        values = Collections.unmodifiableMap(m);
    }

    /** The counter's value; throws for an unknown name. */
    public long get(String name) {
        Long v = values.get(name);
        if (v == null) {
            throw new IllegalArgumentException(
                    "unknown counter '" + name + "'; known: " + values.keySet());
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
