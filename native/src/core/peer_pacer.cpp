#include "core/peer_pacer.hpp"

#include <algorithm>

namespace netapprox::atp {

PeerPacer::PeerPacer(double r_max, double datagram_bytes, TimeNs min_interval)
    : r_max_(r_max), datagram_bytes_(datagram_bytes), min_interval_(min_interval), max_bw_(r_max * kStartFraction) {
  slots_[0] = Slot{0, max_bw_};
}

double PeerPacer::rate() const {
  double r = gain() * max_bw_;
  if (bound_ > 0) r = std::min(r, bound_);
  return std::clamp(r, floor(), r_max_);
}

TimeNs PeerPacer::allowance() const { return static_cast<TimeNs>(kBurstDatagrams * datagram_bytes_ * 1e9 / rate()); }

DeliveryStamp PeerPacer::on_sent(TimeNs now, double wire_bytes) {
  // A pacer later than its allowance had nothing to send (or the jobs' own pacers, windows or announces held the
  // data): the lag is dropped, and every sample whose send interval contains this moment is app-limited.
  const TimeNs lag = allowance();
  const TimeNs earliest = now > lag ? now - lag : 0;
  if (next_send_ < earliest) {
    next_send_ = earliest;
    last_idle_ = now;
    idle_seen_ = true;
    // Nothing in flight (or only packets whose fates will never come): the send interval starts here.
    if (inflight_ == 0 || (last_fate_ != 0 && now - last_fate_ > kStaleInflight)) {
      inflight_ = 0;
      first_sent_ = delivered_at_ = now;
    }
  }
  DeliveryStamp st;
  st.delivered = delivered_;
  st.delivered_at = delivered_at_;
  st.first_sent = first_sent_;
  st.app_limited = idle_seen_ && first_sent_ <= last_idle_;
  st.valid = true;
  inflight_++;
  next_send_ += static_cast<TimeNs>(wire_bytes * 1e9 / rate());
  return st;
}

void PeerPacer::on_acked(TimeNs now, TimeNs sent, const DeliveryStamp& st, double wire_bytes, TimeNs srtt) {
  if (inflight_ > 0) inflight_--;
  delivered_ += wire_bytes;
  delivered_at_ = now;
  if (now > sent) min_rtt_ = std::min(min_rtt_, now - sent);
  round_acked_++;
  cycle_acked_++;
  if (st.valid) {
    first_sent_ = std::max(first_sent_, sent);
    // The rate sample: delivered since the packet's send, over the longer of its send and ack intervals (an ack
    // interval alone overstates the rate when acknowledgements arrive bunched; a send interval alone when the
    // packets were sent in a burst). Intervals shorter than the path's least RTT are not evidence of a rate.
    const TimeNs send_elapsed = sent > st.first_sent ? sent - st.first_sent : 0;
    const TimeNs ack_elapsed = now > st.delivered_at ? now - st.delivered_at : 0;
    const TimeNs interval = std::max(send_elapsed, ack_elapsed);
    if (interval > 0 && (min_rtt_ == kNever || interval >= min_rtt_)) {
      const double bw = (delivered_ - st.delivered) * 1e9 / double(interval);
      admit(bw, st.app_limited);
    }
    if (st.delivered >= next_round_delivered_) {
      next_round_delivered_ = delivered_;
      on_round_end();
    }
  }
  on_fate(now, srtt);
}

void PeerPacer::on_lost(TimeNs now, double wire_bytes, TimeNs srtt) {
  if (inflight_ > 0) inflight_--;
  round_lost_++;
  cycle_lost_++;
  on_fate(now, srtt);
}

void PeerPacer::on_late_ack(double wire_bytes) {
  delivered_ += wire_bytes;
  if (cycle_lost_ > 0) {
    cycle_lost_--;
    cycle_acked_++;
  }
}

void PeerPacer::admit(double bw, bool app_limited) {
  if (app_limited && bw <= max_bw_) return;  // says what the jobs had, not what the path takes
  if (!app_limited) round_backlogged_ = true;
  Slot& s = slots_[round_ % kFilterRounds];
  if (s.round != round_) s = Slot{round_, bw};
  s.bw = std::max(s.bw, bw);
  // The window ends at this round: slots older than kFilterRounds rounds (or never filled) are out.
  double best = 0;
  for (const Slot& x : slots_)
    if (x.round + kFilterRounds > round_ && x.bw > 0) best = std::max(best, x.bw);
  max_bw_ = std::max(best, floor());
}

void PeerPacer::on_round_end() {
  round_++;
  if (startup_) {
    const uint64_t resolved = round_acked_ + round_lost_;
    if (resolved >= kMinCyclePackets && double(round_lost_) > kLossThreshold * double(resolved)) {
      startup_ = false;  // overload before the plateau
    } else if (max_bw_ >= kStartupGrowth * full_bw_) {
      full_bw_ = max_bw_;
      full_bw_rounds_ = 0;
    } else if (round_backlogged_ && ++full_bw_rounds_ >= kStartupRounds) {
      startup_ = false;  // the estimate stopped growing while the pacer was the limit
    }
    if (!startup_) {
      phase_ = 1;  // drain what startup queued
      phase_start_ = delivered_at_;
      cycle_acked_ = cycle_lost_ = 0;
    }
  }
  round_backlogged_ = false;
  round_acked_ = round_lost_ = 0;
}

void PeerPacer::on_fate(TimeNs now, TimeNs srtt) {
  last_fate_ = now;
  interval_ = std::max(srtt, min_interval_);
  if (startup_) return;
  if (phase_start_ == 0) phase_start_ = now;
  if (now - phase_start_ < interval_) return;
  phase_start_ = now;
  phase_ = (phase_ + 1) % kCycleGains.size();
  if (phase_ == 0) end_cycle();
}

void PeerPacer::end_cycle() {
  const uint64_t resolved = cycle_acked_ + cycle_lost_;
  if (resolved < kMinCyclePackets) return;  // not enough evidence: the cycle's counts carry on
  cycles_++;
  const double loss = double(cycle_lost_) / double(resolved);
  cycle_acked_ = cycle_lost_ = 0;
  if (loss > kLossThreshold) {
    if (hold_cycles_ > 0) {
      hold_cycles_--;
    } else if (cut_loss_ > 0 && loss >= kGapLossRatio * cut_loss_) {
      // The cut did not answer the loss: a service gap, not overload. Undo it and hold.
      bound_ = 0;
      cut_loss_ = 0;
      hold_cycles_ = kGapHoldCycles;
    } else {
      cut_from_ = bound_ > 0 ? std::min(bound_, max_bw_) : max_bw_;
      bound_ = std::max(kBeta * cut_from_, floor());
      cut_loss_ = loss;
    }
    return;
  }
  cut_loss_ = 0;
  if (hold_cycles_ > 0) hold_cycles_--;
  if (bound_ > 0) {
    bound_ *= kBoundGrowth;
    if (bound_ >= max_bw_ * kCycleGains[0]) bound_ = 0;
  }
}

}  // namespace netapprox::atp
