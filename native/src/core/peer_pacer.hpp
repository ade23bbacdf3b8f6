// One endpoint's pacer for all approximate-class DATA to one peer (docs/protocol.md section 10, "Peer pacer").
//
// Each job paces itself, but a job that has not measured its share, or whose decisions are app-limited or held as
// service gaps, runs at R_max; N such jobs on one host then burst into the 1-7 frame approximate queues at the line
// rate together (network lab: approximate classes dropping while the port carried 65-182 of 200 Mbit/s). The peer
// pacer spends every approximate-class datagram to the peer once more, with a burst allowance of a few datagrams.
// Class-0 DATA (exact groups, needy jobs) is not paced here.
//
// Its rate follows a delivery-rate model (as BBR's): every acknowledged packet gives a rate sample, the bytes
// delivered to the peer between the packet's send and its acknowledgement over the longer of the send and the ack
// intervals; a windowed maximum of the samples over the last kFilterRounds round trips is the capacity estimate, and
// the pacer runs at a gain x the estimate, cycling through a probe (kCycleGains). Samples taken while the pacer had
// nothing to send (app-limited) enter the filter only when they raise it, and the filter ages only when a sample
// enters it, so app-limited traffic never lowers the estimate. Loss does not touch the estimate: only a whole probe
// cycle with loss above kLossThreshold bounds the rate (kBeta x), and a bound whose next cycle loses as much is undone
// (a service gap of the class, not overload: docs/protocol.md section 10, "service gap vs overload").
#pragma once

#include <array>
#include <cstdint>

#include "core/engine.hpp"

namespace netapprox::atp {

// What a packet carries from its send to its fate, for the rate sample (SentPacket::pacer).
struct DeliveryStamp {
  double delivered = 0;      // bytes delivered to the peer when the packet was sent
  TimeNs delivered_at = 0;   // when the latest of them was acknowledged
  TimeNs first_sent = 0;     // when the packet acknowledged then had been sent (start of the send interval)
  bool app_limited = false;  // the send interval contains a moment the pacer had nothing to send
  bool valid = false;        // stamped by a peer pacer
};

class PeerPacer {
 public:
  // Burst allowance: this many full datagrams (with their wire overhead) may go back to back after an idle moment.
  static constexpr double kBurstDatagrams = 2;
  // The max filter's window in round trips (packet-timed rounds).
  static constexpr uint64_t kFilterRounds = 10;
  // The start: an estimate of R_max x kStartFraction, at kStartupGain until the estimate stops growing by
  // kStartupGrowth over kStartupRounds rounds of backlogged samples, or a round loses above kLossThreshold.
  static constexpr double kStartFraction = 1.0 / 4;
  static constexpr double kStartupGain = 2.0;
  static constexpr double kStartupGrowth = 1.25;
  static constexpr int kStartupRounds = 3;
  // The probe cycle: one phase per interval (max(srtt, min_interval)).
  static constexpr std::array<double, 8> kCycleGains{1.25, 0.75, 1, 1, 1, 1, 1, 1};
  // Sustained overload: a cycle with at least kMinCyclePackets resolved and more than kLossThreshold of them lost
  // bounds the rate at kBeta x what it was; a lossless cycle raises the bound by kBoundGrowth until it no longer
  // binds. A cut whose next cycle loses at least kGapLossRatio x as much is undone and cuts pause kGapHoldCycles.
  static constexpr double kLossThreshold = 1.0 / 8;
  static constexpr uint64_t kMinCyclePackets = 8;
  static constexpr double kBeta = 0.7;
  static constexpr double kBoundGrowth = 1.25;
  static constexpr double kGapLossRatio = 0.75;
  static constexpr int kGapHoldCycles = 4;
  // The floor: this fraction of the line rate (32 hosts share a port at the line rate).
  static constexpr double kFloorFraction = 1.0 / 32;
  // Fates older than this make the in-flight count stale (packets of closed sessions never resolve).
  static constexpr TimeNs kStaleInflight = 100'000'000;

  // r_max: the line rate in bytes per second; datagram_bytes: a full datagram with its wire overhead; min_interval:
  // the shortest phase (EngineConfig::min_epoch; otherwise the smoothed RTT).
  PeerPacer(double r_max, double datagram_bytes, TimeNs min_interval);

  // When approximate DATA to the peer may go next.
  TimeNs next_send() const { return next_send_; }
  // An approximate-class datagram of `wire_bytes` (payload and wire overhead) goes to the peer now: spends it and
  // returns the stamp the packet carries to its fate.
  DeliveryStamp on_sent(TimeNs now, double wire_bytes);
  // Its fate: acknowledged (sent at `sent`, with its stamp) or declared lost; srtt: its session's.
  void on_acked(TimeNs now, TimeNs sent, const DeliveryStamp& stamp, double wire_bytes, TimeNs srtt);
  void on_lost(TimeNs now, double wire_bytes, TimeNs srtt);
  // A packet declared lost was acknowledged after all: delivered, and not a loss of the open cycle.
  void on_late_ack(double wire_bytes);

  double rate() const;                         // the pacing rate, bytes per second
  double estimate() const { return max_bw_; }  // the capacity estimate, bytes per second
  double bound() const { return bound_; }      // the loss bound on the rate (0: none)
  double floor() const { return r_max_ * kFloorFraction; }
  bool in_startup() const { return startup_; }
  uint64_t round() const { return round_; }
  uint64_t cycles() const { return cycles_; }
  // Burst allowance in time at the current rate.
  TimeNs allowance() const;

 private:
  void admit(double bw, bool app_limited);
  void on_round_end();
  void on_fate(TimeNs now, TimeNs srtt);
  void end_cycle();
  double gain() const { return startup_ ? kStartupGain : kCycleGains[phase_]; }

  const double r_max_, datagram_bytes_;
  const TimeNs min_interval_;
  TimeNs next_send_ = 0;
  // Delivery state.
  double delivered_ = 0;
  TimeNs delivered_at_ = 0, first_sent_ = 0, last_idle_ = 0, last_fate_ = 0;
  bool idle_seen_ = false;
  uint64_t inflight_ = 0;  // packets
  TimeNs min_rtt_ = kNever;
  // Rounds and the max filter.
  uint64_t round_ = 0;
  double next_round_delivered_ = 0;
  bool round_backlogged_ = false;
  uint64_t round_acked_ = 0, round_lost_ = 0;
  struct Slot {
    uint64_t round = 0;
    double bw = 0;
  };
  std::array<Slot, kFilterRounds> slots_{};
  double max_bw_;
  // Startup.
  bool startup_ = true;
  double full_bw_ = 0;
  int full_bw_rounds_ = 0;
  // The probe cycle and the loss bound.
  size_t phase_ = 0;
  TimeNs phase_start_ = 0, interval_ = 0;
  uint64_t cycle_acked_ = 0, cycle_lost_ = 0, cycles_ = 0;
  double bound_ = 0, cut_from_ = 0, cut_loss_ = 0;
  int hold_cycles_ = 0;
};

}  // namespace netapprox::atp
