// A sending job: its groups and messages, the retransmission criterion (NetApprox section 4.1: give a message up
// while its group can afford it, else retransmit), group satisfaction, and send scheduling - which segment goes
// next, minimal remaining data first (MRDF, section 4.3) or in message order.
#pragma once

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/buffer.hpp"
#include "core/engine.hpp"
#include "core/pool.hpp"
#include "core/rate_control.hpp"
#include "core/ready_queue.hpp"
#include "core/slab_arena.hpp"
#include "core/slack.hpp"

namespace netapprox::atp {

enum class SegState : uint8_t { kNew = 0, kInFlight = 1, kAcked = 2, kResend = 3 };

// The segment states of one message: inline up to kInline segments (a 64 KiB message at a 1500-byte MTU has 45),
// so a message costs no allocation for them; longer messages keep them on the heap.
class SegStates {
 public:
  static constexpr uint32_t kInline = 48;
  void assign(uint32_t n, SegState s) {
    n_ = n;
    if (n <= kInline) {
      heap_.reset();
    } else {
      heap_ = std::make_unique<SegState[]>(n);
    }
    std::fill(data(), data() + n, s);
  }
  uint32_t size() const { return n_; }
  SegState& operator[](size_t i) { return data()[i]; }
  const SegState& operator[](size_t i) const { return data()[i]; }

 private:
  SegState* data() { return heap_ ? heap_.get() : inline_; }
  const SegState* data() const { return heap_ ? heap_.get() : inline_; }
  uint32_t n_ = 0;
  SegState inline_[kInline];
  std::unique_ptr<SegState[]> heap_;
};

struct SendMessage {
  uint32_t group = 0;
  // The message's copy: in a slab of the job's arena (small messages), else in `data`.
  const uint8_t* bytes = nullptr;
  uint32_t len = 0;
  uint32_t slab = SlabArena::kNone;
  Buffer data;
  SegStates segs;
  uint32_t seg_size;
  uint32_t acked_bytes = 0;
  uint32_t need = 0;  // segments in kNew or kResend
  uint32_t sent = 0;  // segments sent at least once (not kNew): what giving the message up would waste
  uint32_t hint = 0;  // no segment below this index needs sending
  uint64_t ready_key = 0;
  bool in_ready = false;
  uint32_t seg_len(uint32_t i) const { return std::min<uint32_t>(seg_size, len - i * seg_size); }
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

// The next segment to put on the wire (taken from the ready set, now in flight).
struct SegmentToSend {
  MessageId msg;
  uint32_t seg;
  bool retransmission;
  bool exact;  // the message's group is exact (class 0)
  bool extra;  // deadline policy: beyond its group's planned sample (the lowest class; SendJob::beyond_plan)
  uint32_t msg_len, offset;
  uint16_t seg_size;
  const uint8_t* payload;  // valid until the job changes
  uint32_t len;
};

class SendJob {
 public:
  // `mrdf_scheduling`: the mode and the job both enable MRDF. `session_buffered` is the session's count of
  // submitted, unacknowledged bytes, kept up to date by the job.
  SendJob(const JobSpec& spec, bool mrdf_scheduling, uint32_t seg_size, const rate_law::RateLaw& law,
          const RateControlConfig& rc, uint64_t& session_buffered);

  // Every live (submitted, unacknowledged) message is charged to the session's send buffer with its length plus
  // this: its live-map node, SendMessage record (inline segment states), ready-queue entry and allocator overhead
  // (~150-250 bytes). Without it a 64 MiB buffer of 1-byte messages held ~67M messages, ~16 GB of bookkeeping
  // (SendJobTest.SendBufferChargesPerMessageOverhead). The receiver charges the same (RecvJob).
  static constexpr uint64_t kMessageOverheadBytes = 256;
  static uint64_t charge(uint64_t len) { return len + kMessageOverheadBytes; }

  const JobId id;
  const uint32_t n;  // messages
  const bool mrdf;   // the job's own flag (announced)
  std::vector<SendGroup> groups;
  RateController rate;
  bool running = false;  // the announce was acknowledged: data flows at the job's rate
  uint32_t announce_unacked = 0;
  // Before that, the job's first window: at most this many payload bytes, right behind the ANNOUNCE.
  uint64_t first_window = 0;
  uint64_t early_bytes_sent = 0;
  // statistics
  uint64_t packets_sent = 0, packets_acked = 0, packets_lost = 0, retransmitted = 0, bytes_sent = 0;
  uint32_t announces_sent = 0, updates_sent = 0;
  uint32_t announce_probes = 0;      // ANNOUNCE copies sent by the probe timeout
  uint32_t acks_while_starting = 0;  // ACKs that arrived before the announce was acknowledged
  TimeNs started = 0;
  TimeNs running_at = kNever;        // when the announce was acknowledged
  TimeNs announce_sent_at = kNever;  // when its first ANNOUNCE datagram went out
  TimeNs last_data_sent = kNever;
  // Waste and repairs (docs/protocol.md section 5): messages given up for a loss and the segments of them that had
  // been sent (net of late acknowledgements that took a give-up back); segments sent of messages given up
  // unfinished because their group met its target; lost segments of approximate messages repaired (queued for
  // retransmission) while their group still had allowance - the repair rule's decisions.
  uint64_t given_up_for_loss = 0, segments_given_up_for_loss = 0, segments_given_up_satisfied = 0;
  uint64_t repairs_within_allowance = 0;

  uint32_t group_of(MessageId m) const;
  // Copies message `index` of group `group_index`. kAlreadyExists, kWouldBlock (the session buffer would exceed
  // `buffer_limit`), or kOk - also for a message of a satisfied approximate group, which is given up at once.
  Status submit(uint32_t group_index, uint32_t index, const uint8_t* data, size_t len, uint64_t buffer_limit);
  // The announce was acknowledged.
  void set_running(TimeNs now);
  // May DATA go now as far as the announce is concerned: running, or still within the first window.
  bool may_send_data() const { return running || early_bytes_sent < first_window; }
  // A new target for group gi (update_msr), clamped to what the remaining messages can give.
  uint32_t set_target(uint32_t gi, uint32_t target);

  void on_segment_acked(MessageId m, uint32_t seg);
  // A segment declared lost was acknowledged after all. A segment waiting for retransmission needs none; a message
  // given up for that loss is taken back while its ABANDON has not been sent (take_abandons), and counts as
  // delivered once all its segments are acknowledged.
  void on_segment_late_ack(MessageId m, uint32_t seg);
  // Retransmission criterion: while the group can still afford to lose messages the message is given up (it
  // counts against the allowance, eq. 1's TotalNumLostMsg) - unless at least `repair_after_segments` of its
  // segments were already sent and the job's messages have at least that many segments on average, then the one
  // lost segment is resent (repairing costs one segment, giving up wastes the segments sent); once the allowance
  // is used, the segment is resent. Exact groups always retransmit.
  void on_segment_lost(MessageId m, uint32_t seg);

  bool has_ready() const { return !ready_.empty(); }
  // Whether the next segment to send is a whole message (its only segment) of at most max_len bytes, and if so
  // whether its group is exact (and, given `extra`, whether it is beyond its group's plan). Lets the engine coalesce
  // small messages of one class into one DATA bundle without changing the send order.
  bool next_is_whole_message(uint32_t max_len, bool* exact, bool* extra = nullptr) const;
  // Marks the next segment in flight; false when nothing is ready.
  bool take_next_segment(SegmentToSend* out);

  // Abandon notices waiting to become ABANDON frames.
  const std::vector<MessageId>& pending_abandons() const { return pending_abandon_; }
  std::vector<MessageId> take_abandons();

  // Frees the buffers of every unfinished message (the job ends).
  void release_buffers();

  std::vector<slack::GroupProgress> progress() const;
  // What the job still needs: messages until every group meets its target (exact groups: every message not yet
  // delivered), times the mean size of the messages submitted so far - MRDF's measure across jobs (the engine
  // serves the sending job with the least of it first when jobs compete for the host's line rate). O(1).
  uint64_t remaining_bytes() const {
    const uint64_t mean = messages_submitted_ ? (bytes_submitted_ + messages_submitted_ - 1) / messages_submitted_ : 1;
    return needed_ * mean;
  }
  uint64_t needed_messages() const { return needed_; }
  // Deadline policy (JobSpec::deadline): message m of approximate group g lies beyond the planned sample - the
  // first target + lost message indices of its group, what reaches the target if every message before it arrives
  // (each give-up moves one more message into the plan). Such a message is an extra: it travels in the lowest
  // class, after every planned one (docs/protocol.md section 11, "deadlines").
  static bool beyond_plan(const SendGroup& g, MessageId m) {
    return !g.exact() && uint64_t(m - g.base) >= uint64_t(g.target) + g.lost;
  }
  bool beyond_plan(MessageId m) const { return beyond_plan(groups[group_of(m)], m); }
  uint64_t messages_submitted() const { return messages_submitted_; }
  double packets_per_message() const;
  // The sender's report (receiver counts are merged in by the engine when a DONE carries them).
  void fill_report(JobReport& r, TimeNs now) const;

 private:
  // Deadline policy: above every planned message's schedule key (< 2^26 messages x 2^24) and remaining bytes (< 2^30).
  static constexpr uint64_t kBeyondPlanKey = uint64_t{1} << 56;
  uint64_t ready_key(MessageId m, const SendGroup& g, const SendMessage& msg) const;
  void refresh_ready(MessageId m, SendMessage& msg);
  // Gives a message up; `for_loss` keeps a record of its segments so a late acknowledgement can undo it.
  void abandon(MessageId m, bool for_loss = false);
  void give_up_rest(uint32_t gi);  // a group that met its target sends nothing more

  const bool mrdf_scheduling_;
  const uint32_t seg_size_;
  const uint32_t
      repair_after_;  // rc.repair_after = EngineConfig::repair_after_segments (0 = never repair within the allowance)
  uint64_t& session_buffered_;
  std::vector<uint64_t> submitted_;  // bitmap over message ids
  // Nodes of live_ and ready_ (one each per unacknowledged message) come from here: declared before them.
  NodePool nodes_;
  using LiveMap = std::unordered_map<MessageId, SendMessage, std::hash<MessageId>, std::equal_to<MessageId>,
                                     PoolAllocator<std::pair<const MessageId, SendMessage>>>;
  LiveMap live_;
  ReadyQueue ready_;  // messages with segments to send, by ready_key (no tree work in steady state)
  std::vector<MessageId> pending_abandon_;
  // Messages given up for a loss whose ABANDON has not been sent yet: which of their segments were acknowledged.
  struct GivenUp {
    uint32_t group;
    uint32_t unacked;
    uint32_t sent;  // segments it had sent (segments_given_up_for_loss)
    std::vector<bool> acked;
  };
  std::unordered_map<MessageId, GivenUp> given_up_;
  uint64_t messages_submitted_ = 0, segments_submitted_ = 0;  // mean packets per message (packet-level TLR)
  uint64_t bytes_submitted_ = 0;
  uint64_t needed_ = 0;  // sum over groups of max(target - delivered, 0), kept by every change of either
  void count_delivered(SendGroup& g) {
    if (g.delivered <= g.target) needed_--;
  }
  // Buffers of finished messages, reused by later submits: a large message then costs no fresh pages (page faults
  // and zeroing were ~5% of the sender's CPU for 64 KiB messages) and a small one no malloc/free (~30 % of the
  // CPU per 100-byte message, docs/driver.md). Bounded per job.
  static constexpr uint64_t kMaxSpareBytes = 1 << 20;
  BufferPool spare_{kMaxSpareBytes};
  SlabArena slabs_;  // copies of messages up to SlabArena::kMaxCopy bytes
  void free_copy(SendMessage& msg);
};

}  // namespace netapprox::atp
