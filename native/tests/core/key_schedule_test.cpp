// The session key schedule (crypto::derive_session): fresh randomness from both ends gives every session its own
// key, so a session recorded earlier cannot be replayed into a new one and no (key, packet number) pair repeats.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/crypto.hpp"
#include "core/wire.hpp"
#include "sim_jobs.hpp"

using namespace netapprox::atp;
using namespace netapprox::atp::sim;

namespace {

const uint8_t kMaster[kKeyBytes] = {0x4e, 0x41, 0x2d, 0x74, 0x65, 0x73, 0x74};

void nonce(uint8_t n[crypto::kSessionNonceBytes], uint8_t fill) { std::memset(n, fill, crypto::kSessionNonceBytes); }

crypto::SessionSecrets derive(uint8_t ni_fill, uint8_t nr_fill) {
  uint8_t ni[crypto::kSessionNonceBytes], nr[crypto::kSessionNonceBytes];
  nonce(ni, ni_fill);
  nonce(nr, nr_fill);
  crypto::SessionSecrets s;
  crypto::derive_session(kMaster, ni, nr, &s);
  return s;
}

bool same_key(const crypto::SessionSecrets& a, const crypto::SessionSecrets& b) {
  return std::memcmp(a.key, b.key, kKeyBytes) == 0;
}

// Everything an initiator sends for one small job, from session open to the last datagram it would send
// unprompted: what an eavesdropper records.
std::vector<std::vector<uint8_t>> record_initiator(const crypto::SessionSecrets& s, TimeNs now) {
  Engine a(test_config());
  EXPECT_EQ(a.open_session(s.session_id, s.key, Sim::kPeerB, true, now), Status::kOk);
  Job j = make_job(7, {{6, 1.0}}, 1000);
  EXPECT_EQ(a.start_job(s.session_id, j.spec, now), Status::kOk);
  for (uint32_t i = 0; i < 6; ++i) {
    auto d = payload(7, i, 1000);
    EXPECT_EQ(a.submit(s.session_id, 7, 0, i, d.data(), d.size(), now), Status::kOk);
  }
  std::vector<std::vector<uint8_t>> out;
  uint8_t buf[2048];
  Transmit t;
  while (out.size() < 64 && a.poll_transmit(now, buf, sizeof buf, &t)) out.emplace_back(buf, buf + t.len);
  return out;
}

}  // namespace

TEST(KeyScheduleTest, EveryFreshNonceGivesANewKeyAndSessionId) {
  const auto base = derive(1, 2);
  EXPECT_TRUE(same_key(base, derive(1, 2)));  // both ends compute the same secrets
  EXPECT_EQ(base.session_id, derive(1, 2).session_id);
  // a new responder nonce (a replayed initiator nonce), a new initiator nonce, or swapped roles: new secrets
  for (const auto& other : {derive(1, 3), derive(3, 2), derive(2, 1)}) {
    EXPECT_FALSE(same_key(base, other));
    EXPECT_NE(base.session_id, other.session_id);
  }
  uint8_t other_master[kKeyBytes] = {9};
  uint8_t ni[crypto::kSessionNonceBytes], nr[crypto::kSessionNonceBytes];
  nonce(ni, 1);
  nonce(nr, 2);
  crypto::SessionSecrets s;
  crypto::derive_session(other_master, ni, nr, &s);
  EXPECT_FALSE(same_key(base, s));
  EXPECT_NE(s.session_id, 0u);
}

// Two sessions under one secret never seal with the same (key, direction, packet number): the first datagrams
// of two sessions carry the same packet numbers but tags that differ.
TEST(KeyScheduleTest, TwoSessionsUnderOneSecretNeverShareANonceAndKey) {
  const auto s1 = derive(1, 2), s2 = derive(1, 5);
  auto d1 = record_initiator(s1, 0), d2 = record_initiator(s2, 0);
  ASSERT_FALSE(d1.empty());
  ASSERT_FALSE(d2.empty());
  wire::Header h1, h2;
  ASSERT_EQ(wire::parse_header(d1[0].data(), d1[0].size(), &h1), wire::ParseError::kOk);
  ASSERT_EQ(wire::parse_header(d2[0].data(), d2[0].size(), &h2), wire::ParseError::kOk);
  EXPECT_EQ(h1.packet_number, h2.packet_number);  // numbering restarts per session ...
  EXPECT_NE(h1.session, h2.session);
  EXPECT_FALSE(crypto::verify(s2.key, true, h1.packet_number, d1[0].data(), d1[0].size() - crypto::kTagBytes,
                              d1[0].data() + d1[0].size() - crypto::kTagBytes));  // ... under another key
}

// An attacker who recorded a whole session (the initiator's nonce travels in clear) replays it against a responder
// that opened a new session for the same initiator nonce: the responder's fresh nonce changed the key, so every
// replayed datagram is dropped as unauthenticated, even if it is re-addressed to the new session id.
TEST(KeyScheduleTest, ReplayedSessionIsRejectedByTheResponder) {
  const auto old_session = derive(1, 2);
  const auto recorded = record_initiator(old_session, 0);
  ASSERT_GE(recorded.size(), 2u);

  const auto new_session = derive(1, 8);  // the replayed initiator nonce, a fresh responder nonce
  Engine b(test_config());
  ASSERT_EQ(b.open_session(new_session.session_id, new_session.key, Sim::kPeerA, false, 0), Status::kOk);
  uint64_t fed = 0;
  for (auto d : recorded) {
    b.on_datagram(d.data(), d.size(), Sim::kPeerA, 1);  // as recorded: an unknown session id
    wire::Header h;
    ASSERT_EQ(wire::parse_header(d.data(), d.size(), &h), wire::ParseError::kOk);
    for (int i = 0; i < 8; ++i) d[8 + i] = static_cast<uint8_t>(new_session.session_id >> (56 - 8 * i));
    wire::Header moved;
    if (wire::parse_header(d.data(), d.size(), &moved) != wire::ParseError::kOk ||
        moved.session != new_session.session_id)
      GTEST_FAIL() << "the session id is not where this test expects it in the header";
    b.on_datagram(d.data(), d.size(), Sim::kPeerA, 1);  // re-addressed to the new session
    ++fed;
  }
  EXPECT_EQ(b.stats().dropped_unknown_session, fed);
  EXPECT_EQ(b.stats().dropped_auth, fed);
  Event ev;
  while (b.poll_event(&ev)) EXPECT_NE(ev.type, EventType::kJobStarted) << "a replayed job was accepted";
}
