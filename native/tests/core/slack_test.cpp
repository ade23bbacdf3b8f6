// A job's slack (native/src/core/slack.*) against the paper's equations, computed independently here:
//   eq. 1   TLR_{i+1} = ((1 - MSR) N - lost) / (N - delivered),  TLR_0 = 1 - MSR
// plus the multi-group generalisation ("pooled slack"), the packet-level TLR and the slack-based priority
// classes (section 5.2).
#include "core/slack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace netapprox::atp;
using slack::GroupProgress;

namespace {

// target = ceil(MSR * N), computed independently of slack::target_of (tolerance so 0.8 * 10 is 8).
uint32_t target_of(double msr, uint32_t n) {
  return static_cast<uint32_t>(std::clamp(std::ceil(msr * n - 1e-9), 0.0, double(n)));
}

double eq1(double msr, double n, double lost, double delivered) { return ((1.0 - msr) * n - lost) / (n - delivered); }

// ============================================================================================ eq. 1, one group

// The relation tested: with target = ceil(MSR * N) the loss allowance is N - target = floor((1 - MSR) N), so
//   target_loss_rate({N, target, delivered, lost}) = clamp(max(0, (N - target) - lost) / (N - delivered), 0, 1)
// which is eq. 1 with (1 - MSR) N rounded down to whole messages. Where MSR * N is an integer the two are equal
// exactly; elsewhere they differ by less than 1 / (N - delivered).
TEST(SlackTest, Eq1OneGroupOverAGrid) {
  int checked_exactly = 0;
  for (uint32_t n : {1u, 2u, 3u, 7u, 8u, 10u, 16u, 100u, 1000u, 12345u}) {
    for (double msr : {0.0, 0.1, 0.125, 0.25, 0.3, 0.5, 0.75, 0.8, 0.9, 0.99, 1.0}) {
      const uint32_t target = target_of(msr, n);
      const uint32_t allowance = n - target;
      ASSERT_EQ(allowance, static_cast<uint32_t>(std::floor((1.0 - msr) * n + 1e-9))) << n << " " << msr;
      const bool integral = std::fabs(msr * n - std::round(msr * n)) < 1e-9;
      for (uint32_t delivered = 0; delivered < n; delivered += std::max<uint32_t>(1, n / 7)) {
        for (uint32_t lost = 0; lost + delivered <= n; lost += std::max<uint32_t>(1, n / 5)) {
          const double got = slack::target_loss_rate({{n, target, delivered, lost}});
          const double expect =
              std::clamp(std::max(0.0, double(allowance) - double(lost)) / double(n - delivered), 0.0, 1.0);
          EXPECT_DOUBLE_EQ(got, expect) << n << " " << msr << " " << delivered << " " << lost;
          const double paper = eq1(msr, n, lost, delivered);
          if (paper >= 0 && paper <= 1) {
            EXPECT_LT(std::fabs(got - paper), 1.0 / double(n - delivered) + 1e-12);
            if (integral) {
              EXPECT_NEAR(got, paper, 1e-12) << n << " " << msr << " " << delivered << " " << lost;
              ++checked_exactly;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked_exactly, 500);
}

TEST(SlackTest, Tlr0IsOneMinusMsr) {
  for (uint32_t n : {1u, 4u, 8u, 10u, 20u, 100u, 1000u}) {
    for (double msr : {0.0, 0.25, 0.5, 0.75, 0.8, 0.9, 1.0}) {
      const double tlr0 = slack::target_loss_rate({{n, target_of(msr, n), 0, 0}});
      // TLR_0 = (N - target) / N = 1 - ceil(MSR N) / N; = 1 - MSR whenever MSR N is a whole number
      EXPECT_DOUBLE_EQ(tlr0, 1.0 - double(target_of(msr, n)) / n);
      if (std::fabs(msr * n - std::round(msr * n)) < 1e-9) {
        EXPECT_NEAR(tlr0, 1.0 - msr, 1e-12) << n << " " << msr;
      }
    }
  }
  // When MSR N is fractional the target rounds up, so TLR_0 is a little below 1 - MSR (never above it).
  EXPECT_DOUBLE_EQ(slack::target_loss_rate({{3, target_of(0.5, 3), 0, 0}}), 1.0 / 3.0);  // target 2
  EXPECT_LT(slack::target_loss_rate({{3, target_of(0.5, 3), 0, 0}}), 0.5);
}

TEST(SlackTest, Eq1EdgeCases) {
  // Losses beyond the allowance: no slack left, TLR 0 (never negative).
  EXPECT_EQ(slack::target_loss_rate({{10, 5, 0, 6}}), 0.0);
  EXPECT_EQ(slack::target_loss_rate({{10, 5, 0, 5}}), 0.0);
  // Everything delivered: nothing left to lose, TLR 0 (no division by zero).
  EXPECT_EQ(slack::target_loss_rate({{10, 5, 10, 0}}), 0.0);
  // delivered above N (cannot happen in the engine) is treated as N.
  EXPECT_EQ(slack::target_loss_rate({{10, 5, 11, 0}}), 0.0);
  // More slack than messages left (delivered beyond the target): clamped to 1.
  EXPECT_EQ(slack::target_loss_rate({{10, 5, 8, 0}}), 1.0);
  // Exact group: no allowance.
  EXPECT_EQ(slack::target_loss_rate({{10, 10, 3, 0}}), 0.0);
  // MSR 0: everything may be lost.
  EXPECT_EQ(slack::target_loss_rate({{10, 0, 0, 0}}), 1.0);
  EXPECT_NEAR(slack::target_loss_rate({{10, 0, 0, 9}}), 0.1, 1e-15);  // 10 - 9 over 10
  EXPECT_EQ(slack::target_loss_rate({{10, 0, 9, 0}}), 1.0);           // 10 over 1, clamped
  // No groups at all.
  EXPECT_EQ(slack::target_loss_rate({}), 0.0);
  EXPECT_EQ(slack::target_loss_rate({}, true), 0.0);
  // TLR evolves as in the paper: losing messages lowers it, delivering raises it.
  const double t0 = slack::target_loss_rate({{100, 80, 0, 0}});
  EXPECT_NEAR(t0, 0.2, 1e-12);
  EXPECT_LT(slack::target_loss_rate({{100, 80, 0, 10}}), t0);
  EXPECT_GT(slack::target_loss_rate({{100, 80, 50, 0}}), t0);
  EXPECT_NEAR(slack::target_loss_rate({{100, 80, 50, 10}}), 10.0 / 50.0, 1e-12);
}

// ============================================================================================ eq. 1, several groups

// Pooled slack: TLR = sum_g max(0, (N_g - target_g) - lost_g) / sum_g (N_g - delivered_g).
TEST(SlackTest, PooledGeneralisationHandComputed) {
  // two approximate groups: (5 - 1) + (10 - 4) = 10 over (10 - 2) + (20 - 0) = 28
  const std::vector<GroupProgress> two = {{10, 5, 2, 1}, {20, 10, 0, 4}};
  EXPECT_NEAR(slack::target_loss_rate(two), 10.0 / 28.0, 1e-15);
  EXPECT_NEAR(slack::target_loss_rate(two, true), 10.0 / 28.0, 1e-15);
  // an exact group adds no allowance but its 7 undelivered messages count in the denominator ...
  std::vector<GroupProgress> three = two;
  three.push_back({10, 10, 3, 0});
  EXPECT_NEAR(slack::target_loss_rate(three), 10.0 / 35.0, 1e-15);
  // ... except in the approx_only variant (the priority class of approximate packets)
  EXPECT_NEAR(slack::target_loss_rate(three, true), 10.0 / 28.0, 1e-15);
  // a group that lost more than its allowance contributes 0, not a negative amount
  EXPECT_NEAR(slack::target_loss_rate({{10, 5, 0, 7}, {10, 5, 0, 0}}), 5.0 / 20.0, 1e-15);
  EXPECT_NEAR(slack::target_loss_rate({{10, 5, 0, 7}, {10, 5, 0, 0}, {4, 4, 0, 0}}), 5.0 / 24.0, 1e-15);
  // finished groups (all delivered) still contribute their unused allowance; here 3 + 2 over 0 + 10
  EXPECT_NEAR(slack::target_loss_rate({{10, 7, 10, 0}, {10, 8, 0, 0}}), 5.0 / 10.0, 1e-15);
  // only exact groups
  EXPECT_EQ(slack::target_loss_rate({{5, 5, 1, 0}, {6, 6, 0, 0}}), 0.0);
  EXPECT_EQ(slack::target_loss_rate({{5, 5, 1, 0}, {6, 6, 0, 0}}, true), 0.0);  // nothing remains: 0
  // the pooled value is clamped to 1 as well
  EXPECT_EQ(slack::target_loss_rate({{10, 0, 5, 0}, {10, 0, 9, 0}}), 1.0);
}

TEST(SlackTest, PooledGeneralisationProperties) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 2000; ++trial) {
    // One group equals eq. 1's single-group form.
    const uint32_t n = 1 + rng() % 500;
    const uint32_t t = rng() % (n + 1);
    const uint32_t d = rng() % (n + 1);
    const uint32_t l = rng() % (n - d + 1);
    const GroupProgress g{n, t, d, l};
    // Splitting a group into two identical halves changes nothing (slack is pooled, not averaged).
    if (n % 2 == 0 && t % 2 == 0 && d % 2 == 0 && l % 2 == 0) {
      const GroupProgress h{n / 2, t / 2, d / 2, l / 2};
      EXPECT_NEAR(slack::target_loss_rate({g}), slack::target_loss_rate({h, h}), 1e-12);
    }
    // The pooled TLR lies between the smallest and largest per-group TLR (a mediant), as long as no group is over
    // its allowance or clamped.
    const uint32_t n2 = 1 + rng() % 500;
    const uint32_t t2 = rng() % (n2 + 1);
    const uint32_t d2 = rng() % (std::min(n2, t2) + 1);
    const uint32_t d1 = std::min(d, t);
    const GroupProgress a{n, t, d1, 0}, b{n2, t2, d2, 0};
    const double ta = slack::target_loss_rate({a}), tb = slack::target_loss_rate({b});
    const double pooled = slack::target_loss_rate({a, b});
    EXPECT_GE(pooled, std::min(ta, tb) - 1e-12);
    EXPECT_LE(pooled, std::max(ta, tb) + 1e-12);
    // Adding an exact group never raises the TLR; approx_only ignores it.
    const GroupProgress ex{10, 10, static_cast<uint32_t>(rng() % 10), 0};
    EXPECT_LE(slack::target_loss_rate({a, b, ex}), pooled + 1e-12);
    EXPECT_NEAR(slack::target_loss_rate({a, b, ex}, true), slack::target_loss_rate({a, b}, true), 1e-12);
  }
}

// ============================================================================================ priority classes

TEST(SlackTest, PriorityClassThresholdsAreKOver8) {
  // Exact traffic always uses class 0, whatever the TLR.
  for (double t : {0.0, 0.01, 0.5, 1.0}) EXPECT_EQ(slack::priority_class(t, true), 0);
  // TLR 0 goes to class 1 (class 0 is reserved for exact jobs), TLR 1 to class 7 (the lowest priority).
  EXPECT_EQ(slack::priority_class(0.0, false), 1);
  EXPECT_EQ(slack::priority_class(1.0, false), 7);
  // Class k holds (k-1)/8 < TLR <= k/8: a TLR exactly on the threshold k/8 goes to class k, just above to k + 1.
  for (int k = 1; k <= 7; ++k) {
    const double th = k / 8.0;
    EXPECT_EQ(slack::priority_class(th, false), k) << k;
    EXPECT_EQ(slack::priority_class(th - 1e-9, false), k) << k;
    EXPECT_EQ(slack::priority_class(std::nextafter(th, 0.0), false), k) << k;
    EXPECT_EQ(slack::priority_class(th + 1e-9, false), std::min(k + 1, 7)) << k;
    EXPECT_EQ(slack::priority_class((k - 0.5) / 8.0, false), k) << k;
  }
  // Everything above 7/8 is class 7 (8 queues: 0 exact + 7 approximate).
  EXPECT_EQ(slack::priority_class(0.875 + 1e-9, false), 7);
  EXPECT_EQ(slack::priority_class(0.95, false), 7);
  // Tiny TLRs are class 1, out-of-range inputs are clamped.
  EXPECT_EQ(slack::priority_class(1e-15, false), 1);
  EXPECT_EQ(slack::priority_class(1e-6, false), 1);
  EXPECT_EQ(slack::priority_class(-0.5, false), 1);
  EXPECT_EQ(slack::priority_class(3.0, false), 7);
  // A TLR that is a ratio of message counts lands on the threshold exactly: 3 of 8 -> class 3, 4 of 16 -> 2.
  EXPECT_EQ(slack::priority_class(slack::target_loss_rate({{8, 5, 0, 0}}), false), 3);
  EXPECT_EQ(slack::priority_class(slack::target_loss_rate({{16, 12, 0, 0}}), false), 2);
  // Monotone in the TLR.
  int prev = 1;
  for (int i = 0; i <= 10000; ++i) {
    const int k = slack::priority_class(i / 10000.0, false);
    EXPECT_GE(k, prev);
    prev = k;
  }
}

}  // namespace

// A job is needy (sends in class 0 in Full) when its approximate allowance is spent and it still needs at most the
// given fraction of its target; exact groups neither count nor make a job needy.
TEST(SlackTest, NeedsExactServiceOnlyWithoutSlackNearItsTarget) {
  using slack::GroupProgress;
  // N 100, target 75: allowance 25.
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 10, 24}}, 1.0)) << "one loss still affordable";
  EXPECT_TRUE(slack::needs_exact_service({{100, 75, 10, 25}}, 1.0)) << "allowance spent, 65 of 75 needed";
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 10, 25}}, 0.75)) << "65 > 0.75 x 75";
  EXPECT_TRUE(slack::needs_exact_service({{100, 75, 20, 25}}, 0.75)) << "55 <= 56.25";
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 20, 25}}, 0.0)) << "fraction 0: never";
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 75, 25}}, 1.0)) << "target met: nothing needed";
  EXPECT_FALSE(slack::needs_exact_service({{100, 100, 0, 0}}, 1.0)) << "exact groups only";
  // Pooled over approximate groups: the second group's allowance keeps the job out of class 0; an exact group
  // does not.
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 20, 25}, {100, 50, 0, 0}}, 1.0));
  EXPECT_TRUE(slack::needs_exact_service({{100, 75, 20, 25}, {100, 100, 0, 0}}, 1.0));
}

// A job that repairs its losses (multi-segment messages, EngineConfig::repair_after_segments) is needy on the
// fraction alone: its allowance does not keep it in a lossy approximate queue.
TEST(SlackTest, AJobThatRepairsItsLossesIsNeedyOnTheFractionAlone) {
  // N 100, target 75, nothing lost: the whole allowance is left.
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 20, 0}}, 0.75)) << "allowance left: not needy";
  EXPECT_TRUE(slack::needs_exact_service({{100, 75, 20, 0}}, 0.75, true)) << "repairs: 55 <= 56.25 needed";
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 10, 0}}, 0.75, true)) << "65 > 0.75 x 75: not yet";
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 20, 0}}, 0.0, true)) << "fraction 0: never";
  EXPECT_FALSE(slack::needs_exact_service({{100, 75, 75, 0}}, 1.0, true)) << "target met";
  EXPECT_FALSE(slack::needs_exact_service({{100, 100, 0, 0}}, 1.0, true)) << "exact groups only";
}

// Deadline escalation (JobSpec::deadline): the cap follows the worst group's lag behind delivering its target evenly
// over the deadline, ceil(8 x (1 - lag)) - 1, so a group that delivered nothing is in class 0 after 7/8 of it.
TEST(SlackTest, DeadlineCapFollowsTheWorstGroupsLag) {
  const uint64_t d = 800;
  // {size, target, delivered, lost}
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 0, d), 7) << "at the start: no limit";
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 100, d), 6) << "1/8 late: one class up";
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 400, d), 3);
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 699, d), 1);
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 700, d), 0) << "7/8 of the deadline: class 0";
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 5000, d), 0) << "past the deadline";
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 25, 0}}, 400, d), 7) << "on schedule: no limit";
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 40, 0}}, 400, d), 7) << "ahead of schedule";
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 25, 0}}, 800, d), 3) << "half done at the deadline";
  // The worst group decides; groups at their target and exact groups do not count.
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 25, 0}, {100, 50, 0, 0}}, 400, d), 3);
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 50, 0}, {100, 100, 0, 0}}, 5000, d), 7);
  EXPECT_EQ(slack::deadline_class_cap({{100, 50, 0, 0}}, 5000, 0), 7) << "no deadline";
  // Monotone: later never lifts the cap, more delivered never lowers it.
  for (uint64_t t = 0; t + 10 <= 1000; t += 10)
    for (uint32_t del = 0; del < 50; ++del) {
      EXPECT_LE(slack::deadline_class_cap({{100, 50, del, 0}}, t + 10, d),
                slack::deadline_class_cap({{100, 50, del, 0}}, t, d));
      EXPECT_GE(slack::deadline_class_cap({{100, 50, del + 1, 0}}, t, d),
                slack::deadline_class_cap({{100, 50, del, 0}}, t, d));
    }
}
