// Loss recovery for one session's sending direction: packet numbers, the log of sent packets, acknowledgement
// processing, loss detection (packet threshold, time threshold, probe timeout) and the RTT estimator.
// What a packet's fate means (retransmit a segment, give a message up, resend a control frame) is the caller's:
// recovery reports fates through PacketFate.
#pragma once

#include <deque>

#include "core/engine.hpp"
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
  Kind kind = Kind::kPing;
  bool resolved = false;  // acknowledged or declared lost (an ACK is resolved when sent: nothing acknowledges it)
  bool retransmission = false;
  uint32_t bytes = 0;     // DATA payload bytes, counted in flight until resolved
  TimeNs sent = 0;
  JobId job = 0;          // DATA and control frames
  MessageId msg = 0;      // DATA
  uint32_t seg = 0;       // DATA
  uint64_t ctrl = 0;      // control frame id
};

// Told the fate of each packet, once.
class PacketFate {
 public:
  virtual void on_acked(const SentPacket& p) = 0;
  virtual void on_lost(const SentPacket& p) = 0;

 protected:
  ~PacketFate() = default;
};

class Recovery {
 public:
  static constexpr uint64_t kPacketThreshold = 3;

  Recovery(TimeNs initial_rtt, TimeNs ack_delay) : initial_rtt_(initial_rtt), ack_delay_(ack_delay) {}

  uint64_t next_pn() const { return next_pn_; }
  // Records a packet sent now under next_pn() and advances it.
  void on_sent(const SentPacket& p, TimeNs now);
  // A datagram sent outside the log (the CLOSE sealed at close time) still consumes its number.
  void skip_pn() { next_pn_++; }

  // Resolves every newly acknowledged packet, takes an RTT sample from the largest one, then detects losses.
  // An ACK whose largest number was never sent is ignored.
  void on_ack(const wire::Ack& a, TimeNs now, PacketFate& fate);
  // Declares packets lost by packet threshold or time threshold (9/8 RTT) behind the largest acknowledged
  // packet and, when `on_pto`, every packet whose probe timeout passed.
  void detect_losses(TimeNs now, bool on_pto, PacketFate& fate);
  // The probe timeout fires only when acknowledgements stopped making progress for a PTO: a growing queue
  // inflates the RTT, and while acknowledgements keep arriving the thresholds detect losses.
  TimeNs loss_deadline() const;

  TimeNs srtt() const { return rtt_.smoothed(initial_rtt_); }
  TimeNs pto() const;
  const RttEstimator& rtt() const { return rtt_; }
  uint64_t inflight_bytes() const { return inflight_bytes_; }
  size_t logged() const { return sent_.size(); }  // packets from the oldest unresolved one on

 private:
  void resolve(SentPacket& p, bool acked, PacketFate& fate);
  void pop_resolved();

  TimeNs initial_rtt_, ack_delay_;
  RttEstimator rtt_;
  uint64_t next_pn_ = 0;
  uint64_t base_pn_ = 0;  // packet number of sent_.front()
  std::deque<SentPacket> sent_;
  uint64_t inflight_bytes_ = 0;
  uint64_t largest_acked_ = 0;
  bool any_acked_ = false;
  TimeNs last_ack_progress_ = 0;  // when an ACK last acknowledged something new
};

}  // namespace netapprox::atp
