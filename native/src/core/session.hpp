// Internal state of the sans-I/O engine: sessions, sending jobs and receiving jobs.
#pragma once

#include <array>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/control.hpp"
#include "core/crypto.hpp"
#include "core/engine.hpp"
#include "core/wire.hpp"

namespace netapprox::atp {

// Byte buffers for message payloads are filled right after allocation: skip std::vector's zero-fill.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using Buffer = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;

// Smoothed RTT as in RFC 9002 (EWMA of samples, variance for the probe timeout).
struct RttEstimator {
  TimeNs srtt = 0, rttvar = 0, min_rtt = kNever, latest = 0;
  bool has_sample = false;
  void on_sample(TimeNs sample, TimeNs ack_delay);
  TimeNs smoothed(TimeNs fallback) const { return has_sample ? srtt : fallback; }
};

// Sliding window of received packet numbers: replay protection and the source of ACK ranges.
class ReceivedWindow {
 public:
  static constexpr uint64_t kBits = 4096;
  enum class Check { kNew, kDuplicate, kTooOld };
  Check check(uint64_t pn) const;
  void mark(uint64_t pn);
  bool any() const { return any_; }
  uint64_t largest() const { return largest_; }
  // Descending disjoint ranges (at most max_ranges) of received numbers within the window.
  std::vector<wire::AckRange> ranges(size_t max_ranges) const;

 private:
  bool test(uint64_t pn) const { return bits_[(pn % kBits) / 64] >> (pn % 64) & 1; }
  std::array<uint64_t, kBits / 64> bits_{};
  uint64_t largest_ = 0;
  bool any_ = false;
};

enum class SegState : uint8_t { kNew = 0, kInFlight = 1, kAcked = 2, kResend = 3 };

struct SendMessage {
  uint32_t group;
  Buffer data;
  std::vector<SegState> segs;
  uint32_t seg_size;
  uint32_t acked_bytes = 0;
  uint32_t need = 0;     // segments in kNew or kResend
  uint32_t hint = 0;     // no segment below this index needs sending
  uint64_t ready_key = 0;
  bool in_ready = false;
  uint32_t seg_len(uint32_t i) const {
    return std::min<uint32_t>(seg_size, static_cast<uint32_t>(data.size()) - i * seg_size);
  }
};

struct SendGroup {
  GroupSpec spec;
  uint32_t base = 0;
  uint32_t target = 0;
  uint32_t delivered = 0;  // fully acknowledged messages
  uint32_t lost = 0;       // messages given up (network loss within the allowance, or not needed any more)
  bool unreachable = false;
  bool exact() const { return target >= spec.size; }
  bool satisfied() const { return delivered >= target; }
  uint32_t allowance() const { return spec.size - target; }
};

struct SendJob {
  JobId id;
  std::vector<SendGroup> groups;
  uint32_t n = 0;
  bool mrdf = true;
  bool running = false;          // the announce was acknowledged
  uint32_t announce_unacked = 0;
  std::vector<uint64_t> submitted;  // bitmap over message ids
  std::unordered_map<MessageId, SendMessage> live;
  std::set<std::pair<uint64_t, MessageId>> ready;
  std::vector<MessageId> pending_abandon;
  // rate control
  double rate = 0;  // bytes per second
  TimeNs next_send = 0;
  TimeNs epoch_start = 0;
  uint64_t epoch_acked = 0, epoch_lost = 0;
  double tlr = 0, tlr0 = 0, approx_tlr0 = 0;
  int klass = 0;
  TimeNs class_since = 0;
  TimeNs time_in_class[kNumPriorityClasses] = {};
  // statistics
  uint64_t packets_sent = 0, packets_acked = 0, packets_lost = 0, retransmitted = 0, bytes_sent = 0, epochs = 0;
  uint64_t messages_submitted = 0, segments_submitted = 0;  // mean packets per message, for the packet-level TLR
  TimeNs started = 0;
  uint32_t group_of(MessageId m) const;
};

struct RecvMessage {
  uint32_t len;
  uint16_t seg_size;
  uint32_t nseg;
  uint32_t got = 0;
  std::vector<uint64_t> bits;
  Buffer buf;
};

struct RecvGroup {
  uint64_t id = 0;
  uint32_t size = 0, target = 0, base = 0;
  uint32_t delivered = 0, lost = 0;
  uint32_t next_in_order = 0;  // ordered groups: next message index to deliver
  bool known = false;
  bool ordered = false;  // announced with MSR 1: delivered in order
  bool exact() const { return target >= size; }
};

struct RecvJob {
  JobId id;
  uint32_t n = 0;
  uint32_t groups_known = 0;
  bool ready = false;
  bool mrdf = true;
  std::vector<RecvGroup> groups;
  std::vector<uint64_t> delivered_bits, lost_bits;
  uint64_t table_bytes = 0;  // group table + bitmaps, charged to the session's receive buffer while the job lives
  std::unordered_map<MessageId, RecvMessage> partial;
  std::map<MessageId, Buffer> held;  // complete messages of exact groups waiting for order
  TimeNs started = 0;
  uint32_t delivered = 0, lost = 0;
  uint32_t group_of(MessageId m) const;
};

struct ControlFrame {
  uint64_t id;
  wire::PacketType type;
  JobId job;  // for announce accounting
  std::vector<uint8_t> body;
  bool in_flight = false;
  uint32_t losses = 0;
  TimeNs not_before = 0;  // retransmissions back off exponentially
};

struct SentPacket {
  enum class Kind : uint8_t { kData, kControl, kPing, kAck };
  Kind kind;
  bool resolved;
  bool retransmission;
  uint32_t bytes;
  TimeNs sent;
  JobId job;
  MessageId msg;
  uint32_t seg;
  uint64_t ctrl;
};

struct Session {
  SessionId id;
  uint64_t generation = 0;
  crypto::SessionKey key;
  PeerId peer;
  bool initiator;
  bool peer_aes_capable = false;  // learned from the peer's authenticated packets (wire::kFlagAesCapable)
  TimeNs created, last_rx, last_tx;
  TimeNs active_since = 0;  // when the session last went from no jobs to some: peer death counts from here
  // receive side
  ReceivedWindow received;
  uint32_t unacked_eliciting = 0;
  TimeNs ack_deadline = kNever;
  bool ack_now = false;
  uint64_t last_advertised_window = 0;
  // send side
  uint64_t next_pn = 0;
  uint64_t base_pn = 0;  // packet number of sent.front()
  std::deque<SentPacket> sent;
  uint64_t inflight_bytes = 0;
  uint64_t largest_acked = 0;
  bool any_acked = false;
  TimeNs last_ack_progress = 0;  // when an ACK last acknowledged something new
  uint64_t peer_window;
  RttEstimator rtt;
  std::deque<ControlFrame> control;
  uint64_t next_ctrl_id = 1;
  bool ping_now = false;
  TimeNs last_ping = 0;
  std::map<JobId, std::unique_ptr<SendJob>> send_jobs;
  std::map<JobId, std::unique_ptr<RecvJob>> recv_jobs;
  std::deque<JobId> finished_send;  // recently finished own jobs: their ids are not reused
  std::deque<JobId> finished_recv;  // recently finished jobs: stray packets are acknowledged, not counted
  uint64_t send_buffered = 0;
  uint64_t recv_used = 0;
  uint64_t app_held = 0;  // part of recv_used: delivered messages the application has not released
  bool has_active_jobs() const { return !send_jobs.empty() || !recv_jobs.empty(); }
};

}  // namespace netapprox::atp
