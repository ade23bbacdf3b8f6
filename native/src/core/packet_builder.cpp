#include "core/packet_builder.hpp"

#include <algorithm>

#include "core/send_job.hpp"

namespace netapprox::atp::packet {

namespace {
uint32_t status_code(Status s) { return static_cast<uint32_t>(static_cast<int32_t>(s)); }
}  // namespace

uint8_t header_flags(bool use_aes, bool peer_aes_capable, bool header_only, bool bundles) {
  return static_cast<uint8_t>((use_aes && peer_aes_capable ? wire::kFlagAesGcm : 0) |
                              (use_aes ? wire::kFlagAesCapable : 0) | (header_only ? wire::kFlagHeaderOnlyAuth : 0) |
                              (bundles ? wire::kFlagBundles : 0));
}

size_t seal(uint8_t* buf, wire::PacketType type, const crypto::SessionKey& key, bool initiator, SessionId session,
            uint64_t pn, uint8_t flags, size_t body_len) {
  const bool header_only = (flags & wire::kFlagHeaderOnlyAuth) != 0;
  wire::write_header(buf, type, initiator, session, pn, flags);
  wire::set_body_len(buf, static_cast<uint16_t>(body_len));
  const size_t covered = wire::kHeaderBytes + (header_only ? wire::kDataHeaderBytes : body_len);
  crypto::seal(key, initiator, pn, buf, covered, buf + wire::kHeaderBytes + body_len);
  return wire::kHeaderBytes + body_len + wire::kTagBytes;
}

uint32_t segment_room(uint32_t max_datagram) {
  return max_datagram - static_cast<uint32_t>(wire::kOverheadBytes + wire::kDataHeaderBytes);
}

size_t max_ack_ranges(uint32_t max_datagram) {
  const size_t room = max_datagram - wire::kOverheadBytes;
  return std::min(wire::kMaxAckRanges, 1 + (room - wire::kAckFixedBytes) / 8);
}

TimeNs ack_delay(TimeNs now, TimeNs ack_deadline, TimeNs ack_delay_limit) {
  return ack_deadline != kNever && now + ack_delay_limit > ack_deadline ? now - (ack_deadline - ack_delay_limit) : 0;
}

size_t write_ack(uint8_t* body, size_t room, uint64_t largest, TimeNs delay, uint64_t window,
                 const std::vector<wire::AckRange>& ranges) {
  wire::Writer w(body, room);
  w.u64(largest);
  w.u32(static_cast<uint32_t>(std::min<TimeNs>(delay / 1000, UINT32_MAX)));
  w.u16(static_cast<uint16_t>(ranges.size()));
  w.u16(0);
  w.u64(window);
  w.u32(static_cast<uint32_t>(ranges[0].high - ranges[0].low));
  for (size_t i = 1; i < ranges.size(); ++i) {
    w.u32(static_cast<uint32_t>(ranges[i - 1].low - ranges[i].high - 2));
    w.u32(static_cast<uint32_t>(ranges[i].high - ranges[i].low));
  }
  return w.size();
}

size_t write_data(uint8_t* body, size_t room, JobId job, const SegmentToSend& seg) {
  wire::Writer w(body, room);
  w.u32(job);
  w.u32(seg.msg);
  w.u32(seg.msg_len);
  w.u32(seg.offset);
  w.u16(seg.seg_size);
  w.u16(0);
  w.bytes(seg.payload, seg.len);
  return w.size();
}

uint32_t bundle_room(uint32_t max_datagram) {
  return max_datagram - static_cast<uint32_t>(wire::kOverheadBytes + wire::kBundleFixedBytes);
}

uint32_t max_bundled_message(uint32_t max_datagram) {
  return static_cast<uint32_t>(bundle_room(max_datagram) / 2 - wire::kBundleEntryBytes);
}

BundleWriter::BundleWriter(uint8_t* body, uint32_t max_datagram, JobId job)
    : body_(body),
      w_(body, max_datagram - wire::kOverheadBytes),
      room_(bundle_room(max_datagram)),
      max_message_(max_bundled_message(max_datagram)) {
  w_.u32(job);
  w_.u16(0);  // count, set by finish()
  w_.u16(0);
}

bool BundleWriter::has_room() const {
  const size_t used = w_.size() - wire::kBundleFixedBytes;
  return used + wire::kBundleEntryBytes + 1 <= room_;
}

uint32_t BundleWriter::fits() const {
  const size_t used = w_.size() - wire::kBundleFixedBytes;
  return std::min<uint32_t>(max_message_, room_ - static_cast<uint32_t>(used + wire::kBundleEntryBytes));
}

void BundleWriter::add(MessageId msg, const uint8_t* payload, uint16_t len) {
  w_.u32(msg);
  w_.u16(len);
  w_.bytes(payload, len);
  ++count_;
}

size_t BundleWriter::finish() {
  body_[4] = static_cast<uint8_t>(count_ >> 8);
  body_[5] = static_cast<uint8_t>(count_);
  return w_.size();
}

size_t announce_entries_per_frame(uint32_t max_datagram) {
  return (max_datagram - wire::kOverheadBytes - wire::kAnnounceFixedBytes) / wire::kAnnounceEntryBytes;
}

std::vector<uint8_t> announce_body(JobId job, uint32_t n_messages, uint32_t n_groups, uint32_t first, bool mrdf,
                                   const wire::AnnounceEntry* entries, size_t n) {
  std::vector<uint8_t> body(wire::kAnnounceFixedBytes + n * wire::kAnnounceEntryBytes);
  wire::Writer w(body.data(), body.size());
  w.u32(job);
  w.u32(n_messages);
  w.u32(n_groups);
  w.u32(first);
  w.u16(static_cast<uint16_t>(n));
  w.u16(mrdf ? wire::kAnnounceFlagMrdf : 0);
  for (size_t i = 0; i < n; ++i) {
    w.u64(entries[i].group_id);
    w.u32(entries[i].size);
    w.u32(entries[i].target);
  }
  return body;
}

size_t updates_per_frame(uint32_t max_datagram) {
  return (max_datagram - wire::kOverheadBytes - wire::kListFixedBytes) / wire::kUpdateEntryBytes;
}

std::vector<uint8_t> update_body(JobId job, const wire::UpdateEntry* entries, size_t n) {
  std::vector<uint8_t> body(wire::kListFixedBytes + n * wire::kUpdateEntryBytes);
  wire::Writer w(body.data(), body.size());
  w.u32(job);
  w.u16(static_cast<uint16_t>(n));
  w.u16(0);
  for (size_t i = 0; i < n; ++i) {
    w.u32(entries[i].group_index);
    w.u32(entries[i].target);
  }
  return body;
}

size_t abandons_per_frame(uint32_t max_datagram) {
  return (max_datagram - wire::kOverheadBytes - wire::kListFixedBytes) / 4;
}

std::vector<uint8_t> abandon_body(JobId job, const MessageId* msgs, size_t n) {
  std::vector<uint8_t> body(wire::kListFixedBytes + 4 * n);
  wire::Writer w(body.data(), body.size());
  w.u32(job);
  w.u16(static_cast<uint16_t>(n));
  w.u16(0);
  for (size_t k = 0; k < n; ++k) w.u32(msgs[k]);
  return body;
}

// The fixed part, the count and 4 bytes per group. (The engine's inline formula before this unit left the count
// out: a job of exactly (max_datagram - 60) / 4 groups, 353 at 1472, got a DONE 4 bytes over max_datagram.)
size_t done_groups_room(uint32_t max_datagram) {
  return (max_datagram - wire::kOverheadBytes - wire::kDoneFixedBytes - 4) / 4;
}

std::vector<uint8_t> done_body(JobId job, Status status, uint32_t delivered, uint32_t lost,
                               const std::vector<uint32_t>& group_delivered) {
  const size_t n = group_delivered.size();
  std::vector<uint8_t> body(wire::kDoneFixedBytes + (n ? 4 + 4 * n : 0));
  wire::Writer w(body.data(), body.size());
  w.u32(job);
  w.u32(status_code(status));
  w.u32(delivered);
  w.u32(lost);
  w.u32(0);  // attempt: set at each transmission
  if (n) {
    w.u32(static_cast<uint32_t>(n));
    for (uint32_t d : group_delivered) w.u32(d);
  }
  return body;
}

void set_done_attempt(std::vector<uint8_t>* body, uint32_t attempt) {
  wire::Writer w(body->data() + 16, 4);
  w.u32(attempt);
}

std::vector<uint8_t> cancel_body(JobId job) {
  std::vector<uint8_t> body(4);
  wire::Writer w(body.data(), body.size());
  w.u32(job);
  return body;
}

std::vector<uint8_t> close_packet(Status why, const crypto::SessionKey& key, bool initiator, SessionId session,
                                  uint64_t pn, uint8_t flags) {
  std::vector<uint8_t> bytes(wire::kHeaderBytes + 4 + wire::kTagBytes);
  wire::Writer w(bytes.data() + wire::kHeaderBytes, 4);
  w.u32(status_code(why));
  bytes.resize(seal(bytes.data(), wire::PacketType::kClose, key, initiator, session, pn, flags, 4));
  return bytes;
}

}  // namespace netapprox::atp::packet
