// The sender's scheduler across sessions and jobs: which session and which job gets the next datagram slot, and in
// which priority class a DATA packet travels. Pure decisions over values the engine hands in (no session state, no
// clock): the engine keeps the deadline sets and asks here who goes first.
//
// The host pacer (the line rate) is shared by every session. Its DATA slot goes
//   * round-robin over sessions (Base and RC, or EngineConfig::mrdf_across_jobs off), each session's jobs by their
//     own pacing time (JobOrder::kPacing);
//   * in the modes with MRDF, to the job with the least remaining data (SendJob::remaining_bytes) among the sessions
//     with data due, whatever its session (DataSlotChoice, JobOrder::kMrdf) - unless a job has waited
//     kMrdfStarveRtts of its srtt without sending: it is then served first, the longest-waiting first
//     (JobOrder::kLongestWaiting). docs/protocol.md section 6.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/engine.hpp"

namespace netapprox::atp {
class SendJob;
}

namespace netapprox::atp::scheduler {

// The starvation guard: a job with data to send and no DATA packet for this many of its session's srtt goes first.
// The paper's starvation floor (R_min, one packet per RTT) scaled down so that many waiting jobs cannot turn MRDF
// back into round-robin.
constexpr TimeNs kMrdfStarveRtts = 8;

// When a job starves: kMrdfStarveRtts srtt after its last DATA packet, or after its start before its first one
// (last_data_sent == kNever).
TimeNs starve_at(TimeNs started, TimeNs last_data_sent, TimeNs srtt);

// What the scheduler compares of one sending job.
struct JobRank {
  uint64_t remaining_bytes = UINT64_MAX;  // SendJob::remaining_bytes
  TimeNs next_send = kNever;              // the job's own pacing time (RateController::next_send)
  TimeNs starve_at = kNever;              // starve_at() above
};
JobRank rank_of(const SendJob& j, TimeNs srtt);

// How a session orders its own jobs with data due.
enum class JobOrder {
  kPacing,         // the earliest own pacing time (round-robin modes)
  kMrdf,           // fewer remaining bytes first, then the earlier pacing time
  kLongestWaiting  // the session starves (mrdf_across and its mrdf_starve_at has come): the earliest starve_at
};
JobOrder job_order(bool mrdf_across, bool session_starving);
// Whether `a` goes strictly before `b` (ties keep the job found first).
bool goes_before(JobOrder order, const JobRank& a, const JobRank& b);

// A session's standing in MRDF across sessions, cached with its deadlines (Session::mrdf_key / mrdf_starve_at): the
// least remaining bytes and the earliest starve_at of its jobs that may send data.
struct SessionRank {
  uint64_t key = UINT64_MAX;
  TimeNs starve_at = kNever;
  void add(const JobRank& j);
};

// The DATA slot of the host pacer in the modes with MRDF: offered the sessions with data due, it picks a starving
// one first (the earliest starve_at), else the least key; ties go to the lowest session id.
class DataSlotChoice {
 public:
  explicit DataSlotChoice(TimeNs now) : now_(now) {}
  void offer(SessionId id, const SessionRank& rank);
  bool chosen() const { return candidates_ > 0; }
  SessionId session() const { return best_id_; }
  bool starving() const { return best_starving_; }   // the chosen session was picked by the starvation guard
  size_t candidates() const { return candidates_; }  // sessions offered (more than one: the order mattered)

 private:
  TimeNs now_;
  size_t candidates_ = 0;
  SessionId best_id_ = 0;
  SessionRank best_{};
  bool best_starving_ = false;
};

// Round-robin over the sessions with something due: the index in `due` of the smallest id above `cursor` (the
// session served last), else of the smallest id. `due` must not be empty; it may list an id twice.
size_t round_robin_pick(const std::vector<SessionId>& due, SessionId cursor);

// The priority class a DATA packet is marked with: exact groups in class 0, approximate ones in the job's class
// (`priority_class`, RateController::priority_class); no_priority_dscp when the mode has no slack priority. A
// job with a deadline (JobSpec::deadline) sends the messages beyond its planned sample (`extra`) in the lowest
// class: extra data goes only where the path is free (docs/protocol.md section 11, "deadlines").
uint8_t data_dscp(const EngineConfig& cfg, bool slack_priority, int priority_class, bool exact, bool extra = false);
// Everything but DATA - ACKs, control frames, probes, CLOSE - always in class 0 (the exact queue, with most of the
// buffer): a job's start and end must not wait behind its own congested data class.
inline uint8_t control_dscp(const EngineConfig& cfg) { return cfg.dscp_by_class[0]; }

}  // namespace netapprox::atp::scheduler
