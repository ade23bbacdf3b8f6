#include "core/wire.hpp"

#include <algorithm>
#include <cstring>

namespace netapprox::atp::wire {

uint16_t load16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t load32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
uint64_t load64(const uint8_t* p) { return (uint64_t{load32(p)} << 32) | load32(p + 4); }

static void store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
static void store32(uint8_t* p, uint32_t v) {
  store16(p, static_cast<uint16_t>(v >> 16));
  store16(p + 2, static_cast<uint16_t>(v));
}
static void store64(uint8_t* p, uint64_t v) {
  store32(p, static_cast<uint32_t>(v >> 32));
  store32(p + 4, static_cast<uint32_t>(v));
}

bool Writer::u8(uint8_t v) {
  if (room() < 1) return false;
  buf_[len_++] = v;
  return true;
}
bool Writer::u16(uint16_t v) {
  if (room() < 2) return false;
  store16(buf_ + len_, v);
  len_ += 2;
  return true;
}
bool Writer::u32(uint32_t v) {
  if (room() < 4) return false;
  store32(buf_ + len_, v);
  len_ += 4;
  return true;
}
bool Writer::u64(uint64_t v) {
  if (room() < 8) return false;
  store64(buf_ + len_, v);
  len_ += 8;
  return true;
}
bool Writer::bytes(const uint8_t* p, size_t n) {
  if (room() < n) return false;
  if (n) std::memcpy(buf_ + len_, p, n);
  len_ += n;
  return true;
}

void write_header(uint8_t* p, PacketType type, bool from_initiator, uint64_t session, uint64_t pn,
                  uint8_t extra_flags) {
  store16(p, kMagic);
  p[2] = kVersion;
  p[3] = static_cast<uint8_t>(type);
  p[4] = static_cast<uint8_t>((from_initiator ? kFlagInitiator : 0) | (extra_flags & ~kFlagInitiator & kKnownFlags));
  p[5] = 0;
  store16(p + 6, 0);
  store64(p + 8, session);
  store64(p + 16, pn);
}

void set_body_len(uint8_t* p, uint16_t body_len) { store16(p + 6, body_len); }

ParseError parse_header(const uint8_t* p, size_t len, Header* h) {
  if (len < kOverheadBytes) return ParseError::kTooShort;
  if (load16(p) != kMagic) return ParseError::kBadMagic;
  if (p[2] != kVersion) return ParseError::kBadVersion;
  const uint8_t type = p[3];
  if (type < static_cast<uint8_t>(PacketType::kData) || type > static_cast<uint8_t>(PacketType::kDataBundle))
    return ParseError::kBadType;
  if ((p[4] & ~kKnownFlags) != 0 || p[5] != 0) return ParseError::kBadFlags;
  // Header-only authentication exists for bulk data only; control packets are always fully covered.
  if ((p[4] & kFlagHeaderOnlyAuth) && type != static_cast<uint8_t>(PacketType::kData)) return ParseError::kBadFlags;
  const uint16_t body_len = load16(p + 6);
  if (size_t{body_len} + kOverheadBytes != len) return ParseError::kBadLength;
  h->type = static_cast<PacketType>(type);
  h->from_initiator = (p[4] & kFlagInitiator) != 0;
  h->flags = p[4];
  h->body_len = body_len;
  h->session = load64(p + 8);
  h->packet_number = load64(p + 16);
  return ParseError::kOk;
}

ParseError parse_data(const uint8_t* b, size_t len, Data* d) {
  if (len <= kDataHeaderBytes) return ParseError::kBadBody;  // a data packet carries at least one byte
  d->job = load32(b);
  d->msg = load32(b + 4);
  d->msg_len = load32(b + 8);
  d->offset = load32(b + 12);
  d->seg_size = load16(b + 16);
  if (load16(b + 18) != 0) return ParseError::kBadBody;
  d->payload = b + kDataHeaderBytes;
  d->payload_len = static_cast<uint16_t>(len - kDataHeaderBytes);
  if (d->seg_size == 0 || d->msg_len == 0) return ParseError::kBadBody;
  if (d->offset % d->seg_size != 0 || d->offset >= d->msg_len) return ParseError::kBadBody;
  // Every segment but the last is exactly seg_size long; the last one ends the message.
  const uint32_t expect = std::min<uint32_t>(d->seg_size, d->msg_len - d->offset);
  if (d->payload_len != expect) return ParseError::kBadBody;
  return ParseError::kOk;
}

ParseError parse_bundle(const uint8_t* b, size_t len, Bundle* out) {
  if (len < kBundleFixedBytes + kBundleEntryBytes + 1) return ParseError::kBadBody;
  out->job = load32(b);
  const uint16_t count = load16(b + 4);
  if (load16(b + 6) != 0 || count == 0) return ParseError::kBadBody;
  out->entries.clear();
  size_t off = kBundleFixedBytes;
  for (uint16_t i = 0; i < count; ++i) {
    if (len - off < kBundleEntryBytes + 1) return ParseError::kBadBody;
    BundleEntry e;
    e.msg = load32(b + off);
    e.len = load16(b + off + 4);
    off += kBundleEntryBytes;
    if (e.len == 0 || e.len > len - off) return ParseError::kBadBody;  // every message has at least one byte
    e.payload = b + off;
    off += e.len;
    out->entries.push_back(e);
  }
  if (off != len) return ParseError::kBadBody;  // the entries fill the body exactly
  return ParseError::kOk;
}

ParseError parse_ack(const uint8_t* b, size_t len, Ack* a) {
  if (len < kAckFixedBytes) return ParseError::kBadBody;
  a->largest = load64(b);
  a->ack_delay_us = load32(b + 8);
  const uint16_t nranges = load16(b + 12);
  if (load16(b + 14) != 0) return ParseError::kBadBody;
  a->window = load64(b + 16);
  if (nranges == 0 || nranges > kMaxAckRanges) return ParseError::kBadBody;
  if (len != kAckFixedBytes + size_t{nranges - 1u} * 8) return ParseError::kBadBody;
  a->ranges.clear();
  const uint32_t first = load32(b + 24);
  if (first > a->largest) return ParseError::kBadBody;
  uint64_t low = a->largest - first;
  a->ranges.push_back({low, a->largest});
  const uint8_t* q = b + kAckFixedBytes;
  for (uint16_t i = 1; i < nranges; ++i, q += 8) {
    const uint64_t gap = load32(q);
    const uint64_t rlen = load32(q + 4);
    // The next range ends at least two below the previous low (one missing packet in between).
    if (low < gap + 2) return ParseError::kBadBody;
    const uint64_t high = low - gap - 2;
    if (high < rlen) return ParseError::kBadBody;
    low = high - rlen;
    a->ranges.push_back({low, high});
  }
  return ParseError::kOk;
}

ParseError parse_announce(const uint8_t* b, size_t len, Announce* a) {
  if (len < kAnnounceFixedBytes) return ParseError::kBadBody;
  a->job = load32(b);
  a->n_messages = load32(b + 4);
  a->n_groups = load32(b + 8);
  a->first_group = load32(b + 12);
  const uint16_t count = load16(b + 16);
  a->flags = load16(b + 18);
  if ((a->flags & ~kAnnounceFlagMrdf) != 0) return ParseError::kBadBody;
  if (count == 0 || len != kAnnounceFixedBytes + size_t{count} * kAnnounceEntryBytes) return ParseError::kBadBody;
  if (a->n_groups == 0 || a->first_group >= a->n_groups || count > a->n_groups - a->first_group)
    return ParseError::kBadBody;
  a->entries.resize(count);
  const uint8_t* q = b + kAnnounceFixedBytes;
  for (auto& e : a->entries) {
    e.group_id = load64(q);
    e.size = load32(q + 8);
    e.target = load32(q + 12);
    if (e.target > e.size) return ParseError::kBadBody;
    q += kAnnounceEntryBytes;
  }
  return ParseError::kOk;
}

static ParseError parse_list_header(const uint8_t* b, size_t len, size_t entry, uint32_t* job, uint16_t* count) {
  if (len < kListFixedBytes) return ParseError::kBadBody;
  *job = load32(b);
  *count = load16(b + 4);
  if (load16(b + 6) != 0) return ParseError::kBadBody;
  if (*count == 0 || len != kListFixedBytes + size_t{*count} * entry) return ParseError::kBadBody;
  return ParseError::kOk;
}

ParseError parse_update(const uint8_t* b, size_t len, Update* u) {
  uint16_t count;
  if (auto e = parse_list_header(b, len, kUpdateEntryBytes, &u->job, &count); e != ParseError::kOk) return e;
  u->entries.resize(count);
  const uint8_t* q = b + kListFixedBytes;
  for (auto& e : u->entries) {
    e.group_index = load32(q);
    e.target = load32(q + 4);
    q += kUpdateEntryBytes;
  }
  return ParseError::kOk;
}

ParseError parse_abandon(const uint8_t* b, size_t len, Abandon* a) {
  uint16_t count;
  if (auto e = parse_list_header(b, len, 4, &a->job, &count); e != ParseError::kOk) return e;
  a->msgs.resize(count);
  for (uint16_t i = 0; i < count; ++i) a->msgs[i] = load32(b + kListFixedBytes + 4 * size_t{i});
  return ParseError::kOk;
}

ParseError parse_done(const uint8_t* b, size_t len, Done* d) {
  if (len != kDoneFixedBytes && len < kDoneFixedBytes + 8) return ParseError::kBadBody;
  d->job = load32(b);
  d->status = static_cast<int32_t>(load32(b + 4));
  d->delivered = load32(b + 8);
  d->lost = load32(b + 12);
  d->attempt = load32(b + 16);
  d->group_delivered.clear();
  if (len == kDoneFixedBytes) return ParseError::kOk;
  const uint32_t n = load32(b + kDoneFixedBytes);
  if (n == 0 || len != kDoneFixedBytes + 4 + size_t{n} * 4) return ParseError::kBadBody;
  d->group_delivered.resize(n);
  for (uint32_t i = 0; i < n; ++i) d->group_delivered[i] = load32(b + kDoneFixedBytes + 4 + 4 * size_t{i});
  return ParseError::kOk;
}

ParseError parse_close(const uint8_t* b, size_t len, int32_t* code) {
  if (len != 4) return ParseError::kBadBody;
  *code = static_cast<int32_t>(load32(b));
  return ParseError::kOk;
}

ParseError parse_cancel(const uint8_t* b, size_t len, uint32_t* job) {
  if (len != 4) return ParseError::kBadBody;
  *job = load32(b);
  return ParseError::kOk;
}

}  // namespace netapprox::atp::wire
