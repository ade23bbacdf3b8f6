#include "core/scheduler.hpp"

#include <algorithm>
#include <utility>

#include "core/send_job.hpp"

namespace netapprox::atp::scheduler {

TimeNs starve_at(TimeNs started, TimeNs last_data_sent, TimeNs srtt) {
  const TimeNs last = last_data_sent == kNever ? started : last_data_sent;
  return last + kMrdfStarveRtts * srtt;
}

JobRank rank_of(const SendJob& j, TimeNs srtt) {
  return JobRank{j.remaining_bytes(), j.rate.next_send(), starve_at(j.started, j.last_data_sent, srtt)};
}

JobOrder job_order(bool mrdf_across, bool session_starving) {
  if (!mrdf_across) return JobOrder::kPacing;
  return session_starving ? JobOrder::kLongestWaiting : JobOrder::kMrdf;
}

bool goes_before(JobOrder order, const JobRank& a, const JobRank& b) {
  switch (order) {
    case JobOrder::kPacing: return a.next_send < b.next_send;
    case JobOrder::kLongestWaiting: return a.starve_at < b.starve_at;
    case JobOrder::kMrdf:
      if (a.remaining_bytes != b.remaining_bytes) return a.remaining_bytes < b.remaining_bytes;
      return a.next_send < b.next_send;
  }
  return false;
}

void SessionRank::add(const JobRank& j) {
  key = std::min(key, j.remaining_bytes);
  starve_at = std::min(starve_at, j.starve_at);
}

void DataSlotChoice::offer(SessionId id, const SessionRank& rank) {
  const bool starving = rank.starve_at <= now_;
  if (candidates_++ == 0) {
    best_id_ = id;
    best_ = rank;
    best_starving_ = starving;
    return;
  }
  if (starving != best_starving_) {
    if (starving) {
      best_id_ = id;
      best_ = rank;
      best_starving_ = true;
    }
    return;
  }
  const bool better = starving ? std::make_pair(rank.starve_at, id) < std::make_pair(best_.starve_at, best_id_)
                               : std::make_pair(rank.key, id) < std::make_pair(best_.key, best_id_);
  if (better) {
    best_id_ = id;
    best_ = rank;
  }
}

size_t round_robin_pick(const std::vector<SessionId>& due, SessionId cursor) {
  size_t pick = 0;
  bool above = due[0] > cursor;
  for (size_t k = 1; k < due.size(); ++k) {
    const bool a = due[k] > cursor;
    if ((a && !above) || (a == above && due[k] < due[pick])) {
      pick = k;
      above = a;
    }
  }
  return pick;
}

uint8_t data_dscp(const EngineConfig& cfg, bool slack_priority, int priority_class, bool exact, bool extra) {
  if (!slack_priority) return cfg.no_priority_dscp;
  if (extra && !exact) return cfg.dscp_by_class[kNumPriorityClasses - 1];
  return cfg.dscp_by_class[exact ? 0 : priority_class];
}

}  // namespace netapprox::atp::scheduler
