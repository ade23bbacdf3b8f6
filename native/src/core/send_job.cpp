#include "core/send_job.hpp"

#include <algorithm>

namespace netapprox::atp {

SendJob::SendJob(const JobSpec& spec, bool mrdf_scheduling, uint32_t seg_size, const rate_law::RateLaw& law,
                 const RateControlConfig& rc, uint64_t& session_buffered)
    : id(spec.job_id),
      n([&] {
        uint64_t total = 0;
        for (const auto& g : spec.groups) total += g.size;
        return static_cast<uint32_t>(total);
      }()),
      mrdf(spec.mrdf),
      rate(law, rc),
      mrdf_scheduling_(mrdf_scheduling),
      seg_size_(seg_size),
      repair_after_(rc.repair_after),
      session_buffered_(session_buffered),
      submitted_(bitmap(n)),
      live_(16, std::hash<MessageId>{}, std::equal_to<MessageId>{}, LiveMap::allocator_type(&nodes_)),
      ready_(n, &nodes_) {
  uint32_t base = 0;
  for (const auto& gs : spec.groups) {
    SendGroup g;
    g.spec = gs;
    g.base = base;
    g.target = slack::target_of(gs.msr, gs.size);
    base += gs.size;
    needed_ += g.target;
    groups.push_back(g);
  }
}

uint32_t SendJob::group_of(MessageId m) const {
  auto it =
      std::upper_bound(groups.begin(), groups.end(), m, [](MessageId v, const SendGroup& g) { return v < g.base; });
  return static_cast<uint32_t>(it - groups.begin()) - 1;
}

Status SendJob::submit(uint32_t group_index, uint32_t index, const uint8_t* data, size_t len, uint64_t buffer_limit) {
  SendGroup& g = groups[group_index];
  const MessageId m = g.base + index;
  if (bit_get(submitted_, m)) return Status::kAlreadyExists;
  if (g.satisfied() && !g.exact()) {  // nothing more is needed from this group
    bit_set(submitted_, m);
    g.lost++;
    pending_abandon_.push_back(m);
    return Status::kOk;
  }
  if (session_buffered_ + charge(len) > buffer_limit) return Status::kWouldBlock;
  bit_set(submitted_, m);
  SendMessage& msg = live_.try_emplace(m).first->second;  // built in place: its node comes from nodes_
  msg.group = group_index;
  msg.len = static_cast<uint32_t>(len);
  if (len <= SlabArena::kMaxCopy) {
    msg.bytes = slabs_.copy(data, msg.len, &msg.slab);
  } else {
    msg.data = spare_.copy(data, len);
    msg.bytes = msg.data.data();
  }
  msg.seg_size = seg_size_;
  const uint32_t nseg = static_cast<uint32_t>((len + msg.seg_size - 1) / msg.seg_size);
  msg.segs.assign(nseg, SegState::kNew);
  msg.need = nseg;
  messages_submitted_++;
  segments_submitted_ += nseg;
  bytes_submitted_ += len;
  session_buffered_ += charge(len);
  refresh_ready(m, msg);
  return Status::kOk;
}

void SendJob::set_running(TimeNs now) {
  running = true;
  running_at = now;
}

uint32_t SendJob::set_target(uint32_t gi, uint32_t t) {
  SendGroup& g = groups[gi];
  // Messages already given up cannot be brought back: clamp, and say so in the report.
  g.unreachable = t > g.spec.size - g.lost;
  if (g.unreachable) t = g.spec.size - g.lost;
  needed_ -= g.target > g.delivered ? g.target - g.delivered : 0;
  g.target = t;
  needed_ += g.target > g.delivered ? g.target - g.delivered : 0;
  if (g.satisfied() && !g.exact()) give_up_rest(gi);
  return t;
}

uint64_t SendJob::ready_key(MessageId m, const SendGroup& g, const SendMessage& msg) const {
  // MRDF: least remaining (unacknowledged) bytes first; otherwise message order. Ties by id keep order.
  if (g.exact()) return 0;
  const uint64_t mrdf_key = mrdf_scheduling_ && mrdf ? uint64_t(msg.len - msg.acked_bytes) : 0;
  if (!rate.deadline_policy()) return mrdf_key;
  // Deadline policy: the planned samples of all groups interleaved as their schedules are - message i of group g is
  // due at (i + 0.5) / target_g, as approx-core's SendScheduler submits them - so no group waits for another's plan;
  // every message beyond its group's plan after all of them (decided when the message becomes ready: one that joins
  // the plan after a give-up keeps its place until it is requeued).
  const uint32_t index = m - g.base;
  if (beyond_plan(g, m)) return kBeyondPlanKey | mrdf_key;
  const double due = (double(index) + 0.5) / double(std::max<uint32_t>(g.target, 1));
  return static_cast<uint64_t>(due * double(1 << 24));
}

void SendJob::refresh_ready(MessageId m, SendMessage& msg) {
  // Unchanged place (exact groups always have key 0; a 64 KiB message stays put for 45 segments): no tree work.
  if (msg.in_ready && msg.need > 0 && msg.ready_key == ready_key(m, groups[msg.group], msg)) return;
  if (msg.in_ready) ready_.erase(msg.ready_key, m);
  msg.in_ready = false;
  if (msg.need > 0) {
    msg.ready_key = ready_key(m, groups[msg.group], msg);
    ready_.insert(msg.ready_key, m);
    msg.in_ready = true;
  }
}

void SendJob::abandon(MessageId m, bool for_loss) {
  auto it = live_.find(m);
  if (it == live_.end()) return;
  if (it->second.in_ready) ready_.erase(it->second.ready_key, m);
  if (for_loss) {
    GivenUp g{it->second.group, 0, it->second.sent, std::vector<bool>(it->second.segs.size())};
    for (size_t i = 0; i < g.acked.size(); ++i) {
      g.acked[i] = it->second.segs[i] == SegState::kAcked;
      if (!g.acked[i]) g.unacked++;
    }
    given_up_.emplace(m, std::move(g));
    given_up_for_loss++;
    segments_given_up_for_loss += it->second.sent;
  } else {
    segments_given_up_satisfied += it->second.sent;
  }
  session_buffered_ -= charge(it->second.len);
  groups[it->second.group].lost++;
  pending_abandon_.push_back(m);
  free_copy(it->second);
  live_.erase(it);
}

void SendJob::free_copy(SendMessage& msg) {
  if (msg.slab != SlabArena::kNone) {
    slabs_.release(msg.slab);
    msg.slab = SlabArena::kNone;
  } else {
    spare_.put(std::move(msg.data));
  }
  msg.bytes = nullptr;
}

void SendJob::give_up_rest(uint32_t gi) {
  std::vector<MessageId> rest;
  for (auto& [m, msg] : live_)
    if (msg.group == gi) rest.push_back(m);
  for (MessageId m : rest) abandon(m);
}

void SendJob::on_segment_acked(MessageId m, uint32_t seg) {
  auto it = live_.find(m);
  if (it == live_.end()) return;
  SendMessage& msg = it->second;
  if (seg >= msg.segs.size()) return;
  SegState& state = msg.segs[seg];
  if (state == SegState::kAcked) return;
  if (state == SegState::kResend || state == SegState::kNew) msg.need--;
  state = SegState::kAcked;
  msg.acked_bytes += msg.seg_len(seg);
  if (msg.acked_bytes == msg.len) {
    const uint32_t gi = msg.group;
    if (msg.in_ready) ready_.erase(msg.ready_key, m);
    session_buffered_ -= charge(msg.len);
    free_copy(msg);
    live_.erase(it);
    SendGroup& g = groups[gi];
    g.delivered++;
    count_delivered(g);
    if (g.delivered == g.target && !g.exact()) give_up_rest(gi);
    return;
  }
  refresh_ready(m, msg);
}

void SendJob::on_segment_lost(MessageId m, uint32_t seg) {
  auto it = live_.find(m);
  if (it == live_.end()) return;
  SendMessage& msg = it->second;
  if (seg >= msg.segs.size() || msg.segs[seg] != SegState::kInFlight) return;
  const SendGroup& g = groups[msg.group];
  if (!g.exact() && g.lost < g.allowance()) {
    // The group could afford to lose the message, but its target stays: giving it up wastes the `sent` segments
    // already spent on it and another message must be delivered whole in its place, while a repair costs the one
    // lost segment. So a message with at least repair_after_ segments out is repaired; one whose only segment out
    // is the lost one (every single-segment message) is still given up, as the paper does - there it saves a
    // retransmission and the job need not wait for it. The allowance is left for losses that cost no capacity.
    // Only in jobs whose messages are multi-segment on average (FBHD-like): a job of mostly one-packet messages
    // (FBKV-like, with a rare large one) keeps the paper's rule for all of them - repairing its rare large
    // messages cost it 5 % at p50 in the ns-3 simulator (docs/protocol.md section 5).
    if (msg.sent < repair_after_ || !slack::repairs_losses(packets_per_message(), repair_after_)) {
      abandon(m, true);
      return;
    }
    repairs_within_allowance++;
  }
  msg.segs[seg] = SegState::kResend;
  msg.need++;
  msg.hint = std::min(msg.hint, seg);
  refresh_ready(m, msg);
}

void SendJob::on_segment_late_ack(MessageId m, uint32_t seg) {
  if (live_.count(m)) {
    on_segment_acked(m, seg);  // waiting for retransmission, or retransmitted: done either way
    return;
  }
  auto it = given_up_.find(m);
  if (it == given_up_.end() || seg >= it->second.acked.size() || it->second.acked[seg]) return;
  GivenUp& g = it->second;
  g.acked[seg] = true;
  if (--g.unacked > 0) return;
  // Every segment arrived: the message was delivered after all, and the peer never heard it was given up.
  const uint32_t gi = g.group;
  given_up_for_loss--;
  segments_given_up_for_loss -= g.sent;
  given_up_.erase(it);
  auto pending = std::find(pending_abandon_.begin(), pending_abandon_.end(), m);
  if (pending != pending_abandon_.end()) pending_abandon_.erase(pending);
  SendGroup& grp = groups[gi];
  grp.lost--;
  grp.delivered++;
  count_delivered(grp);
  if (grp.delivered == grp.target && !grp.exact()) give_up_rest(gi);
}

bool SendJob::next_is_whole_message(uint32_t max_len, bool* exact, bool* extra) const {
  if (ready_.empty()) return false;
  const MessageId m = ready_.front().second;
  const SendMessage& msg = live_.at(m);
  if (msg.segs.size() != 1 || msg.len > max_len) return false;
  *exact = groups[msg.group].exact();
  if (extra) *extra = rate.deadline_policy() && beyond_plan(groups[msg.group], m);
  return true;
}

bool SendJob::take_next_segment(SegmentToSend* out) {
  while (!ready_.empty()) {
    const MessageId m = ready_.front().second;
    SendMessage& msg = live_.at(m);
    uint32_t seg = msg.hint;
    while (seg < msg.segs.size() && msg.segs[seg] != SegState::kNew && msg.segs[seg] != SegState::kResend) ++seg;
    if (seg == msg.segs.size()) {  // cannot happen while need > 0; repair rather than loop
      msg.need = 0;
      refresh_ready(m, msg);
      continue;
    }
    out->msg = m;
    out->seg = seg;
    out->retransmission = msg.segs[seg] == SegState::kResend;
    out->exact = groups[msg.group].exact();
    out->extra = rate.deadline_policy() && beyond_plan(groups[msg.group], m);
    out->msg_len = msg.len;
    out->offset = seg * msg.seg_size;
    out->seg_size = static_cast<uint16_t>(msg.seg_size);
    out->payload = msg.bytes + size_t{seg} * msg.seg_size;
    out->len = msg.seg_len(seg);
    // The next two segments of this message are what the following datagrams copy: with a large send buffer
    // they were written long ago and are no longer cached, so start loading them now (a prefetch never faults;
    // docs/driver.md, "What limits 64 KiB goodput").
    {
      const uint8_t* ahead = out->payload + out->len;
      const uint8_t* end = msg.bytes + msg.len;
      const uint8_t* stop = std::min<const uint8_t*>(end, ahead + 2 * size_t{msg.seg_size});
      for (const uint8_t* p = ahead; p < stop; p += 64) __builtin_prefetch(p, 0, 3);
    }
    if (msg.segs[seg] == SegState::kNew) msg.sent++;
    msg.segs[seg] = SegState::kInFlight;
    msg.need--;
    msg.hint = seg + 1;
    if (!running) early_bytes_sent += out->len;
    refresh_ready(m, msg);
    return true;
  }
  return false;
}

std::vector<MessageId> SendJob::take_abandons() {
  std::vector<MessageId> out;
  out.swap(pending_abandon_);
  given_up_.clear();  // the peer will hear of them: too late to take them back
  return out;
}

void SendJob::release_buffers() {
  for (auto& [m, msg] : live_) session_buffered_ -= charge(msg.len);
  live_.clear();
  slabs_ = SlabArena();  // every copy goes with it
  ready_.clear();
  given_up_.clear();
}

std::vector<slack::GroupProgress> SendJob::progress() const {
  std::vector<slack::GroupProgress> v;
  v.reserve(groups.size());
  for (const auto& g : groups) v.push_back({g.spec.size, g.target, g.delivered, g.lost});
  return v;
}

double SendJob::packets_per_message() const {
  return messages_submitted_ ? double(segments_submitted_) / double(messages_submitted_) : 1.0;
}

void SendJob::fill_report(JobReport& r, TimeNs now) const {
  r.job = id;
  r.is_sender = true;
  r.messages = n;
  r.packets_sent = packets_sent;
  r.packets_retransmitted = retransmitted;
  r.bytes_sent = bytes_sent;
  r.epochs = rate.epochs();
  r.started = started;
  r.finished = now;
  const uint64_t resolved = packets_acked + packets_lost;
  r.measured_loss = resolved ? double(packets_lost) / double(resolved) : 0.0;
  rate.time_in_class(now, r.time_in_class);
  r.announces_sent = announces_sent;
  r.updates_sent = updates_sent;
  r.announce_probes = announce_probes;
  r.acks_while_starting = acks_while_starting;
  r.start_to_running = (running ? running_at : now) - started;  // a job that never ran waited all its life
  r.start_to_announce_sent = (announce_sent_at != kNever ? announce_sent_at : now) - started;
  r.last_data_to_done = last_data_sent == kNever ? 0 : now - last_data_sent;
  r.given_up_for_loss = given_up_for_loss;
  r.segments_given_up_for_loss = segments_given_up_for_loss;
  r.segments_given_up_satisfied = segments_given_up_satisfied;
  r.repairs_within_allowance = repairs_within_allowance;
  r.delivered = 0;
  for (const auto& g : groups) {
    r.groups.push_back(GroupReport{
        g.spec.group_id, g.spec.size, g.target, g.delivered, g.spec.size - g.delivered, g.unreachable, {}, {}});
    r.delivered += g.delivered;
  }
  r.lost = r.messages - r.delivered;
}

}  // namespace netapprox::atp
