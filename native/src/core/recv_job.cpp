#include "core/recv_job.hpp"

#include <algorithm>
#include <cstring>

namespace netapprox::atp {

uint64_t RecvJob::table_bytes(uint32_t n_messages, uint32_t n_groups) {
  return sizeof(RecvJob) + uint64_t{n_groups} * sizeof(RecvGroup) +
         2 * ((uint64_t{n_messages} + 63) / 64) * sizeof(uint64_t);
}

RecvJob::RecvJob(JobId id_, TimeNs now) : id(id_), started(now) {}

void RecvJob::set_size(uint32_t n_messages, uint32_t n_groups, bool mrdf_flag) {
  n = n_messages;
  mrdf = mrdf_flag;
  groups.resize(n_groups);
  announced_ = true;
}

uint32_t RecvJob::group_of(MessageId m) const {
  auto it =
      std::upper_bound(groups.begin(), groups.end(), m, [](MessageId v, const RecvGroup& g) { return v < g.base; });
  return static_cast<uint32_t>(it - groups.begin()) - 1;
}

bool RecvJob::resolved(MessageId m) const { return ready_ && (bit_get(delivered_bits_, m) || bit_get(lost_bits_, m)); }

RecvJob::TableResult RecvJob::add_groups(const wire::Announce& a, TimeNs now, RecvBudget& budget,
                                         std::vector<Delivery>* out, uint64_t* refused) {
  if (n != a.n_messages || groups.size() != a.n_groups) return TableResult::kMismatch;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    RecvGroup& g = groups[a.first_group + i];
    if (g.known) continue;
    g.known = true;
    g.id = a.entries[i].group_id;
    g.size = a.entries[i].size;
    g.target = a.entries[i].target;
    groups_known_++;
  }
  if (ready_ || groups_known_ != groups.size()) return TableResult::kIncomplete;
  uint64_t sum = 0;
  for (auto& g : groups) {
    g.base = static_cast<uint32_t>(sum);
    sum += g.size;
  }
  if (sum != n) return TableResult::kBadSizes;
  delivered_bits_ = bitmap(n);
  lost_bits_ = bitmap(n);
  for (auto& g : groups) g.ordered = g.exact();  // in-order delivery is decided once, at the announce
  ready_ = true;
  ready_at = now;
  adopt_early_data(budget, out, refused);
  return TableResult::kReady;
}

// The table is known: early messages become ordinary ones. Their per-message overhead is returned; ids beyond
// the job are discarded (a peer that sends them is broken); complete messages are delivered or held for order.
void RecvJob::adopt_early_data(RecvBudget& budget, std::vector<Delivery>* out, uint64_t* refused) {
  budget.used -= std::min(budget.used, uint64_t{early_messages_} * kEarlyMessageBytes);
  early_messages_ = 0;
  for (auto it = partial_.begin(); it != partial_.end();) {
    if (it->first < n) {
      ++it;
      continue;
    }
    budget.used -= partial_charge(it->second);
    (*refused)++;
    it = partial_.erase(it);
  }
  for (auto it = held_.begin(); it != held_.end();) {
    if (it->first >= n) {
      budget.used -= held_charge(it->second.size());
      (*refused)++;
      it = held_.erase(it);
      continue;
    }
    RecvGroup& g = groups[group_of(it->first)];
    if (g.ordered) {
      ++it;
      continue;
    }
    const MessageId m = it->first;
    Buffer b = std::move(it->second);
    it = held_.erase(it);
    deliver(g, m, std::move(b), out);
  }
  for (auto& g : groups)
    if (g.ordered) advance_in_order(g, out);
}

RecvJob::DataResult RecvJob::on_data(const wire::Data& d, RecvBudget& budget, uint32_t max_message_bytes,
                                     bool events_full, TimeNs now, std::vector<Delivery>* out, bool* completed) {
  *completed = false;
  if ((announced_ && d.msg >= n) || d.msg_len > max_message_bytes) return DataResult::kMalformed;
  if (resolved(d.msg) || held_.count(d.msg)) return DataResult::kAccepted;
  auto pit = partial_.find(d.msg);
  if (pit == partial_.end()) {
    // Admission: the whole message is charged up front (early data: plus its bookkeeping). Only engine-held
    // bytes can deadlock an ordered group (bytes the application holds still push back), so the head-of-line
    // exception ignores them, bounded to one more buffer in total however many ordered groups.
    const uint32_t nseg = (d.msg_len + d.seg_size - 1) / d.seg_size;
    const uint64_t charge = held_charge(d.msg_len) + segment_bitmap_bytes(nseg) + (ready_ ? 0 : kEarlyMessageBytes);
    const bool fits = budget.used + charge <= budget.capacity;
    bool hol_fits = false;
    if (ready_) {
      const RecvGroup& g = groups[group_of(d.msg)];
      const bool head_of_line = g.ordered && d.msg == g.base + g.next_in_order;
      hol_fits =
          head_of_line && budget.app_held + charge <= budget.capacity && budget.used + charge <= 2 * budget.capacity;
    }
    if (!fits && !hol_fits) return DataResult::kNoBuffer;
    if (d.offset == 0 && d.payload_len == d.msg_len) {          // a whole message in one segment: no reassembly state
      if (ready_ && events_full) return DataResult::kNoBuffer;  // the application lags
      budget.used += charge - segment_bitmap_bytes(nseg);       // never had a segment bitmap to return
      if (!ready_) early_messages_++;
      last_data = now;
      return complete_message(d.msg, budget.spare.copy(d.payload, d.payload_len), out, completed);
    }
    RecvMessage rm;
    rm.len = d.msg_len;
    rm.seg_size = d.seg_size;
    rm.nseg = nseg;
    rm.bits = bitmap(rm.nseg);
    rm.buf = budget.spare.take(d.msg_len);
    rm.buf.resize(d.msg_len);
    budget.used += charge;
    if (!ready_) early_messages_++;
    pit = partial_.emplace(d.msg, std::move(rm)).first;
  }
  RecvMessage& rm = pit->second;
  if (rm.len != d.msg_len || rm.seg_size != d.seg_size) return DataResult::kMalformed;
  const uint32_t seg = d.offset / d.seg_size;
  if (bit_get(rm.bits, seg)) return DataResult::kAccepted;                           // duplicate segment
  if (ready_ && rm.got + 1 == rm.nseg && events_full) return DataResult::kNoBuffer;  // the application lags
  std::memcpy(rm.buf.data() + d.offset, d.payload, d.payload_len);
  bit_set(rm.bits, seg);
  last_data = now;
  if (++rm.got < rm.nseg) return DataResult::kAccepted;
  Buffer buf = std::move(rm.buf);
  budget.used -= segment_bitmap_bytes(rm.nseg);  // reassembled: the segment bitmap goes, the rest stays charged
  partial_.erase(pit);
  return complete_message(d.msg, std::move(buf), out, completed);
}

RecvJob::DataResult RecvJob::complete_message(MessageId m, Buffer buf, std::vector<Delivery>* out, bool* completed) {
  if (!ready_) {  // early: held until the table is known
    held_.emplace(m, std::move(buf));
    return DataResult::kAccepted;
  }
  RecvGroup& g = groups[group_of(m)];
  if (!g.ordered) {
    deliver(g, m, std::move(buf), out);
  } else if (m == g.base + g.next_in_order) {  // the next in order (the common case): no detour through held_
    deliver(g, m, std::move(buf), out);
    g.next_in_order++;
    advance_in_order(g, out);
  } else {
    held_.emplace(m, std::move(buf));
    advance_in_order(g, out);
  }
  *completed = true;
  return DataResult::kAccepted;
}

void RecvJob::deliver(RecvGroup& g, MessageId m, Buffer buf, std::vector<Delivery>* out) {
  bit_set(delivered_bits_, m);
  g.delivered++;
  delivered++;
  out->push_back(Delivery{m, g.id, std::move(buf)});
}

void RecvJob::advance_in_order(RecvGroup& g, std::vector<Delivery>* out) {
  while (g.next_in_order < g.size) {
    const MessageId m = g.base + g.next_in_order;
    if (resolved(m)) {
      g.next_in_order++;
      continue;
    }
    auto h = held_.find(m);
    if (h == held_.end()) return;
    Buffer b = std::move(h->second);
    held_.erase(h);
    deliver(g, m, std::move(b), out);
    g.next_in_order++;
  }
}

void RecvJob::on_abandon(const std::vector<uint32_t>& msgs, RecvBudget& budget,
                         std::vector<std::pair<MessageId, uint64_t>>* lost_out, uint64_t* refused) {
  for (MessageId m : msgs) {
    if (m >= n || resolved(m)) continue;
    RecvGroup& g = groups[group_of(m)];
    if (g.exact()) {  // exact messages are never given up
      (*refused)++;
      continue;
    }
    bit_set(lost_bits_, m);
    g.lost++;
    lost++;
    if (auto p = partial_.find(m); p != partial_.end()) {
      budget.used -= partial_charge(p->second);
      partial_.erase(p);
    }
    lost_out->emplace_back(m, g.id);
  }
}

void RecvJob::on_update(const std::vector<wire::UpdateEntry>& entries, std::vector<Delivery>* out, uint64_t* refused) {
  for (const auto& e : entries) {
    if (e.group_index >= groups.size() || e.target > groups[e.group_index].size) {
      (*refused)++;
      continue;
    }
    RecvGroup& g = groups[e.group_index];
    g.target = e.target;
    // A group raised to MSR 1 mid-job becomes reliable but not ordered (earlier messages were already delivered
    // out of order); a group lowered below 1 stops ordering and hands over what it held.
    if (g.ordered && !g.exact()) {
      g.ordered = false;
      for (auto h = held_.lower_bound(g.base); h != held_.end() && h->first < g.base + g.size;) {
        Buffer b = std::move(h->second);
        const MessageId m = h->first;
        h = held_.erase(h);
        deliver(g, m, std::move(b), out);
      }
    }
  }
}

bool RecvJob::complete() const {
  if (!ready_) return false;
  for (const auto& g : groups)
    if (g.delivered < g.target && g.delivered + g.lost < g.size) return false;
  return true;
}

void RecvJob::release_buffers(RecvBudget& budget) {
  for (auto& [m, p] : partial_) budget.used -= partial_charge(p);
  for (auto& [m, h] : held_) budget.used -= held_charge(h.size());
  budget.used -= std::min(budget.used, charged_table + uint64_t{early_messages_} * kEarlyMessageBytes);
  partial_.clear();
  held_.clear();
  charged_table = 0;
  early_messages_ = 0;
}

// The first index in [i, end) whose bit differs from v (end if none), a word at a time.
static uint32_t run_end(const std::vector<uint64_t>& bits, uint32_t i, uint32_t end, bool v) {
  while (i < end) {
    const uint64_t differs = (v ? ~bits[i / 64] : bits[i / 64]) >> (i % 64);
    if (differs) return std::min<uint32_t>(end, i + static_cast<uint32_t>(__builtin_ctzll(differs)));
    i = (i / 64 + 1) * 64;
  }
  return end;
}

void RecvJob::fill_report(JobReport& r, TimeNs now, uint32_t max_ranges) const {
  r.job = id;
  r.is_sender = false;
  r.messages = n;
  r.delivered = delivered;
  r.lost = n - delivered;
  r.measured_loss = n ? double(n - delivered) / double(n) : 0.0;
  r.started = started;
  r.finished = now;
  r.start_to_running = (ready_ ? ready_at : now) - started;
  r.last_data_to_done = last_data == kNever ? 0 : now - last_data;
  uint64_t ranges = 0;
  r.ids_listed = ready_;
  r.announces_received = announces_received;
  r.announces_duplicate = announces_duplicate;
  r.announces_acked = announces_acked;
  r.early_data_packets = early_data_packets;
  for (const auto& g : groups) {
    GroupReport gr{g.id, g.size, g.target, g.delivered, g.size - g.delivered, false, {}, {}};
    for (uint32_t i = g.base, end = g.base + g.size; r.ids_listed && i < end;) {
      const bool got = bit_get(delivered_bits_, i);
      const uint32_t j = run_end(delivered_bits_, i, end, got);
      if (++ranges > max_ranges) {
        r.ids_listed = false;
        break;
      }
      (got ? gr.delivered_ranges : gr.lost_ranges).push_back(IdRange{i, j - 1});
      i = j;
    }
    r.groups.push_back(std::move(gr));
  }
  if (!r.ids_listed)
    for (auto& g : r.groups) g.delivered_ranges.clear(), g.lost_ranges.clear();
}

}  // namespace netapprox::atp
