#include "core/rate_control.hpp"

#include <algorithm>

namespace netapprox::atp {

RateController::RateController(const rate_law::RateLaw& law, const RateControlConfig& cfg) : law_(law), cfg_(cfg) {}

void RateController::start(TimeNs now, double tlr0, double approx_tlr0, TimeNs deadline) {
  tlr_ = tlr0;
  started_ = now;
  deadline_ = deadline;
  klass_ = tlr_class_ = cfg_.flags.slack_priority ? slack::priority_class(approx_tlr0, false) : 0;
  if (by_size()) klass_ = size_class::class_of(kUnknownBytes, cfg_.size_bounds.data());
  law_.start(state_, cfg_.law);
  class_since_ = epoch_start_ = next_send_ = now;
}

TimeNs RateController::epoch_length(TimeNs srtt) const {
  const TimeNs rtt = std::max(srtt, cfg_.min_epoch);
  if (!law_.adaptive || state_.rate <= 0) return rtt;
  const double span = kMinEpochPackets * double(cfg_.max_datagram) * 1e9 / state_.rate;
  return std::clamp<TimeNs>(static_cast<TimeNs>(span), rtt, 4 * rtt);
}

double RateController::r_min(TimeNs srtt) const {
  return double(cfg_.max_datagram) * 1e9 / (double(std::max<TimeNs>(srtt, 1)) * law_.rtts_per_min_packet);
}

EpochSample RateController::end_epoch(TimeNs now, const std::vector<slack::GroupProgress>& progress,
                                      double packets_per_message, TimeNs srtt, uint64_t remaining_bytes) {
  const double floor = r_min(srtt);
  const uint64_t resolved = epoch_acked_ + epoch_lost_;
  // rho_i = 1 - acked/sent over the packets whose fate became known in this epoch (see docs/protocol.md).
  const double rho = resolved ? double(epoch_lost_) / double(resolved) : 0.0;
  if (cfg_.flags.dynamic_tlr) tlr_ = slack::target_loss_rate(progress);
  if (law_.adaptive) {
    if (resolved > 0) {
      rate_law::Epoch e;
      e.acked = epoch_acked_;
      e.lost = epoch_lost_;
      e.acked_bytes = epoch_acked_bytes_;
      e.duration = now - epoch_start_;
      e.rho = rho;
      e.tlr_pkt = slack::packet_tlr(tlr_, packets_per_message);
      e.r_min = floor;
      e.srtt = srtt;
      e.app_limited = epoch_app_limited_ || next_send_ + kBurstAllowance < now;
      law_.on_epoch(state_, cfg_.law, e);
    }
    state_.rate = std::max(state_.rate, std::min(floor, cfg_.law.r_max));  // R_min also after empty epochs
  }
  int k = klass_;
  if (cfg_.flags.slack_priority) {
    // The TLR's class: static TLR (FixTLR) or static priority (FixPrio) keep the one chosen at the start.
    if (cfg_.flags.dynamic_priority && cfg_.flags.dynamic_tlr) {
      const double approx_tlr = slack::target_loss_rate(progress, true);
      const int want = slack::priority_class(approx_tlr, false);
      if (want < tlr_class_ || approx_tlr > double(tlr_class_) / 8 + kClassMargin) tlr_class_ = want;
    }
    // A job whose packets all went lost in this epoch is starved by busier classes above it: climb one class.
    if (resolved > 0 && epoch_acked_ == 0) {
      boost_ = std::min(boost_ + 1, kMaxBoost);
      quiet_epochs_ = 0;
    } else if (boost_ > 0 && ++quiet_epochs_ >= kBoostDecay) {
      boost_--;
      quiet_epochs_ = 0;
    }
    if (by_size()) {
      // Remaining-size class: nearer its targets, higher; the starvation guard still lifts a starved job.
      k = std::max(1, size_class::class_of(remaining_bytes, cfg_.size_bounds.data()) - boost_);
    } else {
      k = tlr_class(progress, packets_per_message, remaining_bytes);
    }
    // Deadline escalation: a group behind its schedule lifts the job, up to class 0 (set_class applies the cap). The
    // cap only rises in priority until every group is back on schedule: a group escalated late (class 0 after 7/8 of
    // the deadline) finishes there instead of dropping back behind class 0 after each delivery.
    if (deadline_ > 0) {
      const double lag = slack::deadline_lag(progress, now - started_, deadline_);
      cap_ = lag <= 0 ? kNumPriorityClasses - 1 : std::min(cap_, slack::deadline_class_cap(lag));
    }
  }
  set_class(now, k);
  EpochSample out{0, 0, now, tlr_, rho, state_.rate * 8.0, klass_};
  out.acked = epoch_acked_;
  out.lost = epoch_lost_;
  out.delivered_bps = now > epoch_start_ ? double(epoch_acked_bytes_) * 8e9 / double(now - epoch_start_) : 0.0;
  out.srtt = srtt;
  out.app_limited = epoch_app_limited_ || next_send_ + kBurstAllowance < now;
  epochs_++;
  epoch_start_ = now;
  epoch_acked_ = epoch_lost_ = epoch_acked_bytes_ = 0;
  epoch_app_limited_ = false;
  return out;
}

// The paper's class from the TLR (with the starvation boost), and Full's class-0 rules for needy and small jobs.
int RateController::tlr_class(const std::vector<slack::GroupProgress>& progress, double packets_per_message,
                              uint64_t remaining_bytes) const {
  int k = std::max(1, tlr_class_ - boost_);
  // A job of multi-segment messages repairs its losses whatever its allowance (SendJob::on_segment_lost), so the
  // allowance buys it nothing in a lossy approximate queue: it is needy on the fraction alone (docs/protocol.md
  // section 11). Without this it would repair there for its whole life behind class-0 bursts.
  const bool repairs = slack::repairs_losses(packets_per_message, cfg_.repair_after);
  // needy_repairing_only: a job of single-segment / bundled messages loses one small resend per loss; in class 0
  // it would hold strict priority over every class-1 job for the rest of its life, so it stays in its class.
  const bool may_be_needy = cfg_.flags.needy_exact && (repairs || !cfg_.needy_repairing_only);
  // A deadline job whose allowance is spent is exact for the rest of its planned sample, as submit=target's groups
  // are from the start (class 0 for at most that sample plus resends): it is needy at once, not once 3/4 of its
  // target arrived through a class strict priority starves behind a class-0 flow (docs/protocol.md section 11,
  // "deadlines"; FabricTest.DeadlinePolicyWindowIsNoSlowerThanTheTargetAlone).
  const double near = deadline_policy() ? 1.0 : cfg_.needy_fraction;
  if (may_be_needy && slack::needs_exact_service(progress, near, repairs)) k = 0;
  // Size-aware class (pFabric / Homa): a job that needs at most small_class0_bytes more bytes for its targets
  // finishes in class 0; it adds at most that many needed bytes there, whatever its allowance.
  if (cfg_.flags.needy_exact && slack::small_enough_for_class0(remaining_bytes, cfg_.small_class0_bytes)) k = 0;
  return k;
}

void RateController::on_size_known(TimeNs now, uint64_t remaining_bytes) {
  if (by_size()) {
    set_class(now, std::max(1, size_class::class_of(remaining_bytes, cfg_.size_bounds.data()) - boost_));
    return;
  }
  if (!cfg_.flags.slack_priority || !cfg_.flags.needy_exact || klass_ == 0) return;
  if (slack::small_enough_for_class0(remaining_bytes, cfg_.small_class0_bytes)) set_class(now, 0);
}

void RateController::set_class(TimeNs now, int k) {
  k = std::min(k, cap_);
  if (k == klass_) return;
  time_in_class_[klass_] += now - class_since_;
  class_since_ = now;
  klass_ = k;
}

void RateController::on_sent(TimeNs now, size_t bytes) {
  // A pacer later than its allowance sat idle (nothing to send, a window): the lag is dropped, not caught up.
  const TimeNs floor = now > kBurstAllowance ? now - kBurstAllowance : 0;
  if (next_send_ < floor) epoch_app_limited_ = true;
  next_send_ = std::max(next_send_, floor) + TimeNs(double(bytes) * 1e9 / state_.rate);
}

void RateController::time_in_class(TimeNs now, TimeNs out[kNumPriorityClasses]) const {
  std::copy(std::begin(time_in_class_), std::end(time_in_class_), out);
  out[klass_] += now - class_since_;
}

}  // namespace netapprox::atp
