#include "core/recovery.hpp"

#include <algorithm>

namespace netapprox::atp {

void RttEstimator::on_sample(TimeNs sample, TimeNs ack_delay) {
  latest = sample;
  min_rtt = std::min(min_rtt, sample);
  if (sample >= min_rtt + ack_delay) sample -= ack_delay;
  if (!has_sample) {
    srtt = sample;
    rttvar = sample / 2;
    has_sample = true;
    return;
  }
  const TimeNs diff = srtt > sample ? srtt - sample : sample - srtt;
  rttvar = (3 * rttvar + diff) / 4;
  srtt = (7 * srtt + sample) / 8;
}

TimeNs Recovery::pto() const {
  const TimeNs var = rtt_.has_sample ? std::max<TimeNs>(4 * rtt_.rttvar, 1'000'000) : srtt();
  return srtt() + var + ack_delay_;
}

void Recovery::on_sent(const SentPacket& p, TimeNs now) {
  if (sent_.empty()) base_pn_ = next_pn_;
  sent_.push_back(p);
  sent_.back().sent = now;
  if (p.kind == SentPacket::Kind::kData && !p.resolved) inflight_bytes_ += p.bytes;
  next_pn_++;
  pop_resolved();
}

void Recovery::resolve(SentPacket& p, bool acked, PacketFate& fate) {
  if (p.resolved) return;
  p.resolved = true;
  if (p.kind == SentPacket::Kind::kData) inflight_bytes_ -= p.bytes;
  if (acked) {
    fate.on_acked(p);
  } else {
    fate.on_lost(p);
  }
}

void Recovery::pop_resolved() {
  while (!sent_.empty() && sent_.front().resolved) {
    sent_.pop_front();
    base_pn_++;
  }
}

void Recovery::on_ack(const wire::Ack& a, TimeNs now, PacketFate& fate) {
  if (a.largest >= next_pn_) return;  // acknowledges something never sent: ignore
  for (const auto& r : a.ranges) {
    const uint64_t lo = std::max(r.low, base_pn_);
    const uint64_t hi = std::min(r.high, next_pn_ - 1);
    for (uint64_t pn = lo; pn <= hi && pn >= base_pn_ && pn - base_pn_ < sent_.size(); ++pn) {
      SentPacket& p = sent_[pn - base_pn_];
      if (p.resolved) continue;
      if (pn == a.largest) rtt_.on_sample(now - p.sent, TimeNs(a.ack_delay_us) * 1000);
      resolve(p, true, fate);
      last_ack_progress_ = now;
    }
  }
  if (!any_acked_ || a.largest > largest_acked_) largest_acked_ = a.largest;
  any_acked_ = true;
  detect_losses(now, false, fate);
}

void Recovery::detect_losses(TimeNs now, bool on_pto, PacketFate& fate) {
  const TimeNs rtt = std::max(srtt(), rtt_.latest);
  const TimeNs time_thresh = rtt + rtt / 8;
  const TimeNs pto_thresh = pto();
  for (size_t i = 0; i < sent_.size(); ++i) {
    SentPacket& p = sent_[i];
    if (p.resolved) continue;
    const uint64_t pn = base_pn_ + i;
    const bool behind = any_acked_ && pn < largest_acked_;
    const bool lost = (behind && (pn + kPacketThreshold <= largest_acked_ || p.sent + time_thresh <= now)) ||
                      (on_pto && std::max(p.sent, last_ack_progress_) + pto_thresh <= now);
    if (lost) {
      resolve(p, false, fate);
    } else if (!behind) {
      break;  // later packets are newer still
    }
  }
  pop_resolved();
}

TimeNs Recovery::loss_deadline() const {
  for (const auto& p : sent_)
    if (!p.resolved) return std::max(p.sent, last_ack_progress_) + pto();
  return kNever;
}

}  // namespace netapprox::atp
