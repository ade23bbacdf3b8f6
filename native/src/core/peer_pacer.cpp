#include "core/peer_pacer.hpp"

#include <algorithm>

namespace netapprox::atp {

PeerPacer::PeerPacer(double r_max, double datagram_bytes, TimeNs min_interval)
    : r_max_(r_max), datagram_bytes_(datagram_bytes), min_interval_(min_interval), rate_(r_max) {}

TimeNs PeerPacer::allowance() const { return static_cast<TimeNs>(kBurstDatagrams * datagram_bytes_ * 1e9 / rate_); }

void PeerPacer::on_sent(TimeNs now, double wire_bytes) {
  // A pacer later than its allowance had nothing to send: the lag is dropped, and the decision is app-limited.
  const TimeNs lag = allowance();
  const TimeNs floor = now > lag ? now - lag : 0;
  if (next_send_ < floor) {
    idle_ = true;
    next_send_ = floor;
  }
  next_send_ += static_cast<TimeNs>(wire_bytes * 1e9 / rate_);
}

void PeerPacer::on_resolved(TimeNs now, bool acked, double wire_bytes, TimeNs srtt) {
  if (since_ == kNever) since_ = now;
  if (acked) {
    acked_++;
    acked_bytes_ += wire_bytes;
  } else {
    lost_++;
  }
  const TimeNs interval = std::max(srtt, min_interval_);
  const TimeNs elapsed = now - since_;
  if (elapsed < interval) return;
  if (acked_ + lost_ < kMinResolved && double(elapsed) < kMaxIntervals * double(interval)) return;
  decide(now);
}

void PeerPacer::on_late_ack(double wire_bytes) {
  if (lost_ == 0) return;
  lost_--;
  acked_++;
  acked_bytes_ += wire_bytes;
}

void PeerPacer::decide(TimeNs now) {
  const double elapsed = double(now - since_);
  const double delivered = acked_bytes_ * 1e9 / elapsed;
  const double rho = double(lost_) / double(acked_ + lost_);
  const bool idle = idle_ || next_send_ + allowance() < now;
  if (rho > kLossThreshold) {
    // Overload or another host's burst: what got through is what the path takes from this host now.
    rate_ = std::min(rate_, delivered);
  } else if (idle) {
    // App-limited: hold, but never above what the host's approximate jobs delivered together plus the probe - the
    // next job's data then does not arrive at the line rate on top of the others'.
    rate_ = std::min(rate_, kProbeGain * delivered);
  } else {
    // Backlogged and lossless: probe above the delivered rate.
    rate_ = std::max(rate_, kProbeGain * delivered);
  }
  rate_ = std::clamp(rate_, floor(), r_max_);
  decisions_++;
  since_ = now;
  acked_ = lost_ = 0;
  acked_bytes_ = 0;
  idle_ = false;
}

}  // namespace netapprox::atp
