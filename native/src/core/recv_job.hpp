// A receiving job: the group table from the ANNOUNCE, reassembly of DATA segments into messages within the
// session's receive buffer, in-order delivery of exact groups, ABANDON and UPDATE, and completion (the receiver
// decides when a job is complete). Deliveries are returned to the caller, which turns them into events.
//
// A job's first window of DATA travels right behind its ANNOUNCE, so DATA may arrive before the group table is
// complete (the ANNOUNCE lost, reordered, or in several chunks). Such early data is held - reassembled within the
// receive buffer, charged with a per-message overhead - and handed over when the table is known; it is refused
// (and counted) only when the buffer is full.
#pragma once

#include <map>
#include <unordered_map>
#include <vector>

#include "core/buffer.hpp"
#include "core/engine.hpp"
#include "core/pool.hpp"
#include "core/wire.hpp"

namespace netapprox::atp {

// A session's receive buffer: reassembly, messages held for order, delivered messages the application holds.
struct RecvBudget {
  uint64_t capacity = 0;
  uint64_t used = 0;
  uint64_t app_held = 0;  // part of `used`: delivered, not released yet
  // Buffers of released messages, reused for the next ones (no malloc/free per delivered message). Not charged to
  // `used` (nothing is held in them); bounded per session.
  static constexpr uint64_t kSpareBytes = 2 << 20;
  BufferPool spare{kSpareBytes};
  uint64_t free() const { return capacity > used ? capacity - used : 0; }
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

// A complete message handed to the application.
struct Delivery {
  MessageId msg;
  uint64_t group_id;
  Buffer buf;
};

class RecvJob {
 public:
  // Bookkeeping charged to the receive buffer while the job lives: the group table and two bitmaps of N bits.
  static uint64_t table_bytes(uint32_t n_messages, uint32_t n_groups);
  // Charged while the job is known only from early data, and per message of early data on top of its length.
  static constexpr uint64_t kEarlyJobBytes = 256;
  static constexpr uint64_t kEarlyMessageBytes = 128;
  // Every message the engine holds (in reassembly, held for order, delivered and not released yet) is charged
  // its length plus this, for its map node, event and allocator overhead (about 110-250 bytes measured on glibc),
  // so one-byte messages cannot hold 100x their charge (HostileMemoryTest); a message in reassembly is also
  // charged its segment bitmap.
  static constexpr uint64_t kMessageOverheadBytes = 256;
  static uint64_t held_charge(uint64_t len) { return len + kMessageOverheadBytes; }
  static uint64_t segment_bitmap_bytes(uint32_t nseg) { return (uint64_t{nseg} + 63) / 64 * sizeof(uint64_t); }
  static uint64_t partial_charge(const RecvMessage& m) { return held_charge(m.len) + segment_bitmap_bytes(m.nseg); }

  // A job appears with its first packet: an ANNOUNCE chunk, or early DATA.
  RecvJob(JobId id, TimeNs now);

  const JobId id;
  const TimeNs started;
  uint32_t n = 0;  // messages (from the ANNOUNCE)
  bool mrdf = true;
  TimeNs ready_at = kNever;    // group table complete
  TimeNs last_data = kNever;   // last DATA segment taken
  uint64_t charged_table = 0;  // bytes of this job's bookkeeping charged to the budget
  std::vector<RecvGroup> groups;
  uint32_t delivered = 0, lost = 0;
  // Control-path diagnostics for the report (engine.hpp JobReport).
  uint32_t announces_received = 0, announces_duplicate = 0, announces_acked = 0;
  uint64_t early_data_packets = 0;

  bool announced() const { return announced_; }  // an ANNOUNCE chunk arrived: size and group count are known
  bool ready() const { return ready_; }          // every group known and consistent
  uint32_t group_of(MessageId m) const;
  bool resolved(MessageId m) const;  // delivered or given up

  // The first ANNOUNCE chunk fixes the job's size and group count.
  void set_size(uint32_t n_messages, uint32_t n_groups, bool mrdf_flag);
  enum class TableResult { kIncomplete, kReady, kMismatch, kBadSizes };
  // One ANNOUNCE chunk (after set_size). kMismatch: its job size or group count differ from the first chunk's (the
  // chunk is ignored); kBadSizes: the group sizes do not add up to N (the job must end with a protocol error);
  // kReady: the table just became complete - early data is then handed over (`out`: its complete messages that
  // can be delivered; early message ids beyond the job are discarded and counted in *refused);
  // kIncomplete otherwise (also for chunks after the table was complete).
  TableResult add_groups(const wire::Announce& a, TimeNs now, RecvBudget& budget, std::vector<Delivery>* out,
                         uint64_t* refused);

  enum class DataResult { kAccepted, kNoBuffer, kMalformed };
  // One DATA segment. Admission charges the whole message to the budget; the next in-order message of an exact
  // group is admitted beyond the buffer (bounded: see docs/protocol.md section 8) so order cannot deadlock it.
  // Before the table is complete the segment is held as early data (no head-of-line exception).
  // `events_full`: a message's last segment is refused while the event queue is full.
  // Complete messages are appended to `out`; *completed tells whether one completed (completion may follow).
  DataResult on_data(const wire::Data& d, RecvBudget& budget, uint32_t max_message_bytes, bool events_full, TimeNs now,
                     std::vector<Delivery>* out, bool* completed);
  // Messages the sender gave up (the table is complete). Ids of exact groups are refused (counted in *refused);
  // newly lost ids are appended to `lost_out` as (message, group id).
  void on_abandon(const std::vector<uint32_t>& msgs, RecvBudget& budget,
                  std::vector<std::pair<MessageId, uint64_t>>* lost_out, uint64_t* refused);
  // New targets. Invalid entries are counted in *refused. A group lowered below MSR 1 hands over what it held.
  void on_update(const std::vector<wire::UpdateEntry>& entries, std::vector<Delivery>* out, uint64_t* refused);

  // Every group has delivered its target, or has nothing left.
  bool complete() const;
  // Returns every byte the job holds (reassembly, held messages, its bookkeeping) to the budget.
  void release_buffers(RecvBudget& budget);
  // The report lists ids as ranges, at most max_ranges of them (else none): its size is bounded whatever N.
  void fill_report(JobReport& r, TimeNs now, uint32_t max_ranges) const;
  uint32_t early_messages() const { return early_messages_; }  // messages of early data now held

 private:
  void deliver(RecvGroup& g, MessageId m, Buffer buf, std::vector<Delivery>* out);
  // A message is complete: delivered, held for order, or (table incomplete) held as early data.
  DataResult complete_message(MessageId m, Buffer buf, std::vector<Delivery>* out, bool* completed);
  void advance_in_order(RecvGroup& g, std::vector<Delivery>* out);
  void adopt_early_data(RecvBudget& budget, std::vector<Delivery>* out, uint64_t* refused);

  bool announced_ = false;
  uint32_t groups_known_ = 0;
  bool ready_ = false;
  std::vector<uint64_t> delivered_bits_, lost_bits_;
  // Nodes of partial_ and held_ come from here (no allocation per message): declared before them.
  NodePool nodes_;
  using PartialMap = std::unordered_map<MessageId, RecvMessage, std::hash<MessageId>, std::equal_to<MessageId>,
                                        PoolAllocator<std::pair<const MessageId, RecvMessage>>>;
  using HeldMap = std::map<MessageId, Buffer, std::less<MessageId>, PoolAllocator<std::pair<const MessageId, Buffer>>>;
  PartialMap partial_{16, std::hash<MessageId>{}, std::equal_to<MessageId>{}, PartialMap::allocator_type(&nodes_)};
  HeldMap held_{std::less<MessageId>{}, HeldMap::allocator_type(&nodes_)};  // complete messages of ordered groups
                                                                            // waiting for order (or early ones)
  uint32_t early_messages_ = 0;  // messages started before the table was complete: kEarlyMessageBytes each
};

}  // namespace netapprox::atp
