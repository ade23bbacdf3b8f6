// Wire format (native/src/core/wire.*): round trips of every packet type, rejection of every malformed field, the
// replay window, and the engine's handling of hostile input (garbage, bit flips, wrong keys, unknown sessions,
// replays), which must never crash and must be counted in EngineStats.
// Also generates the fuzzer's seed corpus (FuzzCorpus.*; NETAPPROX_WRITE_FUZZ_CORPUS=<dir> writes the files).
#include "core/wire.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "../../fuzz/fuzz_input.hpp"
#include "core/crypto.hpp"
#include "core/engine.hpp"
#include "core/session.hpp"

using namespace netapprox::atp;
using wire::PacketType;
using wire::ParseError;

namespace {

using Bytes = std::vector<uint8_t>;

// Big-endian body builder (independent of wire::Writer, so the tests do not just check the code against itself).
struct B {
  Bytes v;
  B& u8(uint8_t x) {
    v.push_back(x);
    return *this;
  }
  B& u16(uint16_t x) {
    netapprox::fuzz::put_be(v, x, 2);
    return *this;
  }
  B& u32(uint32_t x) {
    netapprox::fuzz::put_be(v, x, 4);
    return *this;
  }
  B& u64(uint64_t x) {
    netapprox::fuzz::put_be(v, x, 8);
    return *this;
  }
  B& bytes(size_t n, uint8_t fill) {
    v.insert(v.end(), n, fill);
    return *this;
  }
  operator Bytes() const { return v; }
};

constexpr SessionId kSid = 0xA11CE5EED0000001ULL;
constexpr PeerId kPeer = 9;
constexpr TimeNs kT0 = 1'000'000'000;

const uint8_t* test_key() {
  static uint8_t k[kKeyBytes];
  for (size_t i = 0; i < kKeyBytes; ++i) k[i] = static_cast<uint8_t>(0xC0 + i);
  return k;
}
const uint8_t* other_key() {
  static uint8_t k[kKeyBytes];
  for (size_t i = 0; i < kKeyBytes; ++i) k[i] = static_cast<uint8_t>(0xC0 + i);
  k[31] ^= 0x80;
  return k;
}

// A complete sealed datagram: header + body + tag.
// `flags` may add kFlagAesGcm (tag by AES-256-GCM) and kFlagHeaderOnlyAuth (tag over header + data header only).
Bytes seal_packet(PacketType type, const Bytes& body, uint64_t pn, bool from_initiator = true, SessionId sid = kSid,
                  const uint8_t* key = test_key(), uint8_t flags = 0) {
  Bytes p(wire::kOverheadBytes + body.size());
  wire::write_header(p.data(), type, from_initiator, sid, pn, flags);
  wire::set_body_len(p.data(), static_cast<uint16_t>(body.size()));
  if (!body.empty()) std::memcpy(p.data() + wire::kHeaderBytes, body.data(), body.size());
  const size_t covered =
      wire::kHeaderBytes + ((flags & wire::kFlagHeaderOnlyAuth) ? wire::kDataHeaderBytes : body.size());
  crypto::seal(key, from_initiator, pn, p.data(), covered, p.data() + wire::kHeaderBytes + body.size());
  return p;
}

// Valid bodies of every type.
Bytes data_body(uint32_t job, uint32_t msg, uint32_t msg_len, uint32_t offset, uint16_t seg, uint8_t fill = 0xAB) {
  const uint32_t n = std::min<uint32_t>(seg, msg_len - offset);
  return B().u32(job).u32(msg).u32(msg_len).u32(offset).u16(seg).u16(0).bytes(n, fill);
}
// Ack of the single range [largest - first, largest].
Bytes ack_body(uint64_t largest, uint32_t first, uint64_t window = 1 << 20) {
  return B().u64(largest).u32(0).u16(1).u16(0).u64(window).u32(first);
}
struct G {
  uint64_t id;
  uint32_t size, target;
};
Bytes announce_body(uint32_t job, uint32_t n, uint32_t n_groups, uint32_t first, const std::vector<G>& gs,
                    uint16_t flags = wire::kAnnounceFlagMrdf) {
  B b;
  b.u32(job).u32(n).u32(n_groups).u32(first).u16(static_cast<uint16_t>(gs.size())).u16(flags);
  for (const auto& g : gs) b.u64(g.id).u32(g.size).u32(g.target);
  return b;
}
Bytes update_body(uint32_t job, const std::vector<std::pair<uint32_t, uint32_t>>& e) {
  B b;
  b.u32(job).u16(static_cast<uint16_t>(e.size())).u16(0);
  for (auto [g, t] : e) b.u32(g).u32(t);
  return b;
}
Bytes abandon_body(uint32_t job, const std::vector<uint32_t>& msgs) {
  B b;
  b.u32(job).u16(static_cast<uint16_t>(msgs.size())).u16(0);
  for (uint32_t m : msgs) b.u32(m);
  return b;
}
Bytes done_body(uint32_t job, int32_t status, uint32_t delivered, uint32_t lost, uint32_t attempt = 1) {
  return B().u32(job).u32(static_cast<uint32_t>(status)).u32(delivered).u32(lost).u32(attempt);
}

ParseError header_of(const Bytes& p, wire::Header* h = nullptr) {
  wire::Header tmp;
  return wire::parse_header(p.data(), p.size(), h ? h : &tmp);
}

// ============================================================================================ Writer

TEST(WireTest, WriterIsBoundedAndBigEndian) {
  uint8_t buf[15];
  wire::Writer w(buf, sizeof buf);
  EXPECT_TRUE(w.u8(0x01));
  EXPECT_TRUE(w.u16(0x0203));
  EXPECT_TRUE(w.u32(0x04050607));
  const uint8_t nine[9] = {};
  EXPECT_FALSE(w.bytes(nine, 9));  // 7 + 9 > 15: refused, nothing written
  EXPECT_FALSE(w.bytes(nine, SIZE_MAX));
  EXPECT_EQ(w.size(), 7u);
  EXPECT_EQ(w.room(), 8u);
  EXPECT_TRUE(w.u64(0x08090A0B0C0D0E0FULL));
  EXPECT_EQ(w.room(), 0u);
  EXPECT_FALSE(w.u8(0));
  EXPECT_FALSE(w.bytes(buf, 1));
  EXPECT_TRUE(w.bytes(nullptr, 0));
  for (int i = 0; i < 15; ++i) EXPECT_EQ(buf[i], i + 1);
  EXPECT_EQ(wire::load16(buf + 1), 0x0203);
  EXPECT_EQ(wire::load32(buf + 3), 0x04050607u);
  EXPECT_EQ(wire::load64(buf + 7), 0x08090A0B0C0D0E0FULL);
}

// ============================================================================================ header

TEST(WireTest, HeaderRoundTripsForEveryType) {
  for (uint8_t t = 1; t <= 9; ++t) {
    for (bool init : {false, true}) {
      const Bytes body(t * 3, 0x5A);
      const Bytes p = seal_packet(static_cast<PacketType>(t), body, 0x0102030405060708ULL + t, init);
      wire::Header h;
      ASSERT_EQ(header_of(p, &h), ParseError::kOk);
      EXPECT_EQ(static_cast<uint8_t>(h.type), t);
      EXPECT_EQ(h.from_initiator, init);
      EXPECT_EQ(h.body_len, body.size());
      EXPECT_EQ(h.session, kSid);
      EXPECT_EQ(h.packet_number, 0x0102030405060708ULL + t);
      // Layout as documented in wire.hpp.
      EXPECT_EQ(p[0], 0x4E);
      EXPECT_EQ(p[1], 0x41);
      EXPECT_EQ(p[2], wire::kVersion);
      EXPECT_EQ(p[3], t);
      EXPECT_EQ(p[4], init ? 1 : 0);
      EXPECT_EQ(p[5], 0);
      EXPECT_EQ(wire::load16(&p[6]), body.size());
      EXPECT_EQ(wire::load64(&p[8]), kSid);
      EXPECT_TRUE(crypto::verify(test_key(), init, h.packet_number, p.data(), wire::kHeaderBytes + body.size(),
                                 p.data() + wire::kHeaderBytes + body.size()));
    }
  }
  // The largest body a datagram can carry.
  const Bytes big = seal_packet(PacketType::kData, Bytes(wire::kMaxDatagram - wire::kOverheadBytes, 1), 1);
  EXPECT_EQ(big.size(), wire::kMaxDatagram);
  EXPECT_EQ(header_of(big), ParseError::kOk);
}

TEST(WireTest, HeaderRejectsEveryMalformedField) {
  const Bytes good = seal_packet(PacketType::kPing, {}, 5);
  ASSERT_EQ(header_of(good), ParseError::kOk);
  auto with = [&](size_t at, uint8_t v) {
    Bytes p = good;
    p[at] = v;
    return header_of(p);
  };
  // too short: anything below header + tag, including the empty datagram
  for (size_t n = 0; n < wire::kOverheadBytes; ++n) {
    wire::Header h;
    EXPECT_EQ(wire::parse_header(good.data(), n, &h), ParseError::kTooShort) << n;
  }
  wire::Header h;
  EXPECT_EQ(wire::parse_header(nullptr, 0, &h), ParseError::kTooShort);
  // magic
  EXPECT_EQ(with(0, 0x4F), ParseError::kBadMagic);
  EXPECT_EQ(with(1, 0x40), ParseError::kBadMagic);
  // version
  EXPECT_EQ(with(2, 0), ParseError::kBadVersion);
  EXPECT_EQ(with(2, 1), ParseError::kBadVersion);  // version 1 DONE frames had no attempt field
  EXPECT_EQ(with(2, 3), ParseError::kBadVersion);
  EXPECT_EQ(with(2, 0xFF), ParseError::kBadVersion);
  // type: 0 and everything above kDataBundle (10)
  EXPECT_EQ(with(3, 0), ParseError::kBadType);
  EXPECT_EQ(with(3, 11), ParseError::kBadType);
  EXPECT_EQ(with(3, 0xFF), ParseError::kBadType);
  // flags: bit 0 initiator, bit 1 AES-GCM tag, bit 2 header-only authentication (DATA only), bit 3 AES-capable
  // sender, bit 4 accepts DATA bundles; others undefined
  EXPECT_EQ(with(4, wire::kFlagInitiator), ParseError::kOk);
  EXPECT_EQ(with(4, wire::kFlagAesGcm), ParseError::kOk);
  EXPECT_EQ(with(4, wire::kFlagAesCapable), ParseError::kOk);
  EXPECT_EQ(with(4, wire::kFlagBundles), ParseError::kOk);
  EXPECT_EQ(with(4, wire::kFlagHeaderOnlyAuth), ParseError::kBadFlags);  // not on a PING
  for (int bit = 5; bit < 8; ++bit) EXPECT_EQ(with(4, static_cast<uint8_t>(1 << bit)), ParseError::kBadFlags) << bit;
  EXPECT_EQ(with(4, 0xFF), ParseError::kBadFlags);
  EXPECT_EQ(with(4, static_cast<uint8_t>(wire::kKnownFlags | 0x20)), ParseError::kBadFlags);
  for (uint8_t t = 2; t <= 10; ++t) {  // header-only authentication exists for DATA only
    Bytes p = seal_packet(static_cast<PacketType>(t), {}, 5);
    p[4] |= wire::kFlagHeaderOnlyAuth;
    EXPECT_EQ(header_of(p), ParseError::kBadFlags) << int(t);
  }
  {
    Bytes p = seal_packet(PacketType::kData, data_body(1, 0, 10, 0, 10), 5);
    p[4] |= wire::kFlagHeaderOnlyAuth | wire::kFlagAesGcm;
    wire::Header hd;
    ASSERT_EQ(header_of(p, &hd), ParseError::kOk);
    EXPECT_EQ(hd.flags, wire::kFlagInitiator | wire::kFlagHeaderOnlyAuth | wire::kFlagAesGcm);
    EXPECT_TRUE(hd.from_initiator);
  }
  // reserved byte
  EXPECT_EQ(with(5, 1), ParseError::kBadFlags);
  EXPECT_EQ(with(5, 0x80), ParseError::kBadFlags);
  // body length must match the datagram exactly: one more, one less, a trailing byte, a missing byte
  EXPECT_EQ(with(7, 1), ParseError::kBadLength);
  EXPECT_EQ(with(6, 0xFF), ParseError::kBadLength);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(header_of(longer), ParseError::kBadLength);
  const Bytes data = seal_packet(PacketType::kData, data_body(1, 0, 10, 0, 10), 5);
  Bytes shorter(data.begin(), data.end() - 1);
  EXPECT_EQ(header_of(shorter), ParseError::kBadLength);
  // a length that only matches if the tag is left out
  Bytes no_tag = data;
  wire::set_body_len(no_tag.data(), static_cast<uint16_t>(data.size() - wire::kHeaderBytes));
  EXPECT_EQ(header_of(no_tag), ParseError::kBadLength);
}

// ============================================================================================ data

TEST(WireTest, DataRoundTrip) {
  // middle segment of a multi-segment message, and the short last one
  for (auto [msg_len, offset, seg] :
       std::vector<std::tuple<uint32_t, uint32_t, uint16_t>>{{1, 0, 1},
                                                             {1000, 0, 1412},
                                                             {5000, 1412, 1412},
                                                             {5000, 4236, 1412},
                                                             {65535, 0, 65535},
                                                             {64u << 20, 67108000u, 1000}}) {
    uint8_t buf[70000];
    wire::Writer w(buf, sizeof buf);
    const uint32_t n = std::min<uint32_t>(seg, msg_len - offset);
    Bytes payload(n);
    for (uint32_t i = 0; i < n; ++i) payload[i] = static_cast<uint8_t>(i * 13 + offset);
    w.u32(7);
    w.u32(42);
    w.u32(msg_len);
    w.u32(offset);
    w.u16(seg);
    w.u16(0);
    w.bytes(payload.data(), payload.size());
    wire::Data d;
    ASSERT_EQ(wire::parse_data(buf, w.size(), &d), ParseError::kOk) << msg_len << " " << offset;
    EXPECT_EQ(d.job, 7u);
    EXPECT_EQ(d.msg, 42u);
    EXPECT_EQ(d.msg_len, msg_len);
    EXPECT_EQ(d.offset, offset);
    EXPECT_EQ(d.seg_size, seg);
    EXPECT_EQ(d.payload, buf + wire::kDataHeaderBytes);
    ASSERT_EQ(d.payload_len, n);
    EXPECT_EQ(0, std::memcmp(d.payload, payload.data(), n));
  }
}

TEST(WireTest, DataRejectsMalformedBodies) {
  auto parse = [](const Bytes& b) {
    wire::Data d;
    return wire::parse_data(b.data(), b.size(), &d);
  };
  ASSERT_EQ(parse(data_body(1, 2, 3000, 1000, 1000)), ParseError::kOk);
  // too short: no payload at all (a data packet carries at least one byte), or not even a header
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(0).u16(1000).u16(0)), ParseError::kBadBody);
  EXPECT_EQ(parse(Bytes(19, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(Bytes()), ParseError::kBadBody);
  // reserved field
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(100).u32(0).u16(100).u16(1).bytes(100, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(100).u32(0).u16(100).u16(0x8000).bytes(100, 0)), ParseError::kBadBody);
  // seg size 0, message length 0
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(100).u32(0).u16(0).u16(0).bytes(100, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(0).u32(0).u16(100).u16(0).bytes(1, 0)), ParseError::kBadBody);
  // offset not a multiple of the segment size
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(999).u16(1000).u16(0).bytes(1000, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(1).u16(1000).u16(0).bytes(1000, 0)), ParseError::kBadBody);
  // offset at or beyond the end of the message
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(3000).u16(1000).u16(0).bytes(1000, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(0xFFFFFC18u).u16(1000).u16(0).bytes(1000, 0)), ParseError::kBadBody);
  // payload length: a middle segment must be exactly seg_size, the last one exactly the rest
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(1000).u16(1000).u16(0).bytes(999, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(3000).u32(1000).u16(1000).u16(0).bytes(1001, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(2500).u32(2000).u16(1000).u16(0).bytes(1000, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(2500).u32(2000).u16(1000).u16(0).bytes(499, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(2500).u32(2000).u16(1000).u16(0).bytes(500, 0)), ParseError::kOk);
  // a single-segment message whose payload is longer than the message
  EXPECT_EQ(parse(B().u32(1).u32(2).u32(10).u32(0).u16(1000).u16(0).bytes(11, 0)), ParseError::kBadBody);
}

// ============================================================================================ bundle

TEST(WireTest, BundleRoundTrip) {
  Bytes body =
      B().u32(9).u16(3).u16(0).u32(4).u16(2).bytes(2, 0xA1).u32(17).u16(1).bytes(1, 0xB2).u32(5).u16(300).bytes(300,
                                                                                                                0xC3);
  wire::Bundle b;
  ASSERT_EQ(wire::parse_bundle(body.data(), body.size(), &b), ParseError::kOk);
  EXPECT_EQ(b.job, 9u);
  ASSERT_EQ(b.entries.size(), 3u);
  EXPECT_EQ(b.entries[0].msg, 4u);
  EXPECT_EQ(b.entries[0].len, 2u);
  EXPECT_EQ(b.entries[0].payload, body.data() + 8 + 6);
  EXPECT_EQ(b.entries[1].msg, 17u);
  EXPECT_EQ(b.entries[1].payload[0], 0xB2);
  EXPECT_EQ(b.entries[2].msg, 5u);
  EXPECT_EQ(b.entries[2].len, 300u);
  EXPECT_EQ(b.entries[2].payload + 300, body.data() + body.size());
}

TEST(WireTest, BundleRejectsMalformedBodies) {
  auto parse = [](const Bytes& b) {
    wire::Bundle d;
    return wire::parse_bundle(b.data(), b.size(), &d);
  };
  ASSERT_EQ(parse(B().u32(1).u16(1).u16(0).u32(0).u16(1).bytes(1, 7)), ParseError::kOk);
  EXPECT_EQ(parse(Bytes()), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u16(0).u16(0)), ParseError::kBadBody);                            // no message
  EXPECT_EQ(parse(B().u32(1).u16(0).u16(0).u32(0).u16(1).bytes(1, 7)), ParseError::kBadBody);  // count 0
  EXPECT_EQ(parse(B().u32(1).u16(1).u16(1).u32(0).u16(1).bytes(1, 7)), ParseError::kBadBody);  // reserved
  EXPECT_EQ(parse(B().u32(1).u16(1).u16(0).u32(0).u16(0)), ParseError::kBadBody);              // empty message
  EXPECT_EQ(parse(B().u32(1).u16(1).u16(0).u32(0).u16(2).bytes(1, 7)), ParseError::kBadBody);  // runs past the end
  EXPECT_EQ(parse(B().u32(1).u16(1).u16(0).u32(0).u16(1).bytes(2, 7)), ParseError::kBadBody);  // trailing bytes
  EXPECT_EQ(parse(B().u32(1).u16(2).u16(0).u32(0).u16(1).bytes(1, 7)), ParseError::kBadBody);  // count too big
  EXPECT_EQ(parse(B().u32(1).u16(2).u16(0).u32(0).u16(1).bytes(1, 7).u32(1)), ParseError::kBadBody);
  EXPECT_EQ(parse(B().u32(1).u16(1).u16(0).u32(0).u16(0xFFFF).bytes(100, 7)), ParseError::kBadBody);
}

// ============================================================================================ ack

Bytes encode_ack(uint64_t largest, uint32_t delay, uint64_t window, const std::vector<wire::AckRange>& r) {
  // Same encoding as the engine's build_ack: gap = previous low - this high - 2, len = high - low.
  B b;
  b.u64(largest).u32(delay).u16(static_cast<uint16_t>(r.size())).u16(0).u64(window);
  b.u32(static_cast<uint32_t>(r[0].high - r[0].low));
  for (size_t i = 1; i < r.size(); ++i) {
    b.u32(static_cast<uint32_t>(r[i - 1].low - r[i].high - 2));
    b.u32(static_cast<uint32_t>(r[i].high - r[i].low));
  }
  return b;
}

TEST(WireTest, AckRoundTrip) {
  const std::vector<std::vector<wire::AckRange>> cases = {
      {{0, 0}},
      {{100, 100}},
      {{90, 100}, {80, 88}, {0, 10}},       // gaps of 1 (89) and many
      {{5, 5}, {3, 3}, {1, 1}},             // alternate packets
      {{1ULL << 40, (1ULL << 40) + 4095}},  // large numbers
      {{UINT64_MAX - 10, UINT64_MAX}},
  };
  for (const auto& r : cases) {
    const Bytes b = encode_ack(r[0].high, 1234, 0xFEDCBA9876543210ULL, r);
    wire::Ack a;
    ASSERT_EQ(wire::parse_ack(b.data(), b.size(), &a), ParseError::kOk);
    EXPECT_EQ(a.largest, r[0].high);
    EXPECT_EQ(a.ack_delay_us, 1234u);
    EXPECT_EQ(a.window, 0xFEDCBA9876543210ULL);
    ASSERT_EQ(a.ranges.size(), r.size());
    for (size_t i = 0; i < r.size(); ++i) {
      EXPECT_EQ(a.ranges[i].low, r[i].low);
      EXPECT_EQ(a.ranges[i].high, r[i].high);
    }
  }
  // The maximum number of ranges.
  std::vector<wire::AckRange> many;
  for (uint64_t i = 0; i < wire::kMaxAckRanges; ++i) many.push_back({1000 - 3 * i, 1000 - 3 * i + 1});
  const Bytes b = encode_ack(1001, 0, 0, many);
  wire::Ack a;
  ASSERT_EQ(wire::parse_ack(b.data(), b.size(), &a), ParseError::kOk);
  EXPECT_EQ(a.ranges.size(), wire::kMaxAckRanges);
  EXPECT_EQ(a.ranges.back().low, 1000 - 3 * 63);
}

TEST(WireTest, AckRejectsMalformedBodies) {
  auto parse = [](const Bytes& b) {
    wire::Ack a;
    return wire::parse_ack(b.data(), b.size(), &a);
  };
  auto fixed = [](uint64_t largest, uint16_t n, uint16_t reserved, uint32_t first) {
    return B().u64(largest).u32(0).u16(n).u16(reserved).u64(0).u32(first);
  };
  ASSERT_EQ(parse(fixed(10, 1, 0, 10)), ParseError::kOk);
  // too short
  EXPECT_EQ(parse(Bytes(27, 0)), ParseError::kBadBody);
  EXPECT_EQ(parse(Bytes()), ParseError::kBadBody);
  // reserved
  EXPECT_EQ(parse(fixed(10, 1, 1, 0)), ParseError::kBadBody);
  // range count 0 and above the maximum
  EXPECT_EQ(parse(fixed(10, 0, 0, 0)), ParseError::kBadBody);
  {
    B b = fixed(100000, 65, 0, 0);
    for (int i = 0; i < 64; ++i) b.u32(0).u32(0);
    EXPECT_EQ(parse(b), ParseError::kBadBody);
  }
  // length must match the range count exactly
  EXPECT_EQ(parse(fixed(10, 2, 0, 0)), ParseError::kBadBody);                   // one range missing
  EXPECT_EQ(parse(B(fixed(10, 1, 0, 0)).u32(0).u32(0)), ParseError::kBadBody);  // one range too many
  EXPECT_EQ(parse(B(fixed(10, 2, 0, 0)).u32(0)), ParseError::kBadBody);         // half a range
  // first range reaching below 0
  EXPECT_EQ(parse(fixed(10, 1, 0, 11)), ParseError::kBadBody);
  EXPECT_EQ(parse(fixed(0, 1, 0, 1)), ParseError::kBadBody);
  EXPECT_EQ(parse(fixed(0, 1, 0, 0)), ParseError::kOk);
  // gap underflow: the next range must end at least 2 below the previous low
  // largest 10, first 0 -> low 10; gap g -> next high = 10 - g - 2, valid for g <= 8
  EXPECT_EQ(parse(B(fixed(10, 2, 0, 0)).u32(8).u32(0)), ParseError::kOk);  // range [0, 0]
  EXPECT_EQ(parse(B(fixed(10, 2, 0, 0)).u32(9).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B(fixed(10, 2, 0, 0)).u32(0xFFFFFFFFu).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B(fixed(1, 2, 0, 0)).u32(0).u32(0)), ParseError::kBadBody);  // low 1: no room for a gap
  // range length underflow: low = high - len must not go below 0
  EXPECT_EQ(parse(B(fixed(10, 2, 0, 0)).u32(0).u32(8)), ParseError::kOk);  // [0, 8]
  EXPECT_EQ(parse(B(fixed(10, 2, 0, 0)).u32(0).u32(9)), ParseError::kBadBody);
  // ... also in a later range
  EXPECT_EQ(parse(B(fixed(20, 3, 0, 0)).u32(0).u32(0).u32(14).u32(0)), ParseError::kOk);  // [20] [18] [2]... 18-14-2=2
  EXPECT_EQ(parse(B(fixed(20, 3, 0, 0)).u32(0).u32(0).u32(17).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(parse(B(fixed(20, 3, 0, 0)).u32(0).u32(0).u32(14).u32(3)), ParseError::kBadBody);
}

// ============================================================================================ announce

TEST(WireTest, AnnounceRoundTrip) {
  const std::vector<G> gs = {{0xFFFFFFFFFFFFFFFFULL, 10, 10}, {7, 1000, 0}, {8, 1, 1}};
  for (uint16_t flags : {uint16_t{0}, wire::kAnnounceFlagMrdf}) {
    const Bytes b = announce_body(99, 1011, 5, 2, gs, flags);
    wire::Announce a;
    ASSERT_EQ(wire::parse_announce(b.data(), b.size(), &a), ParseError::kOk);
    EXPECT_EQ(a.job, 99u);
    EXPECT_EQ(a.n_messages, 1011u);
    EXPECT_EQ(a.n_groups, 5u);
    EXPECT_EQ(a.first_group, 2u);
    EXPECT_EQ(a.flags, flags);
    ASSERT_EQ(a.entries.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(a.entries[i].group_id, gs[i].id);
      EXPECT_EQ(a.entries[i].size, gs[i].size);
      EXPECT_EQ(a.entries[i].target, gs[i].target);
    }
  }
}

TEST(WireTest, AnnounceRejectsMalformedBodies) {
  auto parse = [](const Bytes& b) {
    wire::Announce a;
    return wire::parse_announce(b.data(), b.size(), &a);
  };
  const std::vector<G> one = {{1, 10, 5}};
  ASSERT_EQ(parse(announce_body(1, 10, 1, 0, one)), ParseError::kOk);
  EXPECT_EQ(parse(Bytes(19, 0)), ParseError::kBadBody);  // too short
  EXPECT_EQ(parse(Bytes(20, 0)), ParseError::kBadBody);  // count 0 and n_groups 0
  // unknown flags
  EXPECT_EQ(parse(announce_body(1, 10, 1, 0, one, 0x0002)), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 10, 1, 0, one, 0x8001)), ParseError::kBadBody);
  // count 0
  EXPECT_EQ(parse(announce_body(1, 10, 1, 0, {})), ParseError::kBadBody);
  // length does not match the count
  Bytes b = announce_body(1, 10, 1, 0, one);
  b.push_back(0);
  EXPECT_EQ(parse(b), ParseError::kBadBody);
  b.resize(b.size() - 2);
  EXPECT_EQ(parse(b), ParseError::kBadBody);
  // n_groups 0, first_group beyond n_groups, more entries than groups left
  EXPECT_EQ(parse(announce_body(1, 10, 0, 0, one)), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 10, 1, 1, one)), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 10, 3, 3, one)), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 20, 3, 2, {{1, 10, 5}, {2, 10, 5}})), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 20, 3, 1, {{1, 10, 5}, {2, 10, 5}})), ParseError::kOk);
  EXPECT_EQ(parse(announce_body(1, 20, 0xFFFFFFFFu, 0xFFFFFFFEu, {{1, 10, 5}, {2, 10, 5}})), ParseError::kBadBody);
  // target above the group size
  EXPECT_EQ(parse(announce_body(1, 10, 1, 0, {{1, 10, 11}})), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 20, 2, 0, {{1, 10, 10}, {2, 10, 0xFFFFFFFFu}})), ParseError::kBadBody);
  EXPECT_EQ(parse(announce_body(1, 0, 1, 0, {{1, 0, 0}})), ParseError::kOk);  // n = 0 is the engine's to refuse
}

// ============================================================================================ update / abandon

TEST(WireTest, UpdateAndAbandonRoundTrip) {
  const Bytes u = update_body(5, {{0, 7}, {0xFFFFFFFFu, 0}, {3, 0xFFFFFFFFu}});
  wire::Update up;
  ASSERT_EQ(wire::parse_update(u.data(), u.size(), &up), ParseError::kOk);
  EXPECT_EQ(up.job, 5u);
  ASSERT_EQ(up.entries.size(), 3u);
  EXPECT_EQ(up.entries[1].group_index, 0xFFFFFFFFu);
  EXPECT_EQ(up.entries[2].target, 0xFFFFFFFFu);
  EXPECT_EQ(up.entries[0].target, 7u);

  std::vector<uint32_t> msgs;
  for (uint32_t i = 0; i < 300; ++i) msgs.push_back(i * 1000003u);
  const Bytes a = abandon_body(6, msgs);
  wire::Abandon ab;
  ASSERT_EQ(wire::parse_abandon(a.data(), a.size(), &ab), ParseError::kOk);
  EXPECT_EQ(ab.job, 6u);
  EXPECT_EQ(ab.msgs, msgs);
}

TEST(WireTest, UpdateAndAbandonRejectMalformedBodies) {
  auto upd = [](const Bytes& b) {
    wire::Update u;
    return wire::parse_update(b.data(), b.size(), &u);
  };
  auto abd = [](const Bytes& b) {
    wire::Abandon a;
    return wire::parse_abandon(b.data(), b.size(), &a);
  };
  for (auto* parse : {+upd, +abd}) {
    EXPECT_EQ(parse(Bytes(7, 0)), ParseError::kBadBody);               // too short
    EXPECT_EQ(parse(B().u32(1).u16(0).u16(0)), ParseError::kBadBody);  // count 0
    EXPECT_EQ(parse(Bytes()), ParseError::kBadBody);
  }
  // reserved
  EXPECT_EQ(upd(B().u32(1).u16(1).u16(1).u32(0).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(abd(B().u32(1).u16(1).u16(1).u32(0)), ParseError::kBadBody);
  // length vs count
  EXPECT_EQ(upd(B().u32(1).u16(1).u16(0).u32(0).u32(0)), ParseError::kOk);
  EXPECT_EQ(upd(B().u32(1).u16(2).u16(0).u32(0).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(upd(B().u32(1).u16(1).u16(0).u32(0).u32(0).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(upd(B().u32(1).u16(1).u16(0).u32(0)), ParseError::kBadBody);  // an abandon-sized entry
  EXPECT_EQ(abd(B().u32(1).u16(1).u16(0).u32(0)), ParseError::kOk);
  EXPECT_EQ(abd(B().u32(1).u16(2).u16(0).u32(0)), ParseError::kBadBody);
  EXPECT_EQ(abd(B().u32(1).u16(1).u16(0).u32(0).u16(0)), ParseError::kBadBody);
  EXPECT_EQ(abd(B().u32(1).u16(0xFFFF).u16(0).u32(0)), ParseError::kBadBody);
}

// ============================================================================================ done / close / cancel

TEST(WireTest, DoneCloseCancelRoundTripAndExactLengths) {
  const Bytes d = done_body(9, -9, 123, 456, 3);
  wire::Done dn;
  ASSERT_EQ(wire::parse_done(d.data(), d.size(), &dn), ParseError::kOk);
  EXPECT_EQ(dn.job, 9u);
  EXPECT_EQ(dn.status, -9);
  EXPECT_EQ(dn.delivered, 123u);
  EXPECT_EQ(dn.lost, 456u);
  EXPECT_EQ(dn.attempt, 3u);
  for (size_t n : {0, 15, 16, 19, 21, 24, 27, 36}) {
    Bytes b(n, 0);
    EXPECT_EQ(wire::parse_done(b.data(), b.size(), &dn), ParseError::kBadBody) << n;
  }
  // Optional per-group counts: n >= 1 followed by exactly n values.
  const Bytes g = B().u32(9).u32(0).u32(5).u32(1).u32(1).u32(2).u32(3).u32(2);
  ASSERT_EQ(wire::parse_done(g.data(), g.size(), &dn), ParseError::kOk);
  EXPECT_EQ(dn.group_delivered, (std::vector<uint32_t>{3, 2}));
  const Bytes short_list = B().u32(9).u32(0).u32(5).u32(1).u32(1).u32(3).u32(3).u32(2);
  EXPECT_EQ(wire::parse_done(short_list.data(), short_list.size(), &dn), ParseError::kBadBody);
  const Bytes c = B().u32(0xFFFFFFF7u);
  int32_t code = 0;
  ASSERT_EQ(wire::parse_close(c.data(), c.size(), &code), ParseError::kOk);
  EXPECT_EQ(code, -9);
  uint32_t job = 0;
  ASSERT_EQ(wire::parse_cancel(c.data(), c.size(), &job), ParseError::kOk);
  EXPECT_EQ(job, 0xFFFFFFF7u);
  for (size_t n : {0, 3, 5, 8}) {
    Bytes b(n, 0);
    EXPECT_EQ(wire::parse_close(b.data(), b.size(), &code), ParseError::kBadBody) << n;
    EXPECT_EQ(wire::parse_cancel(b.data(), b.size(), &job), ParseError::kBadBody) << n;
  }
}

// ============================================================================================ replay window

TEST(WireTest, ReceivedWindowReplayAndAckRanges) {
  ReceivedWindow w;
  EXPECT_FALSE(w.any());
  EXPECT_EQ(w.check(0), ReceivedWindow::Check::kNew);
  EXPECT_TRUE(w.ranges(64).empty());
  for (uint64_t pn : {0, 1, 2, 5, 6, 9}) w.mark(pn);
  EXPECT_EQ(w.largest(), 9u);
  EXPECT_EQ(w.check(5), ReceivedWindow::Check::kDuplicate);
  EXPECT_EQ(w.check(4), ReceivedWindow::Check::kNew);  // late but inside the window
  EXPECT_EQ(w.check(10), ReceivedWindow::Check::kNew);
  auto r = w.ranges(64);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].low, 9u);
  EXPECT_EQ(r[0].high, 9u);
  EXPECT_EQ(r[1].low, 5u);
  EXPECT_EQ(r[1].high, 6u);
  EXPECT_EQ(r[2].low, 0u);
  EXPECT_EQ(r[2].high, 2u);
  EXPECT_EQ(w.ranges(2).size(), 2u);
  // What the engine encodes from these ranges parses back to the same ranges.
  const Bytes b = encode_ack(w.largest(), 0, 0, r);
  wire::Ack a;
  ASSERT_EQ(wire::parse_ack(b.data(), b.size(), &a), ParseError::kOk);
  ASSERT_EQ(a.ranges.size(), r.size());
  for (size_t i = 0; i < r.size(); ++i) EXPECT_TRUE(a.ranges[i].low == r[i].low && a.ranges[i].high == r[i].high);

  // Window edge: kBits packets behind the largest is too old, one less is still tracked.
  const uint64_t big = 100000;
  w.mark(big);
  EXPECT_EQ(w.check(big - ReceivedWindow::kBits), ReceivedWindow::Check::kTooOld);
  EXPECT_EQ(w.check(big - ReceivedWindow::kBits + 1), ReceivedWindow::Check::kNew);
  EXPECT_EQ(w.check(9), ReceivedWindow::Check::kTooOld);
  EXPECT_EQ(w.check(big), ReceivedWindow::Check::kDuplicate);
  // The jump cleared the bits of the numbers the window now covers: only `big` is reported.
  r = w.ranges(64);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].low, big);
  EXPECT_EQ(r[0].high, big);
}

TEST(WireTest, ReceivedWindowMatchesAReferenceSetUnderRandomArrivals) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    ReceivedWindow w;
    std::set<uint64_t> got;
    uint64_t largest = 0;
    for (int k = 0; k < 3000; ++k) {
      // mostly in order, some reordering, occasional jumps
      uint64_t pn = largest + 1 + rng() % 3;
      const uint64_t r = rng() % 100;
      if (r < 20 && largest > 50) pn = largest - rng() % 50;
      if (r == 99) pn = largest + 1 + rng() % 6000;
      const auto c = w.check(pn);
      const bool in_window = got.empty() || pn > largest || largest - pn < ReceivedWindow::kBits;
      if (!in_window) {
        EXPECT_EQ(c, ReceivedWindow::Check::kTooOld);
        continue;
      }
      EXPECT_EQ(c == ReceivedWindow::Check::kDuplicate, got.count(pn) == 1) << pn;
      if (c != ReceivedWindow::Check::kNew) continue;
      w.mark(pn);
      got.insert(pn);
      largest = std::max(largest, pn);
    }
    // Ranges: descending, disjoint, and exactly the received numbers inside the window (up to 64 ranges).
    const auto ranges = w.ranges(wire::kMaxAckRanges);
    ASSERT_FALSE(ranges.empty());
    EXPECT_EQ(ranges[0].high, largest);
    const uint64_t floor = largest >= ReceivedWindow::kBits - 1 ? largest - (ReceivedWindow::kBits - 1) : 0;
    for (size_t i = 0; i < ranges.size(); ++i) {
      for (uint64_t pn = ranges[i].low; pn <= ranges[i].high; ++pn) EXPECT_TRUE(got.count(pn)) << pn;
      if (i) {
        EXPECT_GE(ranges[i - 1].low, ranges[i].high + 2);
      }
      if (ranges[i].low > floor) {
        EXPECT_FALSE(got.count(ranges[i].low - 1));
      }
    }
  }
}

// ============================================================================================ engine: hostile input

class WireEngineTest : public ::testing::Test {
 protected:
  WireEngineTest() : eng_(cfg()) {
    // The engine is the responder here: its peer (the test) sends with from_initiator = true.
    EXPECT_EQ(eng_.open_session(kSid, test_key(), kPeer, false, kT0), Status::kOk);
  }
  static EngineConfig cfg() {
    EngineConfig c;
    c.recv_buffer_bytes = 1 << 20;
    return c;
  }
  void feed(const Bytes& p, TimeNs dt = 1000) {
    now_ += dt;
    eng_.on_datagram(p.data(), p.size(), kPeer, now_);
  }
  uint64_t drops() const {
    const EngineStats s = eng_.stats();
    return s.dropped_malformed + s.dropped_auth + s.dropped_unknown_session + s.dropped_replay_or_old;
  }
  // Transmits everything due; returns the parsed headers.
  std::vector<std::pair<wire::Header, Bytes>> transmit() {
    std::vector<std::pair<wire::Header, Bytes>> out;
    uint8_t buf[wire::kMaxDatagram];
    Transmit t;
    eng_.on_timeout(now_);
    while (eng_.poll_transmit(now_, buf, sizeof buf, &t)) {
      wire::Header h;
      EXPECT_EQ(wire::parse_header(buf, t.len, &h), ParseError::kOk);
      EXPECT_TRUE(crypto::verify(test_key(), h.from_initiator, h.packet_number, buf, wire::kHeaderBytes + h.body_len,
                                 buf + wire::kHeaderBytes + h.body_len));
      out.push_back({h, Bytes(buf + wire::kHeaderBytes, buf + wire::kHeaderBytes + h.body_len)});
    }
    return out;
  }
  void drain() {
    Event ev;
    while (eng_.poll_event(&ev))
      if (ev.type == EventType::kMessage) eng_.release(ev.handle);
  }

  Engine eng_;
  TimeNs now_ = kT0;
};

TEST_F(WireEngineTest, ValidPacketsOfEveryTypeAreAcceptedAndAcknowledged) {
  uint64_t pn = 0;
  feed(seal_packet(PacketType::kPing, {}, pn++));
  feed(seal_packet(PacketType::kAnnounce, announce_body(3, 6, 2, 0, {{10, 2, 2}, {11, 4, 2}}), pn++));
  feed(seal_packet(PacketType::kData, data_body(3, 0, 100, 0, 1412), pn++));
  feed(seal_packet(PacketType::kUpdate, update_body(3, {{1, 3}}), pn++));
  feed(seal_packet(PacketType::kAbandon, abandon_body(3, {2}), pn++));
  feed(seal_packet(PacketType::kAck, ack_body(0, 0), pn++));           // acknowledges nothing we sent: ignored
  feed(seal_packet(PacketType::kDone, done_body(44, 0, 1, 1), pn++));  // no such send job: ignored
  feed(seal_packet(PacketType::kCancel, B().u32(3), pn++));
  EXPECT_EQ(drops(), 0u);
  const EngineStats s = eng_.stats();
  EXPECT_EQ(s.datagrams_in, pn);
  EXPECT_EQ(s.dropped_unknown_job, 0u);
  // Every ack-eliciting packet (all but the ACK) is acknowledged.
  auto out = transmit();
  ASSERT_FALSE(out.empty());
  wire::Ack a;
  bool found = false;
  for (auto& [h, body] : out) {
    EXPECT_FALSE(h.from_initiator);
    if (h.type != PacketType::kAck) continue;
    ASSERT_EQ(wire::parse_ack(body.data(), body.size(), &a), ParseError::kOk);
    found = true;
  }
  ASSERT_TRUE(found);
  EXPECT_EQ(a.largest, pn - 1);
  EXPECT_EQ(a.ranges[0].low, 0u);
  // Close ends the session.
  feed(seal_packet(PacketType::kClose, B().u32(0), pn++));
  EXPECT_EQ(eng_.stats().sessions, 0u);
  feed(seal_packet(PacketType::kPing, {}, pn++));
  EXPECT_EQ(eng_.stats().dropped_unknown_session, 1u);
}

TEST_F(WireEngineTest, WrongKeyIsDroppedAuth) {
  feed(seal_packet(PacketType::kPing, {}, 0, true, kSid, other_key()));
  feed(seal_packet(PacketType::kData, data_body(1, 0, 10, 0, 10), 1, true, kSid, other_key()));
  EXPECT_EQ(eng_.stats().dropped_auth, 2u);
  EXPECT_EQ(drops(), 2u);
  // Tag, header and body bits are all covered by the tag.
  Bytes p = seal_packet(PacketType::kPing, {}, 2);
  p.back() ^= 1;
  feed(p);
  Bytes q = seal_packet(PacketType::kCancel, B().u32(5), 3);
  q[wire::kHeaderBytes] ^= 0x80;
  feed(q);
  Bytes r = seal_packet(PacketType::kPing, {}, 4);
  r[16] ^= 0x01;  // packet number (so the nonce) changed
  feed(r);
  EXPECT_EQ(eng_.stats().dropped_auth, 5u);
  // A packet in the engine's own direction (reflected back at it) is refused before the tag is checked.
  feed(seal_packet(PacketType::kPing, {}, 5, /*from_initiator=*/false));
  EXPECT_EQ(eng_.stats().dropped_auth, 6u);
  // None of them moved the replay window: the same numbers, correctly sealed, are accepted.
  for (uint64_t pn = 0; pn < 6; ++pn) feed(seal_packet(PacketType::kPing, {}, pn));
  EXPECT_EQ(drops(), 6u);
}

TEST_F(WireEngineTest, UnknownSessionIsDropped) {
  feed(seal_packet(PacketType::kPing, {}, 0, true, kSid + 1));
  feed(seal_packet(PacketType::kPing, {}, 0, true, 0));
  feed(seal_packet(PacketType::kClose, B().u32(0), 1, true, ~kSid));
  EXPECT_EQ(eng_.stats().dropped_unknown_session, 3u);
  EXPECT_EQ(drops(), 3u);
  EXPECT_EQ(eng_.stats().sessions, 1u);
}

TEST_F(WireEngineTest, ReplayedAndTooOldPacketsAreDropped) {
  const Bytes p0 = seal_packet(PacketType::kPing, {}, 0);
  const Bytes p7 = seal_packet(PacketType::kAnnounce, announce_body(3, 2, 1, 0, {{1, 2, 1}}), 7);
  feed(p0);
  feed(p7);
  EXPECT_EQ(drops(), 0u);
  feed(p0);
  feed(p7);
  feed(p7);
  EXPECT_EQ(eng_.stats().dropped_replay_or_old, 3u);
  // Far behind the largest received number: too old even if never seen.
  feed(seal_packet(PacketType::kPing, {}, 10000));
  feed(seal_packet(PacketType::kPing, {}, 10000 - ReceivedWindow::kBits));
  EXPECT_EQ(eng_.stats().dropped_replay_or_old, 4u);
  feed(seal_packet(PacketType::kPing, {}, 10000 - ReceivedWindow::kBits + 1));
  EXPECT_EQ(eng_.stats().dropped_replay_or_old, 4u);
  EXPECT_EQ(drops(), 4u);
}

TEST_F(WireEngineTest, AuthenticatedButMalformedBodiesAreDroppedMalformed) {
  uint64_t pn = 0;
  const std::vector<std::pair<PacketType, Bytes>> bad = {
      {PacketType::kData, B().u32(1).u32(0).u32(10).u32(0).u16(10).u16(0).bytes(9, 0)},
      {PacketType::kAck, B().u64(0).u32(0).u16(0).u16(0).u64(0).u32(0)},
      {PacketType::kAnnounce, announce_body(1, 10, 1, 0, {{1, 10, 11}})},
      {PacketType::kUpdate, B().u32(1).u16(0).u16(0)},
      {PacketType::kAbandon, B().u32(1).u16(2).u16(0).u32(0)},
      {PacketType::kDone, Bytes(15, 0)},
      {PacketType::kPing, Bytes(1, 0)},
      {PacketType::kClose, Bytes(5, 0)},
      {PacketType::kCancel, Bytes(3, 0)},
  };
  for (const auto& [t, body] : bad) feed(seal_packet(t, body, pn++));
  EXPECT_EQ(eng_.stats().dropped_malformed, bad.size());
  EXPECT_EQ(drops(), bad.size());
  EXPECT_EQ(eng_.stats().sessions, 1u);  // the malformed CLOSE did not close it
  // A malformed packet does not consume its packet number: it was not acknowledged.
  auto out = transmit();
  for (auto& [h, body] : out) EXPECT_NE(h.type, PacketType::kAck);
}

TEST_F(WireEngineTest, AesGcmTagsAreAcceptedAndTheAlgorithmFlagIsAuthenticated) {
  if (!crypto::aes_available()) GTEST_SKIP() << "no AES-NI: AES-GCM tags cannot be checked here";
  feed(seal_packet(PacketType::kPing, {}, 0, true, kSid, test_key(), wire::kFlagAesGcm));
  feed(seal_packet(PacketType::kAnnounce, announce_body(3, 2, 1, 0, {{1, 2, 1}}), 1, true, kSid, test_key(),
                   wire::kFlagAesGcm));
  EXPECT_EQ(drops(), 0u);
  // Switching the algorithm flag of a sealed packet (either way) breaks the tag: the flag is covered by it.
  Bytes p = seal_packet(PacketType::kPing, {}, 2);
  p[4] |= wire::kFlagAesGcm;
  feed(p);
  Bytes q = seal_packet(PacketType::kPing, {}, 3, true, kSid, test_key(), wire::kFlagAesGcm);
  q[4] &= static_cast<uint8_t>(~wire::kFlagAesGcm);
  feed(q);
  feed(seal_packet(PacketType::kPing, {}, 4, true, kSid, other_key(), wire::kFlagAesGcm));
  EXPECT_EQ(eng_.stats().dropped_auth, 3u);
}

TEST_F(WireEngineTest, HeaderOnlyAuthenticatedDataIsRefusedWhilePayloadAuthIsOn) {
  ASSERT_TRUE(eng_.config().payload_auth);
  feed(seal_packet(PacketType::kAnnounce, announce_body(3, 2, 1, 0, {{1, 2, 2}}), 0));
  feed(seal_packet(PacketType::kData, data_body(3, 0, 10, 0, 1412), 1, true, kSid, test_key(),
                   wire::kFlagHeaderOnlyAuth));
  EXPECT_EQ(eng_.stats().dropped_auth, 1u);
  EXPECT_EQ(drops(), 1u);
}

TEST(WireTest, HeaderOnlyAuthenticationCoversTheDataHeaderButNotThePayload) {
  EngineConfig c;
  c.payload_auth = false;
  Engine e(c);
  ASSERT_EQ(e.open_session(kSid, test_key(), kPeer, false, kT0), Status::kOk);
  TimeNs now = kT0;
  auto feed = [&](const Bytes& p) { e.on_datagram(p.data(), p.size(), kPeer, now += 1000); };
  feed(seal_packet(PacketType::kAnnounce, announce_body(3, 3, 1, 0, {{1, 3, 3}}), 0));
  // Payload bytes changed in flight: accepted (that is the documented guarantee of payload_auth = false) ...
  Bytes p = seal_packet(PacketType::kData, data_body(3, 0, 10, 0, 1412, 0x11), 1, true, kSid, test_key(),
                        wire::kFlagHeaderOnlyAuth);
  p[wire::kHeaderBytes + wire::kDataHeaderBytes] ^= 0xFF;
  feed(p);
  // ... but the data header (job, message, length, offset) and the packet header are covered.
  Bytes q = seal_packet(PacketType::kData, data_body(3, 1, 10, 0, 1412), 2, true, kSid, test_key(),
                        wire::kFlagHeaderOnlyAuth);
  q[wire::kHeaderBytes + 7] ^= 0x01;  // message id 1 -> 0
  feed(q);
  Bytes r = seal_packet(PacketType::kData, data_body(3, 1, 10, 0, 1412), 3, true, kSid, test_key(),
                        wire::kFlagHeaderOnlyAuth);
  r[4] &= static_cast<uint8_t>(~wire::kFlagHeaderOnlyAuth);  // claim full coverage
  feed(r);
  EXPECT_EQ(e.stats().dropped_auth, 2u);
  // Fully authenticated DATA is still accepted by a receiver with payload_auth off.
  feed(seal_packet(PacketType::kData, data_body(3, 1, 10, 0, 1412), 4));
  EXPECT_EQ(e.stats().dropped_auth + e.stats().dropped_malformed, 2u);
  std::vector<MessageId> got;
  Event ev;
  while (e.poll_event(&ev)) {
    if (ev.type != EventType::kMessage) continue;
    got.push_back(ev.message);
    if (ev.message == 0) {
      EXPECT_EQ(ev.data[0], 0x11 ^ 0xFF);
    }
    e.release(ev.handle);
  }
  EXPECT_EQ(got, (std::vector<MessageId>{0, 1}));
  // What such an engine sends: DATA tags cover header + data header, other packets stay fully covered.
  Engine tx(c);
  ASSERT_EQ(tx.open_session(kSid, test_key(), kPeer, true, kT0), Status::kOk);
  JobSpec spec;
  spec.job_id = 4;
  spec.groups = {{1, 1, 1.0}};
  ASSERT_EQ(tx.start_job(kSid, spec, kT0), Status::kOk);
  const Bytes payload(3000, 0x5A);
  ASSERT_EQ(tx.submit(kSid, 4, 0, 0, payload.data(), payload.size(), kT0), Status::kOk);
  uint8_t buf[wire::kMaxDatagram];
  Transmit t;
  ASSERT_TRUE(tx.poll_transmit(kT0, buf, sizeof buf, &t));  // ANNOUNCE
  wire::Header h;
  ASSERT_EQ(wire::parse_header(buf, t.len, &h), ParseError::kOk);
  EXPECT_EQ(h.type, PacketType::kAnnounce);
  EXPECT_FALSE(h.flags & wire::kFlagHeaderOnlyAuth);
  EXPECT_TRUE(crypto::verify(test_key(), true, h.packet_number, buf, wire::kHeaderBytes + h.body_len,
                             buf + wire::kHeaderBytes + h.body_len));
  const Bytes ack = seal_packet(PacketType::kAck, ack_body(0, 0), 0, false);
  tx.on_datagram(ack.data(), ack.size(), kPeer, kT0 + 1000);
  ASSERT_TRUE(tx.poll_transmit(kT0 + 1000, buf, sizeof buf, &t));
  ASSERT_EQ(wire::parse_header(buf, t.len, &h), ParseError::kOk);
  EXPECT_EQ(h.type, PacketType::kData);
  EXPECT_TRUE(h.flags & wire::kFlagHeaderOnlyAuth);
  EXPECT_TRUE(crypto::verify(test_key(), true, h.packet_number, buf, wire::kHeaderBytes + wire::kDataHeaderBytes,
                             buf + wire::kHeaderBytes + h.body_len));
}

void fill_random(Bytes& p, std::mt19937_64& rng) {
  for (size_t i = 0; i < p.size(); i += 8) {
    const uint64_t r = rng();
    std::memcpy(p.data() + i, &r, std::min<size_t>(8, p.size() - i));
  }
}

TEST_F(WireEngineTest, RandomGarbageNeverCrashesAndIsCounted) {
  std::mt19937_64 rng(20240601);
  uint64_t fed = 0;
  // A few valid packets first, so bit flips of them also reach the replay check.
  std::vector<Bytes> valid;
  uint64_t pn = 0;
  valid.push_back(seal_packet(PacketType::kAnnounce, announce_body(3, 8, 2, 0, {{1, 4, 4}, {2, 4, 2}}), pn++));
  for (uint32_t m = 0; m < 8; ++m)
    valid.push_back(seal_packet(PacketType::kData, data_body(3, m, 3000, 1412, 1412), pn++));
  valid.push_back(seal_packet(PacketType::kAck, ack_body(0, 0), pn++));
  valid.push_back(seal_packet(PacketType::kUpdate, update_body(3, {{1, 3}}), pn++));
  valid.push_back(seal_packet(PacketType::kAbandon, abandon_body(3, {5}), pn++));
  valid.push_back(seal_packet(PacketType::kDone, done_body(3, 0, 1, 2), pn++));
  valid.push_back(seal_packet(PacketType::kPing, {}, pn++));
  for (int i = 0; i < 20; ++i) valid.push_back(seal_packet(PacketType::kPing, {}, pn++));
  for (size_t i = 0; i < valid.size() / 2; ++i) {
    feed(valid[i]);
    ++fed;
  }
  const uint64_t drops_before = drops();
  EXPECT_EQ(drops_before, 0u);

  const int kRandom = 100000;
  Bytes p;
  for (int i = 0; i < kRandom; ++i) {
    const int kind = static_cast<int>(rng() % 4);
    if (kind == 0) {
      // pure noise of a random length (mostly short, sometimes up to a jumbo datagram)
      const size_t len = rng() % 64 == 0 ? rng() % (wire::kMaxDatagram + 1) : rng() % 1600;
      p.resize(len);
      fill_random(p, rng);
    } else if (kind == 1) {
      // noise behind a plausible header: valid magic/version, random type/flags, mostly consistent length,
      // the real session id half of the time
      const size_t body = rng() % 1500;
      p.resize(wire::kOverheadBytes + body);
      fill_random(p, rng);
      p[0] = 0x4E;
      p[1] = 0x41;
      p[2] = 1;
      p[3] = static_cast<uint8_t>(rng() % 11);
      p[4] = rng() % 4 ? 1 : static_cast<uint8_t>(rng());
      p[5] = rng() % 8 ? 0 : static_cast<uint8_t>(rng());
      wire::set_body_len(p.data(), static_cast<uint16_t>(rng() % 8 ? body : rng()));
      if (rng() % 2) {
        Bytes sid = B().u64(kSid);
        std::copy(sid.begin(), sid.end(), p.begin() + 8);
      }
    } else {
      // a valid packet with 1-3 bits flipped (and sometimes truncated or extended)
      const Bytes& orig = valid[rng() % valid.size()];
      do {  // flips that cancel out would give back the valid packet
        p = orig;
        const int flips = 1 + static_cast<int>(rng() % 3);
        for (int f = 0; f < flips; ++f) p[rng() % p.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
        if (kind == 3 && rng() % 4 == 0) p.resize(rng() % (p.size() + 8), 0);
      } while (p == orig);
    }
    eng_.on_datagram(p.data(), p.size(), kPeer, now_ += 1000);
    ++fed;
    if (i % 64 == 0) {
      transmit();
      drain();
    }
  }
  const EngineStats s = eng_.stats();
  EXPECT_EQ(s.datagrams_in, fed);
  // Every hostile datagram is accounted for by exactly one drop counter; none was accepted.
  EXPECT_EQ(drops() - drops_before, uint64_t(kRandom));
  EXPECT_GT(s.dropped_malformed, 0u);
  EXPECT_GT(s.dropped_auth, 0u);
  EXPECT_GT(s.dropped_unknown_session, 0u);
  EXPECT_GT(s.dropped_replay_or_old, 0u);
  EXPECT_EQ(s.sessions, 1u);
  // The session still works: the other half of the valid packets is accepted and acknowledged.
  for (size_t i = valid.size() / 2; i < valid.size(); ++i) feed(valid[i]);
  EXPECT_EQ(drops() - drops_before, uint64_t(kRandom));
  bool acked = false;
  for (auto& [h, body] : transmit()) {
    if (h.type != PacketType::kAck) continue;
    wire::Ack a;
    ASSERT_EQ(wire::parse_ack(body.data(), body.size(), &a), ParseError::kOk);
    acked = acked || a.largest == pn - 1;
  }
  EXPECT_TRUE(acked);
}

// The engine's own datagrams parse with the same parsers (what it writes is what it accepts).
TEST(WireTest, EngineOutputParses) {
  EngineConfig c;
  Engine e(c);
  ASSERT_EQ(e.open_session(kSid, test_key(), kPeer, true, kT0), Status::kOk);
  JobSpec spec;
  spec.job_id = 12;
  for (uint32_t g = 0; g < 200; ++g) spec.groups.push_back({1000 + g, 3, g % 2 ? 1.0 : 0.5});  // 3 announce chunks
  ASSERT_EQ(e.start_job(kSid, spec, kT0), Status::kOk);
  ASSERT_EQ(e.update_msr(kSid, 12, {{1, 0.0}, {2, 1.0}}, kT0), Status::kOk);
  uint8_t buf[wire::kMaxDatagram];
  Transmit t;
  auto poll_all = [&] {
    std::vector<std::pair<wire::Header, Bytes>> out;
    while (e.poll_transmit(kT0, buf, sizeof buf, &t)) {
      EXPECT_LE(t.len, c.max_datagram);
      wire::Header h;
      EXPECT_EQ(wire::parse_header(buf, t.len, &h), ParseError::kOk);
      EXPECT_TRUE(h.from_initiator);
      EXPECT_TRUE(crypto::verify(test_key(), true, h.packet_number, buf, wire::kHeaderBytes + h.body_len,
                                 buf + wire::kHeaderBytes + h.body_len));
      out.push_back({h, Bytes(buf + wire::kHeaderBytes, buf + wire::kHeaderBytes + h.body_len)});
    }
    return out;
  };
  uint32_t groups_announced = 0, updates = 0;
  uint64_t expect_pn = 0;
  for (auto& [h, b] : poll_all()) {
    EXPECT_EQ(h.packet_number, expect_pn++);
    if (h.type == PacketType::kAnnounce) {
      wire::Announce a;
      ASSERT_EQ(wire::parse_announce(b.data(), b.size(), &a), ParseError::kOk);
      EXPECT_EQ(a.job, 12u);
      EXPECT_EQ(a.n_groups, 200u);
      EXPECT_EQ(a.n_messages, 600u);
      EXPECT_EQ(a.flags, wire::kAnnounceFlagMrdf);
      EXPECT_EQ(a.first_group, groups_announced);
      for (size_t i = 0; i < a.entries.size(); ++i) {
        const uint32_t g = a.first_group + static_cast<uint32_t>(i);
        EXPECT_EQ(a.entries[i].group_id, 1000u + g);
        EXPECT_EQ(a.entries[i].size, 3u);
        EXPECT_EQ(a.entries[i].target, g % 2 ? 3u : 2u);  // ceil(0.5 * 3) = 2
      }
      groups_announced += static_cast<uint32_t>(a.entries.size());
    } else if (h.type == PacketType::kUpdate) {
      wire::Update u;
      ASSERT_EQ(wire::parse_update(b.data(), b.size(), &u), ParseError::kOk);
      ASSERT_EQ(u.entries.size(), 2u);
      EXPECT_EQ(u.entries[0].group_index, 1u);
      EXPECT_EQ(u.entries[0].target, 0u);
      EXPECT_EQ(u.entries[1].group_index, 2u);
      EXPECT_EQ(u.entries[1].target, 3u);
      ++updates;
    } else {
      ADD_FAILURE() << "unexpected type " << int(h.type);
    }
  }
  EXPECT_EQ(groups_announced, 200u);
  EXPECT_EQ(updates, 0u) << "an UPDATE must wait until the announce is acknowledged (it must not overtake it)";
  ASSERT_EQ(e.cancel_job(kSid, 12, kT0), Status::kOk);
  auto out = poll_all();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first.type, PacketType::kCancel);
  uint32_t job = 0;
  ASSERT_EQ(wire::parse_cancel(out[0].second.data(), out[0].second.size(), &job), ParseError::kOk);
  EXPECT_EQ(job, 12u);
}

// ============================================================================================ known bugs
// Reproducers of core bugs found while writing these tests and fuzzing (docs/protocol.md "Known issues").
// They were DISABLED until the core was fixed; now they guard against regressions.

struct Rx {
  explicit Rx(EngineConfig c = EngineConfig()) : e(c) { e.open_session(kSid, test_key(), kPeer, false, now); }
  void feed(PacketType t, const Bytes& body) {
    const Bytes p = seal_packet(t, body, pn++);
    e.on_datagram(p.data(), p.size(), kPeer, now += 1000);
    Event ev;
    while (e.poll_event(&ev)) {
      if (ev.type == EventType::kMessage) {
        delivered.push_back(ev.message);
        e.release(ev.handle);
      } else if (ev.type == EventType::kJobDone) {
        done = true;
      }
    }
  }
  Engine e;
  TimeNs now = kT0;
  uint64_t pn = 0;
  std::vector<MessageId> delivered;
  bool done = false;
};

Bytes announce_groups(uint32_t job, const std::vector<std::pair<uint32_t, uint32_t>>& sizes_targets) {
  std::vector<G> gs;
  uint32_t n = 0;
  for (auto [size, target] : sizes_targets) {
    gs.push_back({100 + gs.size(), size, target});
    n += size;
  }
  return announce_body(job, n, static_cast<uint32_t>(gs.size()), 0, gs, 0);
}

// ReceivedWindow::mark (then in engine.cpp): `for (q = from; q <= pn; ++q)` never ends for pn = 2^64 - 1 (q wraps to
// 0).
TEST(KnownBugs, MaxPacketNumberDoesNotHang) {
  Rx r;
  r.feed(PacketType::kPing, {});
  const Bytes p = seal_packet(PacketType::kPing, {}, UINT64_MAX);
  r.e.on_datagram(p.data(), p.size(), kPeer, r.now);
  SUCCEED();
}

// An approximate group raised to exact mid-job (update_msr to 1 with nothing lost) keeps next_in_order = 0
// although message 0 was already delivered: messages 1..3 are held forever.
TEST(KnownBugs, ApproxGroupRaisedToExactKeepsDelivering) {
  Rx r;
  r.feed(PacketType::kAnnounce, announce_groups(1, {{4, 2}}));
  r.feed(PacketType::kData, data_body(1, 0, 10, 0, 1412));
  r.feed(PacketType::kUpdate, update_body(1, {{0, 4}}));
  for (uint32_t m = 1; m < 4; ++m) r.feed(PacketType::kData, data_body(1, m, 10, 0, 1412));
  EXPECT_EQ(r.delivered.size(), 4u);
  EXPECT_TRUE(r.done);
}

// An exact group lowered to approximate while message 1 is held for order: message 1 was acknowledged (the sender
// counts it delivered and abandons the rest) but is never delivered, and the job never completes.
TEST(KnownBugs, ExactGroupLoweredDeliversHeldMessages) {
  Rx r;
  r.feed(PacketType::kAnnounce, announce_groups(1, {{4, 4}}));
  r.feed(PacketType::kData, data_body(1, 1, 10, 0, 1412));  // held: 0 is missing
  r.feed(PacketType::kUpdate, update_body(1, {{0, 2}}));
  r.feed(PacketType::kData, data_body(1, 0, 10, 0, 1412));
  r.feed(PacketType::kAbandon, abandon_body(1, {2, 3}));
  EXPECT_EQ(r.delivered.size(), 2u);
  EXPECT_TRUE(r.done);
}

// A refused ANNOUNCE (here: more groups than max_groups_per_job) is acknowledged and nothing tells the sender.
TEST(KnownBugs, RefusedAnnounceIsReportedToTheSender) {
  EngineConfig c;
  c.max_groups_per_job = 2;
  Rx r(c);
  r.feed(PacketType::kAnnounce, announce_groups(1, {{1, 1}, {1, 1}, {1, 1}}));
  EXPECT_EQ(r.e.stats().dropped_malformed, 1u);
  uint8_t buf[wire::kMaxDatagram];
  Transmit t;
  bool acked = false, done = false;
  while (r.e.poll_transmit(r.now, buf, sizeof buf, &t)) {
    wire::Header h;
    ASSERT_EQ(wire::parse_header(buf, t.len, &h), ParseError::kOk);
    acked = acked || h.type == PacketType::kAck;
    done = done || h.type == PacketType::kDone;
  }
  EXPECT_TRUE(!acked || done) << "the ANNOUNCE was acknowledged but no DONE carries the refusal";
}

// An UPDATE for a job whose announce has not arrived (a non-compliant or reordering peer) is not acknowledged,
// so a compliant sender repeats it after the announce; it is never silently discarded.
TEST(KnownBugs, UpdateBeforeAnnounceIsNotAcknowledged) {
  Rx r;
  const uint64_t update_pn = r.pn;
  r.feed(PacketType::kUpdate, update_body(1, {{0, 4}}));
  r.feed(PacketType::kAnnounce, announce_groups(1, {{4, 2}}));
  uint8_t buf[wire::kMaxDatagram];
  Transmit t;
  bool saw_ack = false;
  while (r.e.poll_transmit(r.now, buf, sizeof buf, &t)) {
    wire::Header h;
    ASSERT_EQ(wire::parse_header(buf, t.len, &h), ParseError::kOk);
    if (h.type != PacketType::kAck) continue;
    wire::Ack a;
    ASSERT_EQ(wire::parse_ack(buf + wire::kHeaderBytes, h.body_len, &a), ParseError::kOk);
    saw_ack = true;
    for (const auto& range : a.ranges)
      EXPECT_FALSE(range.low <= update_pn && update_pn <= range.high) << "the early UPDATE was acknowledged";
  }
  EXPECT_TRUE(saw_ack);
}

// Essential events and DONE frames grow with the number of announced jobs (all targets 0: each completes at once).
TEST(KnownBugs, EventsAndControlFramesStayBounded) {
  EngineConfig c;
  c.max_pending_events = 64;
  Rx r(c);
  for (uint32_t j = 0; j < 5000; ++j) {
    const Bytes p = seal_packet(PacketType::kAnnounce, announce_groups(j, {{1, 0}}), r.pn++);
    r.e.on_datagram(p.data(), p.size(), kPeer, r.now);
  }
  size_t events = 0;
  Event ev;
  while (r.e.poll_event(&ev)) ++events;
  EXPECT_LE(events, 2 * c.max_pending_events);
  size_t datagrams = 0;
  uint8_t buf[wire::kMaxDatagram];
  Transmit t;
  while (r.e.poll_transmit(r.now, buf, sizeof buf, &t)) ++datagrams;
  EXPECT_LE(datagrams, size_t{c.max_jobs_per_session} + 1);
}

// Head-of-line admission is per exact group: 100 exact groups hold 100 x 60 KB against a 64 KiB receive buffer.
TEST(KnownBugs, HeadOfLineAdmissionStaysWithinTheBuffer) {
  EngineConfig c;
  c.recv_buffer_bytes = 65536;
  Rx r(c);
  r.feed(PacketType::kAnnounce, announce_groups(1, std::vector<std::pair<uint32_t, uint32_t>>(100, {2, 2})));
  for (uint32_t g = 0; g < 100; ++g) r.feed(PacketType::kData, data_body(1, 2 * g, 60000, 0, 1412));
  EXPECT_LE(r.e.stats().recv_buffered, 2 * c.recv_buffer_bytes);
}

// ============================================================================================ fuzz corpus

namespace fz = netapprox::fuzz;

fz::Record rec(PacketType t, Bytes body, uint8_t dt = 1, uint8_t flags = 0, uint64_t pn = 0) {
  fz::Record r;
  r.op = static_cast<uint8_t>(static_cast<uint8_t>(t) - 1);
  r.flags = flags;
  r.pn = pn;
  r.dt = dt;
  r.body = std::move(body);
  return r;
}

// Seeds for fuzz_datagram: raw sealed datagrams of every type (valid for its fixed session) and sealed-mode
// scenarios (receiver job, sender job, hostile flags, API ops).
std::vector<std::pair<std::string, Bytes>> corpus_seeds() {
  std::vector<std::pair<std::string, Bytes>> out;
  const uint8_t* key = fz::session_key();
  const bool peer_dir = !fz::kEngineIsInitiator;
  auto raw = [&](const std::string& name, uint8_t control, PacketType t, const Bytes& body) {
    Bytes d{static_cast<uint8_t>(control & ~fz::kSealed)};
    const Bytes p = seal_packet(t, body, 0, peer_dir, fz::kSessionId, key);
    d.insert(d.end(), p.begin(), p.end());
    out.push_back({name, d});
  };
  const Bytes ann = announce_body(5, 6, 2, 0, {{10, 2, 2}, {11, 4, 2}});
  raw("raw_ping", 0, PacketType::kPing, {});
  raw("raw_announce", 0, PacketType::kAnnounce, ann);
  raw("raw_data", 0, PacketType::kData, data_body(5, 0, 100, 0, 1412));
  raw("raw_ack_announce", fz::kSendJob, PacketType::kAck, ack_body(0, 0));
  raw("raw_update", fz::kSendJob, PacketType::kUpdate, update_body(5, {{1, 3}}));
  raw("raw_abandon", 0, PacketType::kAbandon, abandon_body(5, {2, 3}));
  raw("raw_done", fz::kSendJob, PacketType::kDone, done_body(fz::kSendJobId, 0, 8, 4));
  raw("raw_close", 0, PacketType::kClose, B().u32(0));
  raw("raw_cancel", 0, PacketType::kCancel, B().u32(5));
  raw("raw_bundle", 0, PacketType::kDataBundle,
      B().u32(5).u16(2).u16(0).u32(0).u16(10).bytes(10, 1).u32(2).u16(3).bytes(3, 2));

  // Receiver: announce, every message (group 0 exact and multi-segment, out of order), abandon, update, cancel.
  {
    std::vector<fz::Record> r;
    r.push_back(rec(PacketType::kAnnounce, announce_body(5, 6, 2, 0, {{10, 2, 2}, {11, 4, 2}})));
    r.push_back(rec(PacketType::kData, data_body(5, 1, 2000, 1412, 1412)));
    r.push_back(rec(PacketType::kData, data_body(5, 1, 2000, 0, 1412)));
    r.push_back(rec(PacketType::kData, data_body(5, 0, 10, 0, 1412)));
    r.push_back(rec(PacketType::kData, data_body(5, 2, 64, 0, 1412)));
    r.push_back(rec(PacketType::kAbandon, abandon_body(5, {3, 4})));
    r.push_back(rec(PacketType::kUpdate, update_body(5, {{1, 2}})));
    r.push_back(rec(PacketType::kData, data_body(5, 5, 64, 0, 1412)));
    r.push_back(rec(PacketType::kPing, {}, 255));
    out.push_back({"sealed_receiver_job", fz::encode_sealed(0, r)});
    r.push_back(rec(PacketType::kCancel, B().u32(5)));
    r.push_back(rec(PacketType::kClose, B().u32(0)));
    out.push_back({"sealed_receiver_job_cancel_close", fz::encode_sealed(fz::kKeepHandles, r)});
  }
  // Announce in two chunks, then an MSR raise to exact.
  {
    std::vector<fz::Record> r;
    r.push_back(rec(PacketType::kAnnounce, announce_body(6, 7, 3, 1, {{2, 3, 1}, {3, 2, 2}})));
    r.push_back(rec(PacketType::kAnnounce, announce_body(6, 7, 3, 0, {{1, 2, 1}})));
    r.push_back(rec(PacketType::kData, data_body(6, 3, 5, 0, 1412)));
    r.push_back(rec(PacketType::kUpdate, update_body(6, {{1, 3}, {0, 2}})));
    r.push_back(rec(PacketType::kData, data_body(6, 0, 5, 0, 1412)));
    r.push_back(rec(PacketType::kData, data_body(6, 4, 5, 0, 1412)));
    out.push_back({"sealed_announce_chunks_update", fz::encode_sealed(0, r)});
  }
  // DATA bundles: messages of both groups in one datagram (one exact, one duplicate of a DATA segment's message),
  // the same bundle again (duplicates), an abandon for a bundled message, and a bundle with an id beyond the job.
  {
    auto bundle = [](uint32_t job, const std::vector<std::pair<uint32_t, uint16_t>>& msgs) {
      B b;
      b.u32(job).u16(static_cast<uint16_t>(msgs.size())).u16(0);
      for (auto [m, len] : msgs) b.u32(m).u16(len).bytes(len, static_cast<uint8_t>(m));
      return Bytes(b);
    };
    std::vector<fz::Record> r;
    r.push_back(rec(PacketType::kAnnounce, announce_body(5, 6, 2, 0, {{10, 2, 2}, {11, 4, 2}})));
    fz::Record b1 = rec(PacketType::kData, bundle(5, {{1, 40}, {2, 7}, {4, 1}}));
    b1.op = fz::kOpBundle;
    r.push_back(b1);
    r.push_back(b1);
    r.push_back(rec(PacketType::kData, data_body(5, 0, 10, 0, 1412)));
    r.push_back(rec(PacketType::kAbandon, abandon_body(5, {3, 4})));
    fz::Record b2 = rec(PacketType::kData, bundle(5, {{5, 64}, {6, 3}}));
    b2.op = fz::kOpBundle;
    r.push_back(b2);
    out.push_back({"sealed_bundles", fz::encode_sealed(0, r)});
  }
  // Sender: acknowledge the announce (pn 0), then data as it goes out, then DONE.
  for (int mode : {0, 1, 5}) {
    std::vector<fz::Record> r;
    r.push_back(rec(PacketType::kAck, ack_body(0, 0)));
    for (uint64_t l : {2, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32}) {
      r.push_back(rec(PacketType::kAck, ack_body(l, static_cast<uint32_t>(l)), 2));
    }
    // an ack with holes: loss detection by packet threshold
    r.push_back(rec(PacketType::kAck, encode_ack(40, 0, 1 << 20, {{40, 40}, {30, 35}, {0, 20}}), 20));
    r.push_back(rec(PacketType::kAck, ack_body(3, 0, 0), 1));  // window 0
    {
      fz::Record u;
      u.op = fz::kOpUpdateMsr;
      u.dt = 1;
      u.body = {1, 255, 0, 128};
      r.push_back(u);
    }
    r.push_back(rec(PacketType::kPing, {}, 255));
    r.push_back(rec(PacketType::kDone, done_body(fz::kSendJobId, 0, 8, 4)));
    out.push_back({"sealed_sender_mode" + std::to_string(mode),
                   fz::encode_sealed(static_cast<uint8_t>(fz::kSendJob | (mode << fz::kModeShift) | fz::kTrace), r)});
  }
  // Hostile flags: replay, reflected direction, bad tag, unknown session, explicit packet numbers, API ops.
  {
    std::vector<fz::Record> r;
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kExplicitPn, 5));
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kExplicitPn, 5));  // replay
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kExplicitPn, 1000000));
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kExplicitPn, 1000000 - 5000));  // too old
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kWrongDirection));
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kBadTag));
    r.push_back(rec(PacketType::kPing, {}, 1, fz::kWrongSession | fz::kNoPoll));
    fz::Record c;
    c.op = fz::kOpCancel;
    r.push_back(c);
    fz::Record re;
    re.op = fz::kOpReopen;
    r.push_back(re);
    fz::Record w;
    w.op = fz::kOpWait;
    w.dt = 255;
    r.push_back(w);
    out.push_back({"sealed_hostile_flags", fz::encode_sealed(fz::kSendJob | fz::kFaults, r)});
  }
  return out;
}

TEST(FuzzCorpus, RawSeedsAreValidSealedPackets) {
  for (const auto& [name, bytes] : corpus_seeds()) {
    if (bytes[0] & fz::kSealed) continue;
    EngineConfig c;
    Engine e(c);
    ASSERT_EQ(e.open_session(fz::kSessionId, fz::session_key(), fz::kPeer, fz::kEngineIsInitiator, fz::kStartTime),
              Status::kOk);
    e.on_datagram(bytes.data() + 1, bytes.size() - 1, fz::kPeer, fz::kStartTime);
    const EngineStats s = e.stats();
    EXPECT_EQ(s.dropped_malformed + s.dropped_auth + s.dropped_unknown_session + s.dropped_replay_or_old, 0u) << name;
  }
}

TEST(FuzzCorpus, WriteSeedsWhenAsked) {
  const char* dir = std::getenv("NETAPPROX_WRITE_FUZZ_CORPUS");
  const auto seeds = corpus_seeds();
  EXPECT_GE(seeds.size(), 15u);
  if (!dir) GTEST_SKIP() << "set NETAPPROX_WRITE_FUZZ_CORPUS=<dir> to write the fuzz seed corpus";
  for (const auto& [name, bytes] : seeds) {
    const std::string path = std::string(dir) + "/" + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr) << path;
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
}

}  // namespace
