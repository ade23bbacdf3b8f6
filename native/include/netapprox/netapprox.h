/*
 * libnetapprox: the C API of the ATP (Approximate Transmission Protocol) engine.
 *
 * One na_engine = one ATP protocol engine + one UDP socket + one I/O thread, shared by every session and job of
 * the process (Spark executor, Flink TaskManager, Kafka relay). Sessions are created by the control plane with a
 * 64-bit id and a 32-byte secret; jobs are sets of messages split into groups with a minimal sampling rate (MSR).
 *
 * ---------------------------------------------------------------------------------------------------------------
 * Thread-safety contract
 * ---------------------------------------------------------------------------------------------------------------
 *  - Every function may be called from any thread, concurrently, on the same engine, EXCEPT na_engine_close:
 *    the caller must make sure no other call on the same handle is in progress or starts after close begins.
 *    (The implementation is defensive: handles are looked up in a registry, calls that race with close return
 *    NA_ERR_CLOSED_HANDLE or NA_ERR_CLOSED rather than touching freed memory, and blocked na_poll_events /
 *    na_job_submit_wait callers are woken with NA_ERR_CLOSED - but do not rely on racing close.)
 *  - Using a handle after na_engine_close returns NA_ERR_CLOSED_HANDLE; so does any pointer that is not a live
 *    engine handle (NULL included). Handles are never reused within a process.
 *  - Calls hold the engine's internal lock only briefly; na_poll_events and na_job_submit_wait block only for
 *    their timeout, without holding it.
 *  - An na_report is independent of its engine (it stays valid after na_engine_close) and must be freed with
 *    na_report_free exactly once. Report accessors are thread-safe (a report is immutable).
 *  - kMessage data (na_event.data) stays valid until na_message_release(handle) or na_engine_close, whichever
 *    comes first. Unreleased messages keep occupying the session's receive buffer (flow control).
 *
 * Errors: every function that can fail returns an int status: NA_OK (0) or a negative NA_ERR_* code
 * (na_strerror gives its name). Nothing in this API aborts the process on bad input or misuse.
 */
#ifndef NETAPPROX_NETAPPROX_H
#define NETAPPROX_NETAPPROX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NA_API __attribute__((visibility("default")))
#else
#define NA_API
#endif

/* ---- status codes (values are stable; the first block equals atp::Status) ------------------------------------ */
#define NA_OK 0
#define NA_ERR_INVALID_ARGUMENT -1
#define NA_ERR_NOT_FOUND -2
#define NA_ERR_ALREADY_EXISTS -3
#define NA_ERR_WOULD_BLOCK -4    /* buffer full: retry after acks / after consuming events */
#define NA_ERR_LIMIT_EXCEEDED -5 /* a configured bound would be exceeded */
#define NA_ERR_CLOSED -6         /* session/job/engine closed (also: engine shutting down while waiting) */
#define NA_ERR_PEER_DEAD -7
#define NA_ERR_IDLE_TIMEOUT -8
#define NA_ERR_PROTOCOL -9
#define NA_ERR_INTERNAL -10
/* API-level codes */
#define NA_ERR_CLOSED_HANDLE -100 /* the na_engine / na_report pointer is not a live handle (NULL, freed, garbage) */
#define NA_ERR_SYSTEM -101        /* a system call failed (socket, bind, epoll, ...); see errbuf */
#define NA_ERR_ADDRESS -102       /* host string did not resolve to an address usable by the engine's socket */
#define NA_ERR_BUFFER_TOO_SMALL -103

/* ---- configuration -------------------------------------------------------------------------------------------- */
enum na_mode {
  NA_MODE_BASE = 0,     /* send at line rate, FIFO, retransmit until targets met, no slack priority */
  NA_MODE_RC = 1,       /* + rate control against a static TLR = 1 - MSR */
  NA_MODE_RC_MRDF = 2,  /* + minimal-remaining-data-first scheduling */
  NA_MODE_FIX_TLR = 3,  /* + slack priority from the static TLR */
  NA_MODE_FIX_PRIO = 4, /* dynamic TLR for rate control, static priority class */
  NA_MODE_FULL = 5,     /* dynamic TLR, rate control, MRDF, dynamic slack priority (the product) */
  NA_MODE_PAPER = 6     /* FULL with the paper's rate law (eqs. 2-3 exactly) */
};

typedef struct na_config {
  uint32_t struct_size; /* set by na_config_init; lets the ABI grow */
  /* protocol (mirrors atp::EngineConfig; times in nanoseconds) */
  uint64_t line_rate_bps; /* R_max */
  uint32_t max_datagram;  /* UDP payload bytes (1472 for a 1500-byte IPv4 MTU; 1452 for IPv6) */
  double reaction_speed;  /* m in eq. 2 */
  double tlr_floor;
  uint64_t initial_rtt_ns;
  uint64_t min_epoch_ns;
  uint64_t ack_delay_ns;
  uint32_t ack_every;
  uint64_t idle_timeout_ns;
  uint64_t peer_death_timeout_ns;
  uint64_t recv_buffer_bytes; /* per session */
  uint64_t send_buffer_bytes; /* per session */
  uint32_t max_message_bytes;
  uint32_t max_sessions;
  uint32_t max_jobs_per_session;
  uint32_t max_messages_per_job;
  uint32_t max_groups_per_job;
  uint32_t max_pending_events;
  uint8_t dscp_by_class[8]; /* class 0 = exact traffic */
  uint8_t no_priority_dscp;
  int32_t mode;               /* enum na_mode */
  double fault_drop_outgoing; /* fault injection (tests/benchmarks): fraction of datagrams dropped */
  double fault_drop_incoming;
  uint64_t fault_seed;
  /* driver */
  char bind_address[64]; /* numeric IPv4/IPv6 address; "::" = dual-stack IPv6 socket */
  uint16_t bind_port;    /* 0 = ephemeral (see na_engine_local_port) */
  int32_t enable_gso;    /* use UDP GSO (UDP_SEGMENT) when available */
  int32_t enable_gro;    /* use UDP GRO when available */
  int32_t socket_buffer_bytes;
  uint32_t event_queue_capacity; /* bound of the queue na_poll_events drains */
  uint32_t max_peers;            /* bound of the peer address table */
  int32_t trace_epochs;          /* emit NA_EVENT_EPOCH samples */
  int32_t payload_auth;          /* 1 (default): tags cover data payloads; 0: headers only (see engine.hpp) */
  int32_t prefer_aes_gcm;        /* 1 (default): AES-256-GCM tags where AES-NI exists, else ChaCha20-Poly1305 */
  /* protocol, continued (added after the fields above; na_config_init sets them) */
  int32_t coalesce_messages;    /* 1 (default): several small whole messages per datagram (DATA bundles); 0: one */
  uint32_t wire_overhead_bytes; /* bytes per datagram beyond the UDP payload the pacer counts, [0, 1024]: 42 (default,
                                   UDP + IPv4 + Ethernet); 62 on IPv6 paths */
  uint32_t max_report_ranges;   /* id ranges a receiver report lists, [0, 2^24]; beyond it counts only (65536) */
  double needy_class0_fraction; /* NA_MODE_FULL: a job whose loss allowance is spent sends in class 0 once it needs
                                   at most this fraction of its target, [0, 1]; 0.75 (default); 0 = never */
} na_config;

/* Fills *cfg with the defaults (those of atp::EngineConfig; bind 0.0.0.0:0). Returns NA_OK or an error. */
NA_API int na_config_init(na_config* cfg);

/* ---- engine --------------------------------------------------------------------------------------------------- */
typedef struct na_engine na_engine;

/* Opens an engine (socket bound, I/O thread started). On failure *out is NULL and errbuf (if given) holds a
 * NUL-terminated message. */
NA_API int na_engine_open(const na_config* cfg, na_engine** out, char* errbuf, size_t errlen);
/* Joins the I/O thread and frees everything (sessions are dropped without notice to peers; close them first
 * for a clean shutdown). Safe on NULL and on an already-closed handle (returns NA_ERR_CLOSED_HANDLE). */
NA_API int na_engine_close(na_engine* eng);
/* Local UDP port (host byte order) or a negative error. */
NA_API int na_engine_local_port(na_engine* eng);

/* ---- sessions ------------------------------------------------------------------------------------------------- */
/* peer_host: numeric address or host name; initiator must differ on the two ends. */
NA_API int na_session_open(na_engine* eng, uint64_t session_id, const uint8_t key[32], const char* peer_host,
                           uint16_t peer_port, int initiator);
NA_API int na_session_set_peer(na_engine* eng, uint64_t session_id, const char* peer_host, uint16_t peer_port);
NA_API int na_session_close(na_engine* eng, uint64_t session_id);

/* ---- jobs (sender side) --------------------------------------------------------------------------------------- */
typedef struct na_group_spec {
  uint64_t group_id; /* the application's id, reported back unchanged */
  uint32_t size;     /* N_g messages; group i owns the message ids following group i-1's */
  double msr;        /* [0, 1]; target = ceil(msr * size); 1 = exact (reliable, in order) */
} na_group_spec;

NA_API int na_job_start(na_engine* eng, uint64_t session_id, uint32_t job_id, const na_group_spec* groups,
                        size_t n_groups, int mrdf);
/* na_job_start with a streaming-epoch deadline in nanoseconds from now (0 = none, as na_job_start): the job's
 * approximate data escalates towards class 0 as its groups fall behind delivering their targets by the deadline
 * (a group that delivered nothing is in class 0 after 7/8 of it), and messages beyond a group's planned sample
 * (the first target + given-up messages of its submission order) go last, in the lowest class
 * (docs/protocol.md section 11, "deadlines"). */
NA_API int na_job_start_deadline(na_engine* eng, uint64_t session_id, uint32_t job_id, const na_group_spec* groups,
                                 size_t n_groups, int mrdf, uint64_t deadline_ns);
/* Copies len bytes as message `index` of group `group_index`. NA_ERR_WOULD_BLOCK when the send buffer is full.
 * NA_ERR_NOT_FOUND when the job is no longer known: it may have ended early because the receiver already holds
 * every group's target (an approximate job needs no more messages) - its NA_EVENT_JOB_DONE says how it ended. */
NA_API int na_job_submit(na_engine* eng, uint64_t session_id, uint32_t job_id, uint32_t group_index, uint32_t index,
                         const void* data, size_t len);
/* Like na_job_submit but waits up to timeout_ms (< 0: forever) for buffer space; NA_ERR_WOULD_BLOCK at the
 * deadline, NA_ERR_CLOSED when the engine closes meanwhile. */
NA_API int na_job_submit_wait(na_engine* eng, uint64_t session_id, uint32_t job_id, uint32_t group_index,
                              uint32_t index, const void* data, size_t len, int timeout_ms);
/* One message of na_job_submit_batch. */
typedef struct na_submit_entry {
  uint32_t group_index; /* as na_job_submit */
  uint32_t index;       /* as na_job_submit */
  const void* data;     /* len bytes, copied before the call returns (the caller may free them at once) */
  size_t len;
  int32_t status; /* out: NA_OK when accepted; the first entry not accepted gets the reason; later ones untouched */
} na_submit_entry;

/* The most entries one na_job_submit_batch takes (NA_ERR_LIMIT_EXCEEDED above it). */
#define NA_SUBMIT_BATCH_MAX 4096

/* Submits n messages of one job in order, as n calls of na_job_submit_wait would, but with one engine lock and one
 * wake-up of the I/O thread for the run (the per-call cost of many small messages; the lock is dropped every
 * 256 KiB copied so that large batches do not stall transmission). timeout_ms is one deadline for the whole batch
 * (0: never wait, < 0: forever). Returns how many entries were accepted, always a prefix (0..n); when fewer than
 * n, entries[returned].status says why (NA_ERR_WOULD_BLOCK at the deadline; NA_ERR_NOT_FOUND when the job ended,
 * e.g. early because the receiver holds every target - see na_job_submit; NA_ERR_INVALID_ARGUMENT for an entry
 * with data NULL and len > 0; otherwise what na_job_submit returns for it, e.g. NA_ERR_LIMIT_EXCEEDED above
 * max_message_bytes). Errors before anything was tried are negative:
 * NA_ERR_CLOSED_HANDLE, NA_ERR_INVALID_ARGUMENT (entries NULL with n > 0), NA_ERR_LIMIT_EXCEEDED
 * (n > NA_SUBMIT_BATCH_MAX). n == 0 returns 0. */
NA_API int na_job_submit_batch(na_engine* eng, uint64_t session_id, uint32_t job_id, na_submit_entry* entries, size_t n,
                               int timeout_ms);
/* New MSRs for groups (by index) mid-job. */
NA_API int na_job_update_msr(na_engine* eng, uint64_t session_id, uint32_t job_id, const uint32_t* group_indices,
                             const double* msrs, size_t n);
NA_API int na_job_cancel(na_engine* eng, uint64_t session_id, uint32_t job_id);

/* ---- events --------------------------------------------------------------------------------------------------- */
enum na_event_type {
  NA_EVENT_MESSAGE = 0,       /* a whole message arrived (receiver): data/len/handle valid until release */
  NA_EVENT_MESSAGE_LOST = 1,  /* the sender gave a message up (receiver) */
  NA_EVENT_JOB_STARTED = 2,   /* a peer announced a job (receiver) */
  NA_EVENT_JOB_DONE = 3,      /* report available (both sides): free it with na_report_free */
  NA_EVENT_SESSION_ERROR = 4, /* session failed (status says why); its jobs end with JOB_DONE */
  NA_EVENT_EPOCH = 5          /* end-of-epoch sample (trace_epochs) */
};

typedef struct na_report na_report;

typedef struct na_event {
  int32_t type;   /* enum na_event_type */
  int32_t status; /* NA_OK or the error (SESSION_ERROR, JOB_DONE) */
  uint64_t session;
  uint32_t job;
  uint32_t message;
  uint64_t group_id;
  const uint8_t* data; /* MESSAGE */
  size_t len;
  uint64_t handle;   /* MESSAGE: pass to na_message_release */
  na_report* report; /* JOB_DONE: owned by the caller, free with na_report_free */
  /* EPOCH */
  uint64_t epoch_at_ns;
  double epoch_tlr;
  double epoch_loss;
  double epoch_rate_bps;
  int32_t epoch_priority_class;
} na_event;

/* Moves up to max events into out; waits up to timeout_ms (< 0: forever, 0: no wait) for the first one.
 * Returns the number of events (0 on timeout) or a negative error. */
NA_API int na_poll_events(na_engine* eng, na_event* out, int max, int timeout_ms);
NA_API int na_message_release(na_engine* eng, uint64_t handle);
/* Releases n messages in one call (one lock, at most one wake-up of the I/O thread). Returns how many were released
 * (a handle that is not held - released already, or of a closed session - is skipped, not an error), or a negative
 * error: NA_ERR_INVALID_ARGUMENT (handles NULL with n > 0), NA_ERR_CLOSED_HANDLE. */
NA_API int na_message_release_batch(na_engine* eng, const uint64_t* handles, size_t n);

/* ---- reports -------------------------------------------------------------------------------------------------- */
typedef struct na_report_info {
  uint64_t session;
  uint32_t job;
  int32_t is_sender;
  int32_t status;
  uint32_t messages, delivered, lost;
  double measured_loss; /* sender: 1 - acked/sent packets; receiver: lost/N messages */
  uint64_t packets_sent, packets_retransmitted, bytes_sent, epochs;
  uint64_t started_ns, finished_ns, jct_ns; /* engine clock (CLOCK_MONOTONIC) */
  uint64_t time_in_class_ns[8];
  uint32_t n_groups;
  /* control path (docs/protocol.md section 14); sender reports (receiver: 0 except the two times) */
  uint32_t announces_sent;       /* ANNOUNCE datagrams, first copies and repeats */
  uint32_t updates_sent;         /* UPDATE datagrams */
  uint32_t dones_sent;           /* which transmission of the receiver's DONE arrived first (1 = the first) */
  uint64_t start_to_running_ns;  /* sender: start -> announce acknowledged; receiver: first packet -> table known */
  uint64_t last_data_to_done_ns; /* sender: last DATA sent -> DONE; receiver: last DATA received -> completion */
  /* why a start waited: sender */
  uint32_t announce_probes;     /* ANNOUNCE copies sent by the probe timeout (the other repeats followed a loss) */
  uint32_t acks_while_starting; /* ACKs that arrived before the announce was acknowledged */
  /* receiver */
  uint32_t announces_received;  /* ANNOUNCE datagrams that reached the engine, repeats included */
  uint32_t announces_duplicate; /* of those, after the group table was complete */
  uint32_t announces_acked;     /* acknowledged at once (not: receive buffer or event queue full) */
  uint64_t early_data_packets;  /* DATA held before the group table was complete */
} na_report_info;

typedef struct na_id_range {
  uint32_t first, last; /* inclusive */
} na_id_range;

typedef struct na_group_report {
  uint64_t group_id;
  uint32_t size, target, delivered, lost;
  int32_t target_unreachable;
  /* Receiver reports only (0 on the sender): the delivered and the other ids as sorted, disjoint ranges. Both are
     empty when the job's ranges exceed the engine's max_report_ranges (the counts above still hold). */
  uint32_t n_delivered_ranges, n_lost_ranges;
  const na_id_range* delivered_ranges; /* valid until na_report_free */
  const na_id_range* lost_ranges;
} na_group_report;

NA_API int na_report_get_info(const na_report* r, na_report_info* out);
NA_API int na_report_get_group(const na_report* r, uint32_t index, na_group_report* out);
/* Safe on NULL (no-op, returns NA_OK) and on a pointer that is not a live report (NA_ERR_CLOSED_HANDLE). */
NA_API int na_report_free(na_report* r);

/* ---- statistics ----------------------------------------------------------------------------------------------- */
typedef struct na_stats {
  /* engine */
  uint64_t datagrams_in, datagrams_out, bytes_in, bytes_out;
  uint64_t dropped_malformed, dropped_unknown_session, dropped_auth, dropped_replay_or_old, dropped_no_buffer,
      dropped_unknown_job, dropped_fault_in, dropped_fault_out, events_dropped;
  uint64_t sessions, jobs;
  /* driver */
  uint64_t recv_syscalls, send_syscalls, udp_datagrams_received, udp_datagrams_sent, gro_buffers, gso_sends,
      send_errors, send_eagain, recv_errors, recv_truncated, peer_evictions, unknown_peer_transmits, wakeups,
      loop_iterations;
  int32_t gso_enabled, gro_enabled;
  /* engine (appended: the layout only grows at the end) */
  uint64_t auth_policy_mismatches; /* verified header-only datagrams while payload_auth is required (session failed) */
  uint64_t farewells_dropped;      /* CLOSE datagrams dropped because too many sessions closed at once */
} na_stats;

NA_API int na_engine_stats(na_engine* eng, na_stats* out);

/* ---- misc ----------------------------------------------------------------------------------------------------- */
NA_API const char* na_strerror(int code); /* never NULL */
NA_API const char* na_version(void);      /* "MAJOR.MINOR.PATCH" */

#ifdef __cplusplus
}
#endif
#endif /* NETAPPROX_NETAPPROX_H */
