// One session's state: the peer, keys, packet numbers in both directions, control frames, and its jobs.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "core/crypto.hpp"
#include "core/engine.hpp"
#include "core/received_window.hpp"
#include "core/recovery.hpp"
#include "core/recv_job.hpp"
#include "core/send_job.hpp"
#include "core/wire.hpp"

namespace netapprox::atp {

// A reliable control frame (ANNOUNCE, UPDATE, ABANDON, DONE, CANCEL): sent again until acknowledged.
struct ControlFrame {
  uint64_t id;
  wire::PacketType type;
  JobId job;  // for announce accounting
  std::vector<uint8_t> body;
  bool in_flight = false;
  uint32_t losses = 0;
  uint32_t sends = 0;     // transmissions so far (a DONE carries its number)
  bool probe = false;     // the next transmission is a probe timeout's
  TimeNs not_before = 0;  // repeated losses back off exponentially
};

struct Session {
  Session(TimeNs initial_rtt, TimeNs ack_delay) : recovery(initial_rtt, ack_delay) {}

  SessionId id = 0;
  uint64_t generation = 0;
  crypto::SessionKey key;
  PeerId peer = 0;
  bool initiator = false;
  bool peer_aes_capable = false;  // learned from the peer's authenticated packets (wire::kFlagAesCapable)
  bool peer_bundles = false;      // the peer wants DATA bundles (wire::kFlagBundles): assumed, then learned
  TimeNs created = 0, last_rx = 0, last_tx = 0;
  TimeNs active_since = 0;  // when the session last went from no jobs to some: peer death counts from here
  // receive side
  ReceivedWindow received;
  uint32_t unacked_eliciting = 0;
  TimeNs ack_deadline = kNever;
  bool ack_now = false;
  uint64_t last_advertised_window = 0;
  RecvBudget recv;
  // send side
  Recovery recovery;
  uint64_t peer_window = 0;
  std::deque<ControlFrame> control;
  uint64_t next_ctrl_id = 1;
  bool ping_now = false;
  TimeNs last_ping = 0;
  uint64_t send_buffered = 0;  // submitted, unacknowledged message bytes of all sending jobs, each message charged
                               // SendJob::kMessageOverheadBytes more
  std::map<JobId, std::unique_ptr<SendJob>> send_jobs;
  std::map<JobId, std::unique_ptr<RecvJob>> recv_jobs;
  std::deque<JobId> finished_send;  // recently finished own jobs: their ids are not reused
  std::deque<JobId> finished_recv;  // recently finished jobs: stray packets are acknowledged, not counted
  bool has_active_jobs() const { return !send_jobs.empty() || !recv_jobs.empty(); }
  // The engine's cache of this session's deadlines (Engine::next_timeout): `timeout_a` is every deadline but the
  // data pacing one, `timeout_b` the earliest own pacing time of its sendable jobs (before the host pacer). Valid
  // while !timeout_dirty; every engine path that reaches the session marks it dirty.
  TimeNs timeout_a = kNever, timeout_b = kNever;
  bool timeout_dirty = false;
  bool timeout_cached = false;  // (timeout_a, id) and (timeout_b, id) are in the engine's ordered sets
  // Cached with them, for MRDF across sessions (modes with MRDF): the least SendJob::remaining_bytes of the jobs
  // that may send data, and when the longest-waiting of them has gone scheduler::kMrdfStarveRtts srtt without a DATA
  // packet.
  uint64_t mrdf_key = UINT64_MAX;
  TimeNs mrdf_starve_at = kNever;
};

}  // namespace netapprox::atp
