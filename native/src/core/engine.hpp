// ATP protocol core: a sans-I/O engine.
//
// The core does no syscalls, reads no clock and starts no thread. A driver (the Linux UDP driver, the test
// simulator, a fuzzer) feeds it three things and nothing else:
//   * on_datagram(bytes, peer, now)      - a datagram arrived;
//   * poll_transmit(now, out)            - what should be transmitted now (one datagram per call);
//   * next_timeout() / on_timeout(now)   - when the engine wants to be woken up next.
// Applications talk to it through the job API (start_job / submit / update_targets / release) and read
// events with poll_event(). All memory is bounded by EngineConfig limits; every limit hit is counted.
//
// Terms (see docs/protocol.md): a *session* connects this endpoint to one peer and is keyed by a random 64-bit id
// and a 32-byte secret handed out by the control plane. A *job* is N messages sent over one session by one side;
// its messages are split into *groups* that own contiguous message-id ranges, each with a *target*
// ceil(MSR_g * N_g) of messages that must be delivered. Groups whose target equals their size (MSR = 1) are
// *exact*: reliable and delivered in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace netapprox::atp {

using TimeNs = uint64_t;  // a monotonic time chosen by the driver; only differences matter
constexpr TimeNs kNever = UINT64_MAX;

using SessionId = uint64_t;
using JobId = uint32_t;
using MessageId = uint32_t;  // dense within a job: 0..N-1
using PeerId = uint64_t;     // opaque to the core: the driver maps it to an address

constexpr size_t kKeyBytes = 32;
constexpr int kNumPriorityClasses = 8;

// Result codes shared with the C API (values are stable, see include/netapprox/netapprox.h).
enum class Status : int {
  kOk = 0,
  kInvalidArgument = -1,
  kNotFound = -2,
  kAlreadyExists = -3,
  kWouldBlock = -4,     // a buffer is full: retry after events were consumed / data was acknowledged
  kLimitExceeded = -5,  // a configured bound (sessions, jobs, groups, message size) would be exceeded
  kClosed = -6,
  kPeerDead = -7,
  kIdleTimeout = -8,
  kProtocolError = -9,
  kInternal = -10,
};
const char* status_name(Status s);

// Paper ablations (NetApprox section 7.1.3) as combinations of four switches.
enum class Mode : int {
  kBase = 0,     // send at line rate, FIFO order, retransmit until the targets are met, no slack priority
  kRc = 1,       // + rate control against a static TLR = 1 - MSR
  kRcMrdf = 2,   // + minimal-remaining-data-first scheduling
  kFixTlr = 3,   // + slack priority, but from the static TLR (so the class never changes)
  kFixPrio = 4,  // dynamic TLR for rate control, static priority class from the MSR
  kFull = 5,     // dynamic TLR, rate control, MRDF, dynamic slack priority (the product)
  kPaper = 6,    // Full with the paper's rate law (eqs. 2-3 exactly, R_max start, R_min = 1 packet per RTT)
};
const char* mode_name(Mode m);
std::optional<Mode> parse_mode(const std::string& name);

struct ModeFlags {
  bool rate_control;
  bool dynamic_tlr;
  bool mrdf;
  bool slack_priority;    // mark approximate packets with a TLR-derived class (else class kNoPriorityClass)
  bool dynamic_priority;  // class follows the per-epoch TLR (else computed once from 1 - MSR)
  // An approximate job whose allowance is spent sends in class 0 once it is near its target
  // (EngineConfig::needy_class0_fraction; docs/protocol.md section 11, "needy jobs"). Full only: not the paper's.
  bool needy_exact;
};
ModeFlags mode_flags(Mode m);
bool mode_valid(Mode m);  // one of the modes above

struct FaultInjection {
  double drop_outgoing = 0.0;  // fraction of datagrams poll_transmit swallows (counted as sent)
  double drop_incoming = 0.0;  // fraction of datagrams on_datagram ignores
  uint64_t seed = 1;
};

struct EngineConfig {
  uint64_t line_rate_bps = 10'000'000'000ULL;  // R_max
  uint32_t max_datagram = 1472;                // UDP payload bytes for a 1500-byte MTU (IPv4)
  // Bytes the line carries per datagram beyond its UDP payload (UDP 8 + IPv4 20 + Ethernet 14). The host pacer
  // spends them at line_rate_bps: without them a host sending 200-byte messages at its line rate overruns its own
  // uplink by 14 % and queues its next job's ANNOUNCE behind its data (docs/protocol.md section 10).
  uint32_t wire_overhead_bytes = 42;
  double reaction_speed = 0.125;  // m in eq. 2
  double tlr_floor = 0.01;        // rate control treats TLR below this as this (exact traffic)
  // RTT before the first sample (1 ms). Safe on any path length: until a sample exists a probe timeout only sends
  // a probe and backs off, and a late acknowledgement still gives the sample (docs/protocol.md sections 3, 15).
  TimeNs initial_rtt = 1'000'000;
  TimeNs min_epoch = 100'000;                    // epochs are max(srtt, min_epoch)
  TimeNs ack_delay = 200'000;                    // max delay before acknowledging
  uint32_t ack_every = 8;                        // ack at least every n ack-eliciting packets
  TimeNs idle_timeout = 30'000'000'000ULL;       // no traffic at all on a session with no job
  TimeNs peer_death_timeout = 5'000'000'000ULL;  // nothing heard while a job is active
  uint64_t recv_buffer_bytes = 64ULL << 20;      // per session: reassembly + undelivered messages
  uint64_t send_buffer_bytes = 64ULL << 20;  // per session: unacknowledged submitted message bytes + 256 per message
  uint32_t max_message_bytes = 64U << 20;
  uint32_t max_sessions = 1024;
  uint32_t max_jobs_per_session = 256;
  uint32_t max_messages_per_job = 1U << 26;
  uint32_t max_groups_per_job = 1U << 20;
  uint32_t max_report_ranges = 1U << 16;  // id ranges a receiver report lists (8 bytes each), all groups together
  static constexpr uint32_t kMaxReportRangesLimit = 1U << 24;  // validate(): a report stays below 128 MiB
  uint32_t max_pending_events = 65536;                         // the event queue never grows beyond this
  uint8_t dscp_by_class[kNumPriorityClasses] = {46, 40, 32, 24, 18, 16, 10, 8};  // class 0 = exact
  uint8_t no_priority_dscp = 0;                                                  // DSCP when slack priority is off
  // Modes with needy_exact (Full): an approximate job whose loss allowance is spent sends its data in class 0 once
  // the messages it still needs are at most this fraction of its target (0 = never; 1 = as soon as the allowance is
  // spent). Bounds the class-0 share of approximate traffic; docs/protocol.md section 11, "needy jobs". A job with
  // a deadline (JobSpec::deadline) is needy as soon as its allowance is spent (its share is its planned sample).
  double needy_class0_fraction = 0.75;
  // Only jobs that repair their losses (mean segments per message >= repair_after_segments, e.g. FBHD) become needy;
  // a job of single-segment or bundled messages (FBKV) pays one small resend per loss and stays in its TLR's class,
  // where it does not starve class-1 jobs behind strict priority (docs/protocol.md section 11, engine8j).
  bool needy_repairing_jobs_only = false;
  // Modes with needy_exact (Full): size-aware class (pFabric / Homa style; docs/protocol.md section 11, "small
  // jobs"). An approximate job whose remaining needed bytes (SendJob::remaining_bytes: messages still needed for the
  // targets x the mean size of the messages submitted so far) are at most this many bytes sends its DATA in class 0,
  // checked at every epoch end; its class-0 share is bounded by construction: at most this many needed bytes (plus
  // the resends of their losses). 0 = off.
  uint64_t small_job_class0_bytes = 256 * 1024;
  // Full only (ModeFlags::needy_exact): approximate DATA travels in remaining-size classes instead of the paper's TLR
  // classes - class k in 1..7 is the first whose bound in size_class_bytes (classes 1..6, increasing) holds for the
  // job's remaining needed bytes (SendJob::remaining_bytes), class 7 above the last (core/size_class.hpp). pFabric's
  // insight over the 8 queues: the job closest to its targets is served first everywhere on its path. The needy and
  // small-job rules (class 0) are off with it: class 0 stays exact traffic. Off by default (docs/protocol.md
  // section 11, "size classes").
  bool size_classes = false;
  uint64_t size_class_bytes[6] = {16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20};
  // Authenticate data payloads too (default). Off: data packets' tags cover header + data header only, so
  // sessions stay authenticated (no forged or injected packets) but an on-path attacker could alter payload
  // bytes - the same guarantee as Spark's spark.authenticate without spark.network.crypto.enabled. A receiver
  // with payload_auth on drops packets whose tag does not cover the payload.
  bool payload_auth = true;
  bool prefer_aes_gcm = true;  // AES-256-GCM tags where AES-NI is available (else ChaCha20-Poly1305)
  // Coalesce small whole messages of one job into DATA bundles (docs/protocol.md section 1) when the peer accepts
  // them, and tell peers that this endpoint accepts them. Off: plain DATA only (what a pre-bundle peer speaks).
  bool coalesce_messages = true;
  // Modes with MRDF (RC+MRDF, Full, paper): the host's line rate goes to the sending job with the least remaining
  // data first across all its sessions and jobs, not round-robin over sessions (docs/protocol.md section 6). Off:
  // round-robin over sessions, each session's jobs by their own pacing time (what Base and RC always do).
  bool mrdf_across_jobs = true;
  // A lost segment of an approximate message whose group could still afford to lose it is repaired (resent) instead
  // of giving the message up when at least this many of the message's segments were already sent, the lost one
  // included (0 = never: the paper's rule, every such message given up). 2 repairs every multi-segment message
  // with more than its lost segment out and gives single-segment messages up as before (docs/protocol.md section 5).
  uint32_t repair_after_segments = 2;
  Mode mode = Mode::kFull;
  FaultInjection faults;

  // Returns an empty string when the config is valid, else a message naming the bad field.
  std::string validate() const;
};

struct GroupSpec {
  uint64_t group_id;  // the application's id; reported back unchanged
  uint32_t size;      // N_g messages
  double msr;         // minimal sampling rate in [0, 1]; target = ceil(msr * size)
};

struct JobSpec {
  JobId job_id;  // unique per session and side; ids of the last 1024 finished jobs are refused (kAlreadyExists)
  std::vector<GroupSpec> groups;  // message ids are assigned in order: group 0 owns [0, N_0), group 1 next, ...
  bool mrdf = true;               // apps that need order may turn MRDF off (exact groups are always in order)
  // Streaming-epoch deadline, from start_job (0 = none; docs/protocol.md section 11, "deadlines"). With slack
  // priority the job's approximate DATA escalates as its groups fall behind a schedule that delivers each target
  // evenly over the deadline (slack::deadline_class_cap): a group that delivered nothing is in class 0 after 7/8 of
  // it, however busy class 0 is. Messages beyond a group's planned sample (SendJob::beyond_plan) go after every
  // planned one and in the lowest class. Sender side only: not announced.
  TimeNs deadline = 0;
};

// Outgoing datagram produced by poll_transmit.
struct Transmit {
  PeerId peer;
  uint8_t dscp;
  size_t len;  // bytes written into the caller's buffer
};

// An inclusive range of message ids.
struct IdRange {
  MessageId first, last;
  bool operator==(const IdRange& o) const { return first == o.first && last == o.last; }
};

inline uint64_t id_count(const std::vector<IdRange>& ranges) {
  uint64_t n = 0;
  for (const IdRange& r : ranges) n += uint64_t{r.last} - r.first + 1;
  return n;
}

struct GroupReport {
  uint64_t group_id;
  uint32_t size;
  uint32_t target;
  uint32_t delivered;
  uint32_t lost;            // given up by the sender, or never sent because the group already met its target
  bool target_unreachable;  // an MSR raised mid-job above what the remaining messages can give
  // Receiver reports only: the delivered and the not delivered ids as sorted, disjoint, separated ranges. Empty
  // when the job's ranges exceed EngineConfig::max_report_ranges (JobReport::ids_listed is then false).
  std::vector<IdRange> delivered_ranges;
  std::vector<IdRange> lost_ranges;
};

struct JobReport {
  SessionId session;
  JobId job;
  bool is_sender;
  Status status;  // kOk or the error that ended the job
  uint32_t messages;
  uint32_t delivered;
  uint32_t lost;
  double measured_loss;  // packets: 1 - acked/sent over the whole job (sender); lost/N messages (receiver)
  uint64_t packets_sent;
  uint64_t packets_retransmitted;
  uint64_t bytes_sent;
  uint64_t epochs;
  TimeNs started;
  TimeNs finished;
  TimeNs time_in_class[kNumPriorityClasses];  // sender: time spent marked with each priority class
  // Control path (docs/protocol.md section 14). Sender: ANNOUNCE and UPDATE datagrams sent (first copies and
  // repeats); which transmission of the receiver's DONE arrived first (1 = the first; 0 = no DONE, e.g. an error).
  // Receiver: 0 (its DONE goes out after its report).
  uint32_t announces_sent = 0, updates_sent = 0, dones_sent = 0;
  // Sender: start_job -> announce acknowledged (data flows at its rate); receiver: the job's first packet -> its
  // group table complete.
  TimeNs start_to_running = 0;
  // Sender: start_job -> its first ANNOUNCE datagram handed out by poll_transmit (how long the announce waited on
  // this host before the network: the caller's polling, the host pacer's control slots); a job whose ANNOUNCE
  // never went out waited all its life. Receiver: 0.
  TimeNs start_to_announce_sent = 0;
  // Sender: the last DATA datagram sent -> the DONE received; receiver: the last DATA received -> completion.
  TimeNs last_data_to_done = 0;
  // Why a start waited (docs/protocol.md section 14). Sender: ANNOUNCE copies sent by the probe timeout (the rest
  // of announces_sent beyond the first copy followed a declared loss). Receiver: ANNOUNCE datagrams that reached
  // the engine (first copies and repeats), those that came after the group table was complete (duplicates), those
  // acknowledged at once (an ANNOUNCE the receiver cannot take yet - buffer or event queue full - is not), and
  // DATA packets held as early data before the table was complete.
  uint32_t announce_probes = 0;
  uint32_t acks_while_starting = 0;  // sender: ACKs that arrived between start_job and the announce's acknowledgement
  uint32_t announces_received = 0, announces_duplicate = 0, announces_acked = 0;
  uint64_t early_data_packets = 0;
  // Sender: what losses cost (docs/protocol.md section 5). Messages given up for a loss within the allowance and
  // the segments of them that had been sent (wasted port capacity); segments sent of messages given up unfinished
  // once their group met its target; lost segments of approximate messages repaired while their group still had
  // allowance (EngineConfig::repair_after_segments). Receiver: 0.
  uint64_t given_up_for_loss = 0, segments_given_up_for_loss = 0, segments_given_up_satisfied = 0;
  uint64_t repairs_within_allowance = 0;
  std::vector<GroupReport> groups;
  bool ids_listed = false;  // receiver: the groups' id ranges are listed (within max_report_ranges)
};

// A state sample taken at the end of each epoch (sender side), for plots like the paper's Fig. 10.
struct EpochSample {
  SessionId session;
  JobId job;
  TimeNs at;
  double tlr;
  double loss;  // rho_i
  double rate_bps;
  int priority_class;
  // Diagnostics (traces; not in the C API): what the epoch resolved and delivered, and why the job was limited.
  uint64_t acked = 0, lost = 0;
  double delivered_bps = 0;  // acknowledged datagram bits per second over the epoch
  TimeNs srtt = 0;
  bool app_limited = false;  // the pacer sat idle (nothing to send, window or announce wait)
};

enum class EventType {
  kMessage,       // a whole message arrived (receiver); data stays valid until release()
  kMessageLost,   // the sender gave a message up (receiver)
  kJobStarted,    // a peer announced a job (receiver)
  kJobDone,       // report available (both sides)
  kSessionError,  // session failed (peer dead, idle timeout, protocol error); its jobs end with kJobDone
  kEpoch,         // end-of-epoch sample (only after set_trace_epochs(true))
};

struct Event {
  EventType type = EventType::kMessage;
  SessionId session = 0;
  JobId job = 0;
  MessageId message = 0;
  uint64_t group_id = 0;
  const uint8_t* data = nullptr;  // kMessage
  size_t len = 0;
  uint64_t handle = 0;  // kMessage: pass to release()
  Status status = Status::kOk;
  std::shared_ptr<const JobReport> report;  // kJobDone
  EpochSample epoch{};                      // kEpoch
};

struct EngineStats {
  uint64_t datagrams_in = 0, datagrams_out = 0, bytes_in = 0, bytes_out = 0;
  uint64_t dropped_malformed = 0;  // failed header validation
  uint64_t dropped_unknown_session = 0;
  uint64_t dropped_auth = 0;           // tag did not verify
  uint64_t dropped_replay_or_old = 0;  // duplicate packet number
  uint64_t dropped_no_buffer = 0;      // receive buffer full
  uint64_t dropped_unknown_job = 0;
  uint64_t dropped_fault_in = 0, dropped_fault_out = 0;
  uint64_t events_dropped = 0;  // informational events lost because the queue was full
  uint64_t auth_policy_mismatches =
      0;                            // verified header-only datagrams while payload_auth is required (session failed)
  uint64_t farewells_dropped = 0;   // CLOSE datagrams dropped because too many sessions closed at once
  uint64_t announces_deferred = 0;  // ANNOUNCEs not acknowledged for now (receive buffer or event queue full)
  uint64_t sessions = 0, jobs = 0;
  uint64_t send_buffered = 0;  // bytes of submitted, unacknowledged messages + 256 per message (all sessions)
  uint64_t recv_buffered = 0;  // bytes held for reassembly, ordering or by the application (all sessions)
  // Diagnostics of MRDF across sessions (not in the C API): DATA slots it assigned, those where two or more
  // sessions had data due (where the order mattered), and those given to a job by the starvation guard.
  uint64_t mrdf_slots = 0, mrdf_contended = 0, mrdf_starved = 0;
};

class Engine {
 public:
  explicit Engine(const EngineConfig& cfg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const EngineConfig& config() const;

  // Sessions. `peer` tells the driver where to send; `initiator` must differ on the two sides (it splits the
  // nonce space); the control plane sets it on the side that created the session.
  Status open_session(SessionId id, const uint8_t key[kKeyBytes], PeerId peer, bool initiator, TimeNs now);
  // Ends the session's jobs with kClosed, queues a sealed CLOSE for the peer (best effort: a lost CLOSE leaves
  // the peer to its peer-death timeout) and forgets the session. Reopening an id needs a NEW key: packet
  // numbers restart at 0 and a reused key would reuse nonces.
  Status close_session(SessionId id, TimeNs now);
  Status set_peer(SessionId id, PeerId peer);

  // Sender side.
  Status start_job(SessionId s, const JobSpec& spec, TimeNs now);
  // Copies `len` bytes of message `index` of group `group_index` (message id = group base + index).
  // kWouldBlock when the session send buffer is full.
  Status submit(SessionId s, JobId j, uint32_t group_index, uint32_t index, const uint8_t* data, size_t len,
                TimeNs now);
  // Changes MSRs mid-job. targets are recomputed; they never go below what is already delivered.
  Status update_msr(SessionId s, JobId j, const std::vector<std::pair<uint32_t, double>>& group_msrs, TimeNs now);
  Status cancel_job(SessionId s, JobId j, TimeNs now);

  // Receiver side: hand a kMessage back once the application is done with it; frees receive buffer.
  Status release(uint64_t handle);

  // Driving.
  void on_datagram(const uint8_t* data, size_t len, PeerId from, TimeNs now);
  // Writes at most one datagram into buf (cap >= config().max_datagram); false when nothing is due now.
  bool poll_transmit(TimeNs now, uint8_t* buf, size_t cap, Transmit* out);
  TimeNs next_timeout() const;  // earliest time poll_transmit/on_timeout has work; kNever if none
  // The same value computed by scanning every session (what next_timeout did before its per-session cache; tests
  // compare the two).
  TimeNs next_timeout_reference() const;
  void on_timeout(TimeNs now);
  bool poll_event(Event* ev);  // false when no event is pending

  void set_trace_epochs(bool on);
  EngineStats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace netapprox::atp
