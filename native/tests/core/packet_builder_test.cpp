// Packet building (native/src/core/packet_builder.*) on its own: every packet the engine builds parses back with
// the wire parsers (native/src/core/wire.*) to the values it was built from, its tag verifies with the session key
// over what it must cover, and the per-frame counts keep every control frame within one datagram.
#include "core/packet_builder.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/send_job.hpp"

using namespace netapprox::atp;
using wire::PacketType;
using wire::ParseError;

namespace {

constexpr SessionId kSid = 0x5E55'1011'0000'0042ULL;
constexpr uint32_t kDatagram = 1472;

struct Key {
  crypto::SessionKey k;
  Key() {
    crypto::init();
    uint8_t raw[kKeyBytes];
    for (size_t i = 0; i < kKeyBytes; ++i) raw[i] = static_cast<uint8_t>(0x30 + i);
    crypto::prepare(&k, raw);
  }
};

// Parses a sealed datagram's header and verifies its tag over `covered` bytes; returns the body.
const uint8_t* open(const Key& key, const std::vector<uint8_t>& d, size_t len, wire::Header* h,
                    bool* verified = nullptr) {
  EXPECT_EQ(wire::parse_header(d.data(), len, h), ParseError::kOk);
  const bool header_only = (h->flags & wire::kFlagHeaderOnlyAuth) != 0;
  const size_t covered = wire::kHeaderBytes + (header_only ? wire::kDataHeaderBytes : h->body_len);
  const bool ok = crypto::verify(key.k, h->from_initiator, h->packet_number, d.data(), covered,
                                 d.data() + wire::kHeaderBytes + h->body_len);
  if (verified) *verified = ok;
  return d.data() + wire::kHeaderBytes;
}

}  // namespace

TEST(PacketBuilderTest, HeaderFlagsSayWhatThisEndpointAndItsPeerCan) {
  EXPECT_EQ(packet::header_flags(false, true, false, false), 0) << "AES-GCM only when this endpoint uses it";
  EXPECT_EQ(packet::header_flags(true, false, false, false), wire::kFlagAesCapable);
  EXPECT_EQ(packet::header_flags(true, true, false, false), wire::kFlagAesCapable | wire::kFlagAesGcm);
  EXPECT_EQ(packet::header_flags(false, false, true, true), wire::kFlagHeaderOnlyAuth | wire::kFlagBundles);
}

TEST(PacketBuilderTest, SealedPacketParsesAndItsTagCoversHeaderAndBody) {
  Key key;
  std::vector<uint8_t> d(kDatagram);
  const uint8_t body[3] = {1, 2, 3};
  std::memcpy(d.data() + wire::kHeaderBytes, body, 3);
  const size_t len = packet::seal(d.data(), PacketType::kPing, key.k, true, kSid, 77, wire::kFlagBundles, 3);
  EXPECT_EQ(len, wire::kHeaderBytes + 3 + wire::kTagBytes);
  wire::Header h;
  bool ok = false;
  open(key, d, len, &h, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(h.type, PacketType::kPing);
  EXPECT_TRUE(h.from_initiator);
  EXPECT_EQ(h.session, kSid);
  EXPECT_EQ(h.packet_number, 77u);
  EXPECT_EQ(h.body_len, 3);
  EXPECT_EQ(h.flags & wire::kFlagBundles, wire::kFlagBundles);
  d[wire::kHeaderBytes + 2] ^= 1;  // a body byte
  open(key, d, len, &h, &ok);
  EXPECT_FALSE(ok) << "the tag covers the body";
}

TEST(PacketBuilderTest, HeaderOnlyTagCoversTheDataHeaderButNotThePayload) {
  Key key;
  std::vector<uint8_t> d(kDatagram);
  SegmentToSend seg{};
  std::vector<uint8_t> payload(100, 0xAB);
  seg.msg = 4;
  seg.msg_len = 100;
  seg.seg_size = 1000;
  seg.payload = payload.data();
  seg.len = 100;
  const size_t body = packet::write_data(d.data() + wire::kHeaderBytes, kDatagram - wire::kOverheadBytes, 9, seg);
  const size_t len = packet::seal(d.data(), PacketType::kData, key.k, false, kSid, 5, wire::kFlagHeaderOnlyAuth, body);
  wire::Header h;
  bool ok = false;
  d[wire::kHeaderBytes + wire::kDataHeaderBytes + 50] ^= 0xFF;  // a payload byte
  open(key, d, len, &h, &ok);
  EXPECT_TRUE(ok) << "payload_auth off: the payload is not covered";
  d[wire::kHeaderBytes + 4] ^= 0xFF;  // the message id, in the data header
  open(key, d, len, &h, &ok);
  EXPECT_FALSE(ok) << "the data header is covered";
}

TEST(PacketBuilderTest, DataRoundTrip) {
  std::vector<uint8_t> body(kDatagram);
  std::vector<uint8_t> payload(packet::segment_room(kDatagram));
  std::iota(payload.begin(), payload.end(), uint8_t{0});
  SegmentToSend seg{};
  seg.msg = 123;
  seg.msg_len = 50'000;
  seg.offset = 2 * packet::segment_room(kDatagram);
  seg.seg_size = static_cast<uint16_t>(packet::segment_room(kDatagram));
  seg.payload = payload.data();
  seg.len = static_cast<uint32_t>(payload.size());
  const size_t n = packet::write_data(body.data(), kDatagram - wire::kOverheadBytes, 0xC0FFEE, seg);
  EXPECT_EQ(n, kDatagram - wire::kOverheadBytes) << "a full segment fills the datagram exactly";
  wire::Data d;
  ASSERT_EQ(wire::parse_data(body.data(), n, &d), ParseError::kOk);
  EXPECT_EQ(d.job, 0xC0FFEEu);
  EXPECT_EQ(d.msg, 123u);
  EXPECT_EQ(d.msg_len, 50'000u);
  EXPECT_EQ(d.offset, seg.offset);
  EXPECT_EQ(d.seg_size, seg.seg_size);
  ASSERT_EQ(d.payload_len, payload.size());
  EXPECT_EQ(std::memcmp(d.payload, payload.data(), payload.size()), 0);
}

TEST(PacketBuilderTest, AckRoundTripWithGapsDelayAndWindow) {
  std::vector<uint8_t> body(kDatagram);
  const std::vector<wire::AckRange> ranges = {{90, 100}, {50, 80}, {10, 10}};  // descending, disjoint
  const size_t n = packet::write_ack(body.data(), kDatagram - wire::kOverheadBytes, 100, 1'234'567, 1ULL << 40, ranges);
  EXPECT_EQ(n, wire::kAckFixedBytes + 8 * (ranges.size() - 1));
  wire::Ack a;
  ASSERT_EQ(wire::parse_ack(body.data(), n, &a), ParseError::kOk);
  EXPECT_EQ(a.largest, 100u);
  EXPECT_EQ(a.ack_delay_us, 1234u) << "microseconds";
  EXPECT_EQ(a.window, 1ULL << 40);
  ASSERT_EQ(a.ranges.size(), ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(a.ranges[i].low, ranges[i].low) << i;
    EXPECT_EQ(a.ranges[i].high, ranges[i].high) << i;
  }
  const size_t m = packet::write_ack(body.data(), kDatagram, 5, kNever - 1, 0, {{0, 5}});
  ASSERT_EQ(wire::parse_ack(body.data(), m, &a), ParseError::kOk);
  EXPECT_EQ(a.ack_delay_us, UINT32_MAX) << "a delay beyond 32 bits of microseconds saturates";
}

TEST(PacketBuilderTest, AckDelayIsTheTimeSinceTheFirstUnacknowledgedPacket) {
  constexpr TimeNs kDelay = 200'000;
  EXPECT_EQ(packet::ack_delay(1'000'000, kNever, kDelay), 0u) << "no deadline: acknowledged at once";
  // The deadline was set at 900'000 + kDelay: the first unacknowledged packet came at 900'000.
  EXPECT_EQ(packet::ack_delay(1'000'000, 900'000 + kDelay, kDelay), 100'000u);
  EXPECT_EQ(packet::ack_delay(900'000, 900'000 + kDelay, kDelay), 0u);
}

TEST(PacketBuilderTest, AckWithTheMostRangesFitsItsDatagram) {
  for (uint32_t dg : {uint32_t(wire::kMinDatagram), kDatagram, uint32_t(wire::kMaxDatagram)}) {
    const size_t k = packet::max_ack_ranges(dg);
    ASSERT_GE(k, 1u);
    EXPECT_LE(k, wire::kMaxAckRanges);
    EXPECT_LE(wire::kAckFixedBytes + 8 * (k - 1) + wire::kOverheadBytes, dg) << dg;
    std::vector<wire::AckRange> ranges;
    for (size_t i = 0; i < k; ++i) ranges.push_back({uint64_t(10 * (k - i)), uint64_t(10 * (k - i) + 3)});
    std::vector<uint8_t> body(dg - wire::kOverheadBytes);
    const size_t n = packet::write_ack(body.data(), body.size(), ranges[0].high, 0, 0, ranges);
    wire::Ack a;
    ASSERT_EQ(wire::parse_ack(body.data(), n, &a), ParseError::kOk) << dg;
    EXPECT_EQ(a.ranges.size(), k);
  }
  EXPECT_EQ(packet::max_ack_ranges(wire::kMaxDatagram), wire::kMaxAckRanges) << "capped by the wire format";
}

TEST(PacketBuilderTest, BundleFillsItsRoomAndParsesBackEntryByEntry) {
  std::vector<uint8_t> body(kDatagram);
  packet::BundleWriter w(body.data(), kDatagram, 31);
  EXPECT_EQ(w.fits(), packet::max_bundled_message(kDatagram)) << "empty: the largest bundled message";
  EXPECT_LE(2 * (packet::max_bundled_message(kDatagram) + wire::kBundleEntryBytes), packet::bundle_room(kDatagram))
      << "at least two of the largest fit";
  std::vector<std::vector<uint8_t>> msgs;
  for (MessageId m = 0; w.has_room(); ++m) {
    const uint32_t len = std::min<uint32_t>(w.fits(), 100 + 37 * m);
    ASSERT_GT(len, 0u);
    msgs.emplace_back(len, static_cast<uint8_t>(m));
    w.add(m, msgs.back().data(), static_cast<uint16_t>(len));
  }
  ASSERT_GE(msgs.size(), 2u);
  EXPECT_EQ(w.count(), msgs.size());
  const size_t n = w.finish();
  EXPECT_LE(n + wire::kOverheadBytes, kDatagram);
  EXPECT_GT(n + wire::kOverheadBytes + wire::kBundleEntryBytes + 1, kDatagram) << "no room for another entry";
  wire::Bundle b;
  ASSERT_EQ(wire::parse_bundle(body.data(), n, &b), ParseError::kOk);
  EXPECT_EQ(b.job, 31u);
  ASSERT_EQ(b.entries.size(), msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    EXPECT_EQ(b.entries[i].msg, i);
    ASSERT_EQ(b.entries[i].len, msgs[i].size());
    EXPECT_EQ(std::memcmp(b.entries[i].payload, msgs[i].data(), msgs[i].size()), 0);
  }
}

TEST(PacketBuilderTest, AnnounceChunksCarryTheGroupTable) {
  const size_t per = packet::announce_entries_per_frame(kDatagram);
  EXPECT_LE(wire::kAnnounceFixedBytes + per * wire::kAnnounceEntryBytes + wire::kOverheadBytes, kDatagram);
  EXPECT_GT(wire::kAnnounceFixedBytes + (per + 1) * wire::kAnnounceEntryBytes + wire::kOverheadBytes, kDatagram);
  std::vector<wire::AnnounceEntry> table;
  for (uint32_t g = 0; g < per; ++g) table.push_back({1000ULL + g, 10 + g, 5 + g});
  const auto body = packet::announce_body(8, 12345, 3 * uint32_t(per), uint32_t(per), true, table.data(), per);
  wire::Announce a;
  ASSERT_EQ(wire::parse_announce(body.data(), body.size(), &a), ParseError::kOk);
  EXPECT_EQ(a.job, 8u);
  EXPECT_EQ(a.n_messages, 12345u);
  EXPECT_EQ(a.n_groups, 3 * per);
  EXPECT_EQ(a.first_group, per);
  EXPECT_EQ(a.flags, wire::kAnnounceFlagMrdf);
  ASSERT_EQ(a.entries.size(), per);
  EXPECT_EQ(a.entries.back().group_id, table.back().group_id);
  EXPECT_EQ(a.entries.back().size, table.back().size);
  EXPECT_EQ(a.entries.back().target, table.back().target);
  const auto plain = packet::announce_body(8, 10, 1, 0, false, table.data(), 1);
  ASSERT_EQ(wire::parse_announce(plain.data(), plain.size(), &a), ParseError::kOk);
  EXPECT_EQ(a.flags, 0);
}

TEST(PacketBuilderTest, UpdateAndAbandonFramesFitAndParse) {
  const size_t per_update = packet::updates_per_frame(kDatagram);
  EXPECT_LE(wire::kListFixedBytes + per_update * wire::kUpdateEntryBytes + wire::kOverheadBytes, kDatagram);
  std::vector<wire::UpdateEntry> entries;
  for (uint32_t i = 0; i < per_update; ++i) entries.push_back({i, 3 * i});
  const auto ub = packet::update_body(4, entries.data(), entries.size());
  wire::Update u;
  ASSERT_EQ(wire::parse_update(ub.data(), ub.size(), &u), ParseError::kOk);
  EXPECT_EQ(u.job, 4u);
  ASSERT_EQ(u.entries.size(), per_update);
  EXPECT_EQ(u.entries.back().group_index, per_update - 1);
  EXPECT_EQ(u.entries.back().target, 3 * (per_update - 1));

  const size_t per_abandon = packet::abandons_per_frame(kDatagram);
  EXPECT_LE(wire::kListFixedBytes + 4 * per_abandon + wire::kOverheadBytes, kDatagram);
  EXPECT_GT(wire::kListFixedBytes + 4 * (per_abandon + 1) + wire::kOverheadBytes, kDatagram);
  std::vector<MessageId> ids(per_abandon);
  std::iota(ids.begin(), ids.end(), MessageId{500});
  const auto ab = packet::abandon_body(6, ids.data(), ids.size());
  wire::Abandon a;
  ASSERT_EQ(wire::parse_abandon(ab.data(), ab.size(), &a), ParseError::kOk);
  EXPECT_EQ(a.job, 6u);
  EXPECT_EQ(a.msgs, ids);
}

TEST(PacketBuilderTest, DoneCarriesStatusCountsAttemptAndGroupCounts) {
  auto body = packet::done_body(17, Status::kLimitExceeded, 0, 0, {});
  EXPECT_EQ(body.size(), wire::kDoneFixedBytes);
  wire::Done d;
  ASSERT_EQ(wire::parse_done(body.data(), body.size(), &d), ParseError::kOk);
  EXPECT_EQ(d.job, 17u);
  EXPECT_EQ(d.status, static_cast<int32_t>(Status::kLimitExceeded));
  EXPECT_EQ(d.attempt, 0u) << "set at each transmission";
  EXPECT_TRUE(d.group_delivered.empty());

  const std::vector<uint32_t> groups = {5, 0, 12};
  body = packet::done_body(18, Status::kOk, 17, 3, groups);
  packet::set_done_attempt(&body, 4);
  ASSERT_EQ(wire::parse_done(body.data(), body.size(), &d), ParseError::kOk);
  EXPECT_EQ(d.job, 18u);
  EXPECT_EQ(d.status, 0);
  EXPECT_EQ(d.delivered, 17u);
  EXPECT_EQ(d.lost, 3u);
  EXPECT_EQ(d.attempt, 4u);
  EXPECT_EQ(d.group_delivered, groups);

  const size_t room = packet::done_groups_room(kDatagram);
  EXPECT_LE(wire::kDoneFixedBytes + 4 + 4 * room + wire::kOverheadBytes, kDatagram)
      << "the most group counts a DONE carries fit one datagram";
}

TEST(PacketBuilderTest, CancelAndSealedClose) {
  const auto cb = packet::cancel_body(0xFEEDu);
  uint32_t job = 0;
  ASSERT_EQ(wire::parse_cancel(cb.data(), cb.size(), &job), ParseError::kOk);
  EXPECT_EQ(job, 0xFEEDu);

  Key key;
  const auto close = packet::close_packet(Status::kProtocolError, key.k, false, kSid, 9, 0);
  EXPECT_EQ(close.size(), wire::kHeaderBytes + 4 + wire::kTagBytes);
  wire::Header h;
  bool ok = false;
  const uint8_t* body = open(key, close, close.size(), &h, &ok);
  EXPECT_TRUE(ok);
  EXPECT_EQ(h.type, PacketType::kClose);
  EXPECT_FALSE(h.from_initiator);
  EXPECT_EQ(h.packet_number, 9u);
  int32_t code = 0;
  ASSERT_EQ(wire::parse_close(body, h.body_len, &code), ParseError::kOk);
  EXPECT_EQ(code, static_cast<int32_t>(Status::kProtocolError));
}
