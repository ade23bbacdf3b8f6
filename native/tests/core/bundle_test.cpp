// DATA bundles (docs/protocol.md section 1): several whole small messages of one job in one datagram. Per-message
// accounting and the MSR guarantee must hold exactly as with one message per datagram, also when a bundle is lost.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/crypto.hpp"
#include "core/wire.hpp"
#include "sim_jobs.hpp"

using namespace netapprox::atp;
using namespace netapprox::atp::sim;

namespace {

// The message ids of a DATA bundle A sent (the body is parsed without authentication: the test is the sender).
std::vector<MessageId> bundle_ids(const uint8_t* p, size_t len) {
  wire::Header h;
  if (wire::parse_header(p, len, &h) != wire::ParseError::kOk || h.type != wire::PacketType::kDataBundle) return {};
  wire::Bundle b;
  EXPECT_EQ(wire::parse_bundle(p + wire::kHeaderBytes, h.body_len, &b), wire::ParseError::kOk);
  std::vector<MessageId> ids;
  for (const auto& e : b.entries) ids.push_back(e.msg);
  return ids;
}

uint32_t group_index(const Job& j, MessageId m) {
  uint32_t base = 0;
  for (uint32_t g = 0; g < j.spec.groups.size(); ++g) {
    if (m < base + j.spec.groups[g].size) return g;
    base += j.spec.groups[g].size;
  }
  return UINT32_MAX;
}

}  // namespace

// Two exact groups of 100-byte messages: bundles carry messages of both groups in one datagram, and every message
// still arrives once, intact and in order within its group.
TEST(BundleTest, OneDatagramCarriesMessagesOfSeveralGroupsExactAndInOrder) {
  Sim s(test_config(), test_config(), LinkConfig{}, LinkConfig{}, 3);
  Job j = make_job(1, {{40, 1.0}, {40, 1.0}}, 100);
  size_t bundles = 0, data = 0, mixed = 0;
  s.on_transmit_a = [&](const uint8_t* p, size_t len, uint8_t) {
    if (p[3] == static_cast<uint8_t>(wire::PacketType::kData)) data++;
    auto ids = bundle_ids(p, len);
    if (ids.empty()) return;
    bundles++;
    EXPECT_LE(len, test_config().max_datagram);
    std::set<uint32_t> groups;
    for (MessageId m : ids) groups.insert(group_index(j, m));
    if (groups.size() > 1) mixed++;
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));  // exact messages go in order
  };
  submit_all(s, j);
  ASSERT_TRUE(s.run([&] { return report_of(s.events_b, 1) && report_of(s.events_a, 1); }, 20 * kSec));
  EXPECT_GT(bundles, 0u);
  EXPECT_GT(mixed, 0u) << "no bundle spanned two groups";
  EXPECT_LT(bundles + data, 80u / 4) << "small messages were not coalesced";
  ASSERT_EQ(s.delivered_b.size(), 80u);
  for (MessageId i = 0; i < 80; ++i) {
    EXPECT_EQ(s.delivered_b[i].message, i);
    EXPECT_EQ(s.delivered_b[i].data, payload(1, i, 100));
  }
  EXPECT_EQ(report_of(s.events_b, 1)->status, Status::kOk);
  EXPECT_EQ(report_of(s.events_a, 1)->status, Status::kOk);
}

// The loss of a bundle loses every message in it. Approximate messages are given up within their groups'
// allowance (never delivered, reported lost on both ends); exact ones are retransmitted and arrive in order.
// The receiver's and the sender's per-group counts agree with what the application saw.
TEST(BundleTest, LossOfABundleLosesAllItsMessagesAndTheAccountingStaysRight) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Sim s(test_config(), test_config(), LinkConfig{}, LinkConfig{}, seed);
    // MRDF sends the exact group first (class 0), then the approximate ones in id order.
    Job j = make_job(2, {{21, 0.5}, {19, 0.5}, {30, 1.0}}, 90 + 10 * seed);  // 21: some bundle spans groups 0, 1
    std::set<MessageId> dropped_approx, dropped_exact;
    s.drop_a = [&](const uint8_t* p, size_t len) {
      auto ids = bundle_ids(p, len);
      if (ids.size() < 2) return false;
      std::set<uint32_t> groups;
      for (MessageId m : ids) groups.insert(group_index(j, m));
      if (dropped_exact.empty() && groups == std::set<uint32_t>{2}) {
        dropped_exact.insert(ids.begin(), ids.end());
        return true;
      }
      if (dropped_approx.empty() && groups == std::set<uint32_t>{0, 1}) {  // a bundle spanning two groups
        dropped_approx.insert(ids.begin(), ids.end());
        return true;
      }
      return false;
    };
    submit_all(s, j);
    ASSERT_TRUE(s.run([&] { return report_of(s.events_b, 2) && report_of(s.events_a, 2); }, 20 * kSec))
        << "seed " << seed;
    ASSERT_FALSE(dropped_exact.empty()) << "seed " << seed;
    ASSERT_FALSE(dropped_approx.empty()) << "seed " << seed;

    std::map<uint32_t, std::vector<MessageId>> got;  // by group index, in delivery order
    for (const auto& d : s.delivered_b) {
      EXPECT_EQ(d.data, payload(2, d.message, 90 + 10 * seed));
      got[group_index(j, d.message)].push_back(d.message);
    }
    // Approximate: none of the lost bundle's messages arrives (given up, not resent), and each is reported lost.
    std::set<MessageId> lost_events;
    for (const auto& e : s.events_b)
      if (e.type == EventType::kMessageLost) lost_events.insert(e.message);
    for (MessageId m : dropped_approx) {
      for (uint32_t g : {0u, 1u})
        EXPECT_EQ(std::count(got[g].begin(), got[g].end(), m), 0) << "message " << m << " seed " << seed;
    }
    // Exact: everything, in order, the dropped bundle's messages included.
    std::vector<MessageId> want(30);
    for (MessageId i = 0; i < 30; ++i) want[i] = 40 + i;
    EXPECT_EQ(got[2], want) << "seed " << seed;

    auto rb = report_of(s.events_b, 2);
    auto ra = report_of(s.events_a, 2);
    ASSERT_EQ(rb->status, Status::kOk);
    ASSERT_EQ(ra->status, Status::kOk);
    EXPECT_GE(ra->packets_retransmitted, 1u);
    for (uint32_t g = 0; g < 3; ++g) {
      const auto& spec = j.spec.groups[g];
      EXPECT_GE(got[g].size(), target(spec.msr, spec.size)) << "group " << g << " seed " << seed;
      EXPECT_EQ(rb->groups[g].delivered, got[g].size()) << "group " << g;
      EXPECT_EQ(rb->groups[g].delivered + rb->groups[g].lost, spec.size) << "group " << g;
      EXPECT_EQ(ra->groups[g].delivered, rb->groups[g].delivered) << "group " << g << " seed " << seed;
      for (MessageId m : dropped_approx)
        if (group_index(j, m) == g) {
          const auto& lost = rb->groups[g].lost_ranges;
          EXPECT_TRUE(
              std::any_of(lost.begin(), lost.end(), [m](const IdRange& r) { return r.first <= m && m <= r.last; }))
              << "message " << m;
        }
    }
  }
}

// Random loss, reordering and duplication on a job of small messages in mixed groups: the targets hold, exact
// groups are complete and in order (seeded, many trials).
TEST(BundleTest, TargetsHoldUnderRandomLossWithBundles) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    LinkConfig link;
    link.loss = 0.05 * double(seed % 5);
    link.jitter = seed % 2 ? 200'000 : 0;
    link.duplicate = 0.02;
    Sim s(test_config(), test_config(), link, link, seed);
    Job j = make_job(5, {{200, 0.6}, {150, 1.0}, {100, 0.9}}, 64 + seed * 7);
    size_t bundles = 0;
    s.on_transmit_a = [&](const uint8_t* p, size_t, uint8_t) {
      if (p[3] == static_cast<uint8_t>(wire::PacketType::kDataBundle)) bundles++;
    };
    submit_all(s, j);
    ASSERT_TRUE(s.run([&] { return report_of(s.events_b, 5) != nullptr; }, 120 * kSec)) << "seed " << seed;
    EXPECT_GT(bundles, 0u);
    std::map<uint32_t, std::vector<MessageId>> got;
    for (const auto& d : s.delivered_b) got[group_index(j, d.message)].push_back(d.message);
    for (uint32_t g = 0; g < 3; ++g)
      EXPECT_GE(got[g].size(), target(j.spec.groups[g].msr, j.spec.groups[g].size)) << "seed " << seed;
    ASSERT_EQ(got[1].size(), 150u);
    for (MessageId i = 0; i < 150; ++i) EXPECT_EQ(got[1][i], 200 + i) << "seed " << seed;
  }
}

// A peer configured without bundles (coalesce_messages off) does not advertise them, and once the sender heard
// from it, gets plain DATA only. An endpoint with coalesce_messages off sends exactly the previous wire format
// (no bundle flag, no bundles), which is what peers of the previous version speak.
TEST(BundleTest, PeerWithoutBundlesGetsPlainData) {
  EngineConfig off = test_config();
  off.coalesce_messages = false;
  Sim s(test_config(), off, LinkConfig{}, LinkConfig{}, 4);
  Job j = make_job(3, {{3000, 1.0}}, 100);
  size_t bundles_after_heard = 0, data = 0;
  TimeNs heard = kNever;  // B's first packet has certainly arrived at A (one link delay after it left)
  s.on_transmit_b = [&](const uint8_t* p, size_t, uint8_t) {
    EXPECT_EQ(p[4] & wire::kFlagBundles, 0);
    EXPECT_NE(p[3], static_cast<uint8_t>(wire::PacketType::kDataBundle));
    if (heard == kNever) heard = s.now() + LinkConfig{}.delay;
  };
  s.on_transmit_a = [&](const uint8_t* p, size_t, uint8_t) {
    if (heard == kNever || s.now() <= heard) return;
    if (p[3] == static_cast<uint8_t>(wire::PacketType::kDataBundle)) bundles_after_heard++;
    if (p[3] == static_cast<uint8_t>(wire::PacketType::kData)) data++;
  };
  submit_all(s, j);
  ASSERT_TRUE(s.run([&] { return report_of(s.events_b, 3) != nullptr; }, 20 * kSec));
  EXPECT_EQ(bundles_after_heard, 0u);
  EXPECT_GT(data, 100u);
  ASSERT_EQ(s.delivered_b.size(), 3000u);
  for (MessageId i = 0; i < 3000; ++i) EXPECT_EQ(s.delivered_b[i].message, i);
}
