// Loss recovery for one session's sending direction: packet numbers, the log of sent packets, acknowledgement
// processing, loss detection and the probe timeout, and the RTT estimator.
//
// Loss detection is time-based, as RACK (RFC 8985): a packet sent before the largest acknowledged one of the same
// DSCP is lost when it is older than the RTT plus a reordering window; one only overtaken by packets of other DSCPs
// (other switch queues: a control frame or exact data in class 0 overtakes approximate data by design) when it is
// twice as old (RTT / 8 at first, doubled by each spurious loss up to 4
// RTTs, halved again after 64 quiet RTTs). Counting packets (a fixed "3 later packets were acknowledged") mistakes
// reordering for loss as soon as the jitter exceeds three packet times.
//
// What a packet's fate means (retransmit a segment, give a message up, resend a control frame) is the caller's:
// recovery reports fates through PacketFate. A packet declared lost stays in the log for a while, so that an
// acknowledgement that arrives after all (reordering, a delay spike) still gives an RTT sample and lets the caller
// undo what the loss cost where it still can (on_late_ack). Such spurious losses widen the reordering thresholds.
#pragma once

#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "core/engine.hpp"
#include "core/ring.hpp"
#include "core/wire.hpp"

namespace netapprox::atp {

// Smoothed RTT as in RFC 9002 (EWMA of samples, variance for the probe timeout).
struct RttEstimator {
  TimeNs srtt = 0, rttvar = 0, min_rtt = kNever, latest = 0;
  bool has_sample = false;
  void on_sample(TimeNs sample, TimeNs ack_delay);
  TimeNs smoothed(TimeNs fallback) const { return has_sample ? srtt : fallback; }
};

struct SentPacket {
  enum class Kind : uint8_t { kData, kControl, kPing, kAck };
  enum class State : uint8_t { kInFlight, kAcked, kLost };
  Kind kind = Kind::kPing;
  State state = State::kInFlight;  // an ACK is recorded as kAcked: nothing acknowledges it
  bool retransmission = false;
  uint32_t bytes = 0;  // DATA payload bytes, counted in flight until acknowledged or declared lost
  uint32_t size = 0;   // the datagram's bytes (what pacing spends)
  TimeNs sent = 0;
  TimeNs lost_at = 0;               // when declared lost
  JobId job = 0;                    // DATA and control frames
  MessageId msg = 0;                // DATA
  uint32_t seg = 0;                 // DATA
  std::vector<MessageId> bundled;   // DATA bundle: the whole messages it carries (msg and seg unused)
  uint64_t ctrl = 0;                // control frame id
  uint8_t dscp = 0;                 // the queue it travels in: ordering holds only among packets of one DSCP
  bool overtaken_in_queue = false;  // declared lost behind a packet of its own DSCP (true reordering if acked late)
};

// Told the fate of each packet: acknowledged or lost once, and acknowledged late at most once after a loss.
class PacketFate {
 public:
  virtual void on_acked(const SentPacket& p) = 0;
  virtual void on_lost(const SentPacket& p) = 0;
  virtual void on_late_ack(const SentPacket& p) = 0;

 protected:
  ~PacketFate() = default;
};

class Recovery {
 public:
  static constexpr uint32_t kMaxProbeBackoff = 16;            // exponent cap
  static constexpr TimeNs kMaxProbeInterval = 1'000'000'000;  // 1 s between probes at most
  static constexpr size_t kMaxLog = 4096;                     // the peer's replay window: older acks cannot come
  static constexpr TimeNs kKeepLost = 1'000'000'000;          // how long a lost packet waits for a late ack

  Recovery(TimeNs initial_rtt, TimeNs ack_delay) : initial_rtt_(initial_rtt), ack_delay_(ack_delay) {}

  uint64_t next_pn() const { return next_pn_; }
  // Records a packet sent now under next_pn() and advances it.
  void on_sent(SentPacket p, TimeNs now);
  // A datagram sent outside the log (the CLOSE sealed at close time) still consumes its number.
  void skip_pn() { next_pn_++; }

  // Resolves every newly acknowledged packet (late ones included), takes an RTT sample when the ACK's largest
  // number is newly acknowledged, then detects losses. An ACK whose largest number was never sent is ignored.
  void on_ack(const wire::Ack& a, TimeNs now, PacketFate& fate);
  // Declares lost every packet behind the largest acknowledged one of its DSCP that is older than the time
  // threshold - max(srtt, latest RTT) plus the reordering window - and every packet behind the largest acknowledged
  // one of any DSCP that is older than twice the threshold.
  void detect_losses(TimeNs now, PacketFate& fate);
  // When the time threshold expires for the oldest packet behind the largest acknowledged one.
  TimeNs loss_timer() const;

  // Probe timeout: acknowledgements made no progress for a PTO (backed off exponentially, x2 per unanswered probe,
  // at most kMaxProbeInterval). The caller sends a probe (an in-flight control frame again, else a PING). It
  // declares nothing lost before the path's first RTT sample, nor at the first timeout: only packets sent before
  // an earlier unanswered probe are declared lost.
  TimeNs probe_deadline() const;
  void on_probe_timeout(TimeNs now, PacketFate& fate);

  TimeNs srtt() const { return rtt_.smoothed(initial_rtt_); }
  // Probe timeout, not backed off: srtt + max(4 rttvar, 1 ms) + ack delay as RFC 9002; before the session's first
  // sample at least the recent peak RTT other sessions to the same peer saw (seed_peak_rtt), so a new session's
  // ANNOUNCE is not probed while it waits in a queue the path is known to build (docs/protocol.md section 3).
  TimeNs pto() const;
  TimeNs recent_peak_rtt() const { return std::max(peak_cur_, peak_prev_); }
  // What another session to the same peer saw recently (Engine: a new session learns the path's queueing before its
  // first sample): counts as a sample of this window for the peak only.
  void seed_peak_rtt(TimeNs peak, TimeNs now) { note_peak(peak, now); }
  static constexpr TimeNs kPeakWindow = 1'000'000'000;
  const RttEstimator& rtt() const { return rtt_; }
  uint32_t probes() const { return pto_count_; }  // consecutive unanswered probe timeouts
  uint64_t inflight_bytes() const { return inflight_bytes_; }
  // Packet numbers from the oldest one in flight to the next one: the peer's replay window must cover them.
  uint64_t span() const;
  size_t logged() const { return sent_.size(); }
  // An empty id list for a new DATA bundle (SentPacket::bundled), with the capacity of one the log let go.
  std::vector<MessageId> take_bundle_list() {
    if (spare_bundle_lists_.empty()) return {};
    std::vector<MessageId> v = std::move(spare_bundle_lists_.back());
    spare_bundle_lists_.pop_back();
    return v;
  }
  uint64_t spurious_losses() const { return spurious_; }
  TimeNs time_threshold() const;

 private:
  void declare_lost(uint64_t pn, SentPacket& p, TimeNs now, PacketFate& fate);
  void note_peak(TimeNs rtt, TimeNs now);
  void advance_first_in_flight() const;
  void trim(TimeNs now);
  // When packet `pn` (in flight, behind the largest acknowledged one) counts as lost.
  TimeNs loss_time(uint64_t pn, const SentPacket& p, TimeNs thresh) const {
    return p.sent + (pn + 1 < largest_acked_by_dscp_[p.dscp & 63] ? thresh : 2 * thresh);
  }

  TimeNs initial_rtt_, ack_delay_;
  RttEstimator rtt_;
  // Largest RTT samples of the current and the previous window (recent_peak_rtt).
  TimeNs peak_cur_ = 0, peak_prev_ = 0, peak_since_ = 0;
  uint64_t next_pn_ = 0;
  uint64_t base_pn_ = 0;  // packet number of sent_.front()
  Ring<SentPacket> sent_;
  // Id lists of trimmed DATA bundles, handed to the next bundles (take_bundle_list): no allocation per bundle.
  static constexpr size_t kMaxSpareBundleLists = 1024;
  std::vector<std::vector<MessageId>> spare_bundle_lists_;
  mutable uint64_t first_in_flight_ = 0;  // no packet below this number is in flight
  uint64_t inflight_bytes_ = 0;
  uint64_t in_flight_ = 0;      // packets
  uint64_t largest_acked_ = 0;  // over all DSCPs
  bool any_acked_ = false;
  // Per DSCP: 1 + the largest acknowledged packet number (0: none yet).
  std::array<uint64_t, 64> largest_acked_by_dscp_{};
  TimeNs last_ack_progress_ = 0;  // when an ACK last acknowledged something new
  uint32_t pto_count_ = 0;
  TimeNs last_probe_ = 0;
  // Reordering window = RTT * reorder_eighths_ / 8.
  static constexpr uint32_t kMaxReorderEighths = 32;
  uint32_t reorder_eighths_ = 1;
  TimeNs last_reorder_change_ = 0;
  uint64_t spurious_ = 0;
};

}  // namespace netapprox::atp
