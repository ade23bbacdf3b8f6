#include "core/recovery.hpp"

#include <algorithm>
#include <utility>

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
  // The recent peak floors only a session without a sample of its own (a new session to a known peer): with samples,
  // a peak floor delayed every repair behind class-0 bursts (FabricTest.NeedyJobsAreNotParkedBehindClassZeroBursts).
  const TimeNs base = srtt() + var;
  return (rtt_.has_sample ? base : std::max(base, recent_peak_rtt())) + ack_delay_;
}

TimeNs Recovery::time_threshold() const {
  const TimeNs rtt = std::max(srtt(), rtt_.latest);
  return rtt + rtt * reorder_eighths_ / 8;
}

void Recovery::note_peak(TimeNs rtt, TimeNs now) {
  if (now - peak_since_ >= kPeakWindow) {
    peak_prev_ = now - peak_since_ >= 2 * kPeakWindow ? 0 : peak_cur_;
    peak_cur_ = 0;
    peak_since_ = now;
  }
  peak_cur_ = std::max(peak_cur_, rtt);
}

void Recovery::on_sent(SentPacket p, TimeNs now) {
  if (sent_.empty()) base_pn_ = next_pn_;
  sent_.push_back(std::move(p));
  SentPacket& q = sent_.back();
  q.sent = now;
  if (q.state == SentPacket::State::kInFlight) {
    in_flight_++;
    if (q.kind == SentPacket::Kind::kData) inflight_bytes_ += q.bytes;
  }
  next_pn_++;
  trim(now);
}

void Recovery::advance_first_in_flight() const {
  first_in_flight_ = std::max(first_in_flight_, base_pn_);
  while (first_in_flight_ < next_pn_ && sent_[first_in_flight_ - base_pn_].state != SentPacket::State::kInFlight)
    first_in_flight_++;
}

uint64_t Recovery::span() const {
  advance_first_in_flight();
  return next_pn_ - first_in_flight_;
}

// Acknowledged packets leave the front of the log at once; lost ones stay for a while (a late acknowledgement can
// still come, e.g. after a delay spike), and the log never holds more than the peer's replay window.
void Recovery::trim(TimeNs now) {
  while (!sent_.empty()) {
    SentPacket& p = sent_.front();
    const bool done = p.state == SentPacket::State::kAcked ||
                      (p.state == SentPacket::State::kLost && (p.lost_at + kKeepLost <= now || sent_.size() > kMaxLog));
    if (!done) break;
    if (p.bundled.capacity() > 0 && spare_bundle_lists_.size() < kMaxSpareBundleLists) {
      p.bundled.clear();
      spare_bundle_lists_.push_back(std::move(p.bundled));
    }
    sent_.pop_front();
    base_pn_++;
  }
}

void Recovery::declare_lost(uint64_t pn, SentPacket& p, TimeNs now, PacketFate& fate) {
  p.state = SentPacket::State::kLost;
  p.overtaken_in_queue = pn + 1 < largest_acked_by_dscp_[p.dscp & 63];
  p.lost_at = now;
  in_flight_--;
  if (p.kind == SentPacket::Kind::kData) inflight_bytes_ -= p.bytes;
  fate.on_lost(p);
}

void Recovery::on_ack(const wire::Ack& a, TimeNs now, PacketFate& fate) {
  if (a.largest >= next_pn_) return;  // acknowledges something never sent: ignore
  bool progress = false;
  for (const auto& r : a.ranges) {
    const uint64_t lo = std::max(r.low, base_pn_);
    const uint64_t hi = std::min(r.high, next_pn_ - 1);
    for (uint64_t pn = lo; pn <= hi && pn >= base_pn_ && pn - base_pn_ < sent_.size(); ++pn) {
      SentPacket& p = sent_[pn - base_pn_];
      if (p.state == SentPacket::State::kAcked) continue;
      // The largest acknowledged number gives the sample, also when its packet was declared lost: on a path longer
      // than the probe timeout that is the only way to learn the RTT.
      if (pn == a.largest) {
        rtt_.on_sample(now - p.sent, TimeNs(a.ack_delay_us) * 1000);
        const TimeNs delay = TimeNs(a.ack_delay_us) * 1000;
        note_peak(rtt_.latest >= rtt_.min_rtt + delay ? rtt_.latest - delay : rtt_.latest, now);
      }
      const bool late = p.state == SentPacket::State::kLost;
      p.state = SentPacket::State::kAcked;
      progress = true;
      auto& largest = largest_acked_by_dscp_[p.dscp & 63];
      largest = std::max(largest, pn + 1);
      if (late) {
        // A spurious loss: the packet was only reordered or delayed. Tolerate more reordering from now on - unless
        // only packets of other queues had overtaken it (that is priority, and the 2x threshold covers it).
        spurious_++;
        if (p.overtaken_in_queue) {
          reorder_eighths_ = std::min(2 * reorder_eighths_, kMaxReorderEighths);
          last_reorder_change_ = now;
        }
        fate.on_late_ack(p);
      } else {
        in_flight_--;
        if (p.kind == SentPacket::Kind::kData) inflight_bytes_ -= p.bytes;
        fate.on_acked(p);
      }
    }
  }
  if (progress) {
    last_ack_progress_ = now;
    pto_count_ = 0;
  }
  if (!any_acked_ || a.largest > largest_acked_) largest_acked_ = a.largest;
  any_acked_ = true;
  detect_losses(now, fate);
}

void Recovery::detect_losses(TimeNs now, PacketFate& fate) {
  if (reorder_eighths_ > 1 && now - last_reorder_change_ > 64 * srtt()) {  // quiet for a while: narrow again
    reorder_eighths_ /= 2;
    last_reorder_change_ = now;
  }
  if (any_acked_) {
    const TimeNs thresh = time_threshold();
    advance_first_in_flight();
    for (uint64_t pn = first_in_flight_; pn < largest_acked_ && pn < next_pn_; ++pn) {
      SentPacket& p = sent_[pn - base_pn_];
      if (p.sent + thresh > now) break;  // this and every later packet is too young either way
      if (p.state == SentPacket::State::kInFlight && loss_time(pn, p, thresh) <= now) declare_lost(pn, p, now, fate);
    }
  }
  trim(now);
}

TimeNs Recovery::loss_timer() const {
  if (!any_acked_) return kNever;
  advance_first_in_flight();
  // The earliest loss time of the in-flight packets behind the largest acknowledged one. Send times only grow, so
  // the scan stops at the first packet that could not beat the best found.
  const TimeNs thresh = time_threshold();
  TimeNs best = kNever;
  for (uint64_t pn = first_in_flight_; pn < largest_acked_ && pn < next_pn_; ++pn) {
    const SentPacket& p = sent_[pn - base_pn_];
    if (p.sent + thresh >= best) break;
    if (p.state == SentPacket::State::kInFlight) best = std::min(best, loss_time(pn, p, thresh));
  }
  return best;
}

TimeNs Recovery::probe_deadline() const {
  if (in_flight_ == 0) return kNever;
  advance_first_in_flight();
  const TimeNs oldest = sent_[first_in_flight_ - base_pn_].sent;
  const TimeNs anchor = std::max({oldest, last_ack_progress_, last_probe_});
  const TimeNs interval = std::min(pto() << std::min(pto_count_, kMaxProbeBackoff), kMaxProbeInterval);
  return anchor + std::max<TimeNs>(interval, 1);
}

void Recovery::on_probe_timeout(TimeNs now, PacketFate& fate) {
  if (rtt_.has_sample && pto_count_ > 0) {
    // The previous probe went unanswered too: what was sent before it is lost (it waited at least 3 PTOs).
    advance_first_in_flight();
    for (uint64_t pn = first_in_flight_; pn < next_pn_; ++pn) {
      SentPacket& p = sent_[pn - base_pn_];
      if (p.sent > last_probe_) break;
      if (p.state == SentPacket::State::kInFlight) declare_lost(pn, p, now, fate);
    }
  }
  pto_count_ = std::min(pto_count_ + 1, kMaxProbeBackoff);
  last_probe_ = now;
  trim(now);
}

}  // namespace netapprox::atp
