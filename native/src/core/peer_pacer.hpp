// One endpoint's pacer for all approximate-class DATA to one peer (docs/protocol.md section 10, "Peer pacer").
//
// Each job paces itself, but a job that has not measured its share, or whose decisions are app-limited or held as
// service gaps, runs at R_max; N such jobs on one host then burst into the 1-7 frame approximate queues at the line
// rate together (network lab: approximate classes dropping while the port carried 65-182 of 200 Mbit/s). The peer
// pacer spends every approximate-class datagram to the peer once more, at the rate the host's approximate DATA to
// that peer is delivered (plus a bounded probe), with a burst allowance of a few datagrams. Class-0 DATA (exact
// groups, needy jobs) is not paced here.
#pragma once

#include <cstdint>

#include "core/engine.hpp"

namespace netapprox::atp {

class PeerPacer {
 public:
  // Burst allowance: this many full datagrams (with their wire overhead) may go back to back after an idle moment.
  static constexpr double kBurstDatagrams = 2;
  // A decision needs this many resolved packets, or kMaxIntervals intervals with at least one.
  static constexpr uint64_t kMinResolved = 8;
  static constexpr double kMaxIntervals = 2;
  // Above this loss the decision goes down to the delivered rate (overload, or another host's burst).
  static constexpr double kLossThreshold = 1.0 / 32;
  // The probe: a lossless decision may raise the rate to this multiple of what was delivered.
  static constexpr double kProbeGain = 1.25;
  // The floor: this fraction of the line rate (32 hosts share a port at the line rate).
  static constexpr double kFloorFraction = 1.0 / 32;

  // r_max: the line rate in bytes per second; datagram_bytes: a full datagram with its wire overhead; min_interval:
  // the shortest decision interval (EngineConfig::min_epoch; otherwise the smoothed RTT).
  PeerPacer(double r_max, double datagram_bytes, TimeNs min_interval);

  // When approximate DATA to the peer may go next.
  TimeNs next_send() const { return next_send_; }
  // An approximate-class datagram of `wire_bytes` (payload and wire overhead) went to the peer.
  void on_sent(TimeNs now, double wire_bytes);
  // An approximate-class DATA packet to the peer was acknowledged or declared lost; srtt: its session's.
  void on_resolved(TimeNs now, bool acked, double wire_bytes, TimeNs srtt);
  // A packet declared lost was acknowledged after all (counted in the open decision only).
  void on_late_ack(double wire_bytes);

  double rate() const { return rate_; }  // bytes per second
  double floor() const { return r_max_ * kFloorFraction; }
  uint64_t decisions() const { return decisions_; }
  // Burst allowance in time at the current rate.
  TimeNs allowance() const;

 private:
  void decide(TimeNs now);

  const double r_max_, datagram_bytes_;
  const TimeNs min_interval_;
  double rate_;
  TimeNs next_send_ = 0;
  // The open decision: since `since_`, what was resolved, and whether the pacer sat idle (nothing to send).
  TimeNs since_ = kNever;
  uint64_t acked_ = 0, lost_ = 0;
  double acked_bytes_ = 0;
  bool idle_ = false;
  uint64_t decisions_ = 0;
};

}  // namespace netapprox::atp
