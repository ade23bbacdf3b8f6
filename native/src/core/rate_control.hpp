// Rate control of one sending job: epochs, the measured loss rho_i, the dynamic TLR (eq. 1), the priority class
// (section 5.2), the job's pacing clock, and the rate law the mode picked (rate_law.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <vector>

#include "core/engine.hpp"
#include "core/rate_law.hpp"
#include "core/size_class.hpp"
#include "core/slack.hpp"

namespace netapprox::atp {

struct RateControlConfig {
  rate_law::Params law;
  ModeFlags flags;
  TimeNs min_epoch;           // shortest epoch
  uint32_t max_datagram;      // bytes per packet, for epoch stretching and R_min
  double needy_fraction = 0;  // EngineConfig::needy_class0_fraction (used with flags.needy_exact)
  uint32_t repair_after = 0;  // EngineConfig::repair_after_segments: a job whose losses are repaired is needy sooner
  bool needy_repairing_only = false;  // EngineConfig::needy_repairing_jobs_only
  uint64_t small_class0_bytes = 0;    // EngineConfig::small_job_class0_bytes (used with flags.needy_exact)
  bool size_classes = false;          // EngineConfig::size_classes (used with flags.needy_exact)
  std::array<uint64_t, size_class::kBounds> size_bounds{};  // EngineConfig::size_class_bytes
};
static_assert(sizeof(EngineConfig::size_class_bytes) / sizeof(uint64_t) == size_class::kBounds);

class RateController {
 public:
  // An epoch spans at least this many packets at the job's rate (up to 4 RTTs): with only a handful of packets
  // per RTT, rho_i is mostly exactly 0 or 1 and the laws swing between full increase and deep cuts.
  static constexpr double kMinEpochPackets = 16;
  // Pacing may lag `now` by at most this much: after an idle moment a short burst lets drivers batch.
  static constexpr TimeNs kBurstAllowance = 50'000;

  RateController(const rate_law::RateLaw& law, const RateControlConfig& cfg);

  // tlr0 / approx_tlr0: eq. 1 at the start over all groups / approximate groups only. `deadline` (JobSpec::deadline,
  // 0 = none): with slack priority the class is capped by slack::deadline_class_cap from now on.
  void start(TimeNs now, double tlr0, double approx_tlr0, TimeNs deadline = 0);

  // A DATA packet of the job (`bytes` of payload) was acknowledged or declared lost.
  void on_resolved(bool acked, uint32_t bytes) {
    if (acked) {
      epoch_acked_++;
      epoch_acked_bytes_ += bytes;
    } else {
      epoch_lost_++;
    }
  }
  // A packet counted lost in this epoch was acknowledged late: it was not a loss (earlier epochs stay decided).
  void on_late_ack(uint32_t bytes) {
    if (epoch_lost_ > 0) {
      epoch_lost_--;
      epoch_acked_++;
      epoch_acked_bytes_ += bytes;
    }
  }

  TimeNs epoch_length(TimeNs srtt) const;
  TimeNs epoch_deadline(TimeNs srtt) const { return epoch_start_ + epoch_length(srtt); }
  // Ends the epoch: rho_i, TLR_{i+1} (eq. 1), the rate law, the priority class. `packets_per_message` turns
  // the message TLR into a packet loss rate. `remaining_bytes`: what the job still needs for its targets
  // (SendJob::remaining_bytes; kUnknownBytes before any message was submitted), for the size-aware class.
  static constexpr uint64_t kUnknownBytes = ~uint64_t{0};
  EpochSample end_epoch(TimeNs now, const std::vector<slack::GroupProgress>& progress, double packets_per_message,
                        TimeNs srtt, uint64_t remaining_bytes = kUnknownBytes);
  // Size-aware class at the job's first submit: class 0 at once when `remaining_bytes` (the first estimate of what
  // the job needs) is within cfg.small_class0_bytes (Full only); later estimates are checked at every epoch end.
  // With cfg.size_classes the job's remaining-size class instead (size_class.hpp); it then follows on_remaining and
  // every epoch end.
  void on_size_known(TimeNs now, uint64_t remaining_bytes);
  // Size classes: the job's remaining needed bytes changed (a later submit, an acknowledgement); the class follows at
  // once, as pFabric's per-packet priority does, not only at the next epoch end. Nothing without size classes.
  void on_remaining(TimeNs now, uint64_t remaining_bytes) {
    if (by_size()) set_class(now, std::max(1, size_class::class_of(remaining_bytes, cfg_.size_bounds.data()) - boost_));
  }
  // R_min: one packet per law.rtts_per_min_packet smoothed RTTs.
  double r_min(TimeNs srtt) const;

  // Pacing: when the job may send next, and the send of a datagram of `bytes`.
  TimeNs next_send() const { return next_send_; }
  void on_sent(TimeNs now, size_t bytes);

  // Needy jobs (flags.needy_exact): a job whose approximate allowance is spent and that still needs at most
  // cfg.needy_fraction of its target (slack::needs_exact_service) sends in class 0 from the next epoch on: it can
  // afford no loss, and a 1-7 frame approximate queue behind class 0 drops what arrives while class 0 is busy.
  // Starvation guard (strict-priority queues): an epoch in which packets were resolved and none was acknowledged
  // moves the job up one class (towards class 1), at most kMaxBoost; kBoostDecay epochs in a row without such an
  // epoch move it one back. Class changes towards lower priority need the TLR kClassMargin past the threshold, so
  // a TLR that hovers around one does not flap.
  static constexpr int kMaxBoost = 6;
  static constexpr int kBoostDecay = 8;
  static constexpr double kClassMargin = 1.0 / 64;

  double rate() const { return state_.rate; }  // bytes per second
  double tlr() const { return tlr_; }
  int priority_class() const { return klass_; }
  // The job has a deadline (JobSpec::deadline) and slack priority: its messages beyond the planned sample travel in
  // the lowest class (SendJob::beyond_plan).
  bool deadline_policy() const { return deadline_ > 0 && cfg_.flags.slack_priority; }
  int deadline_cap() const { return cap_; }
  uint64_t epochs() const { return epochs_; }
  // Time spent in each class up to `now` (the current class included).
  void time_in_class(TimeNs now, TimeNs out[kNumPriorityClasses]) const;

 private:
  // The TLR's class (with the starvation boost) and Full's class-0 rules for needy and small jobs.
  int tlr_class(const std::vector<slack::GroupProgress>& progress, double packets_per_message,
                uint64_t remaining_bytes) const;
  // Remaining-size classes in force (Full with cfg.size_classes).
  bool by_size() const { return cfg_.flags.slack_priority && cfg_.flags.needy_exact && cfg_.size_classes; }
  // Moves the job to class k, charging the time spent in the class it leaves.
  void set_class(TimeNs now, int k);
  const rate_law::RateLaw& law_;
  RateControlConfig cfg_;
  rate_law::State state_;
  TimeNs next_send_ = 0;
  TimeNs epoch_start_ = 0;
  uint64_t epoch_acked_ = 0, epoch_lost_ = 0, epoch_acked_bytes_ = 0;
  // The pacer sat idle for longer than the burst allowance during this epoch: the job had nothing to send (or was
  // waiting for its announce or the receive window), so what it delivered says nothing about the path.
  bool epoch_app_limited_ = false;
  uint64_t epochs_ = 0;
  double tlr_ = 0;
  int klass_ = 0;
  int tlr_class_ = 0;  // the class the TLR asks for (with hysteresis)
  int boost_ = 0;      // classes the job climbed for starvation
  int quiet_epochs_ = 0;
  TimeNs started_ = 0, deadline_ = 0;
  int cap_ = kNumPriorityClasses - 1;  // deadline escalation: the highest class number the job may use (only falls
                                       // while a group lags its schedule; back to 7 once none does)
  TimeNs class_since_ = 0;
  TimeNs time_in_class_[kNumPriorityClasses] = {};
};

}  // namespace netapprox::atp
