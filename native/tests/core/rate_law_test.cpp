// The rate laws (native/src/core/rate_law.*) against the paper's equations, computed independently here:
//   eq. 2   rho < TLR:  R' = (1 - m) R + m R_max
//   eq. 3   otherwise:  R' = R (1 - rho / 2)
// plus tlr_floor, the [R_min, R_max] clamp, and the mode table (names, switches, the law each mode runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/engine.hpp"
#include "core/rate_law.hpp"

using namespace netapprox::atp;

namespace {

// ============================================================================================ eqs. 2-3

constexpr double kRmax = 1.25e9;  // 10 Gbit/s in bytes/s
constexpr double kRmin = 1.472e6; // 1472 bytes per 1 ms RTT

TEST(RateLawTest, Eq2IncreaseWhenLossBelowTlr) {
  for (double m : {0.01, 0.125, 0.5, 1.0})
    for (double rate : {kRmin, 1e7, 5e8, kRmax})
      for (auto [rho, tlr] : std::vector<std::pair<double, double>>{{0.0, 0.2}, {0.19, 0.2}, {0.5, 0.9}, {0.0, 1.0}})
        EXPECT_NEAR(rate_law::paper_next_rate(rate, rho, tlr, 0.0, m, kRmax, kRmin), (1 - m) * rate + m * kRmax, 1e-3)
            << m << " " << rate << " " << rho << " " << tlr;
  // m = 1 jumps straight to R_max.
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(1e6, 0.0, 0.5, 0.0, 1.0, kRmax, kRmin), kRmax);
}

TEST(RateLawTest, Eq3DecreaseWhenLossAtOrAboveTlr) {
  for (double rate : {1e7, 5e8, kRmax})
    for (auto [rho, tlr] : std::vector<std::pair<double, double>>{
             {0.2, 0.2},  // equality takes eq. 3 (eq. 2 needs rho < TLR)
             {0.3, 0.2}, {1.0, 0.2}, {0.05, 0.0}, {0.5, 0.5}, {1.0, 1.0}})
      EXPECT_NEAR(rate_law::paper_next_rate(rate, rho, tlr, 0.0, 0.125, kRmax, kRmin),
                  std::max(rate * (1 - rho / 2), kRmin), 1e-3)
          << rate << " " << rho << " " << tlr;
  // rho = 1 halves the rate.
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(1e8, 1.0, 0.5, 0.0, 0.125, kRmax, kRmin), 5e7);
}

TEST(RateLawTest, TlrFloorLetsExactTrafficGrow) {
  // With TLR = 0 (exact traffic, or an approximate job out of slack) eq. 2 can never fire: rho < 0 is impossible,
  // and a loss-free epoch (rho = 0) gives R (1 - 0) = R - the rate would never grow back after a decrease.
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(1e8, 0.0, 0.0, 0.0, 0.125, kRmax, kRmin), 1e8);
  // tlr_floor: rate control treats TLR as max(TLR, floor), so a clean epoch increases the rate ...
  EXPECT_NEAR(rate_law::paper_next_rate(1e8, 0.0, 0.0, 0.01, 0.125, kRmax, kRmin), 0.875 * 1e8 + 0.125 * kRmax, 1e-3);
  EXPECT_NEAR(rate_law::paper_next_rate(1e8, 0.009, 0.0, 0.01, 0.125, kRmax, kRmin), 0.875 * 1e8 + 0.125 * kRmax, 1e-3);
  // ... and losses at or above the floor still decrease it.
  EXPECT_NEAR(rate_law::paper_next_rate(1e8, 0.01, 0.0, 0.01, 0.125, kRmax, kRmin), 1e8 * (1 - 0.005), 1e-3);
  // A TLR above the floor is used as is.
  EXPECT_NEAR(rate_law::paper_next_rate(1e8, 0.2, 0.3, 0.01, 0.125, kRmax, kRmin), 0.875 * 1e8 + 0.125 * kRmax, 1e-3);
  EXPECT_NEAR(rate_law::paper_next_rate(1e8, 0.3, 0.3, 0.5, 0.125, kRmax, kRmin), 0.875 * 1e8 + 0.125 * kRmax, 1e-3);
}

TEST(RateLawTest, RateIsClampedToRminAndRmax) {
  // R_min: the starvation guard holds however hard and often eq. 3 cuts.
  double r = kRmax;
  for (int i = 0; i < 200; ++i) r = rate_law::paper_next_rate(r, 1.0, 0.1, 0.01, 0.125, kRmax, kRmin);
  EXPECT_DOUBLE_EQ(r, kRmin);
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(kRmin * 1.5, 1.0, 0.1, 0.01, 0.125, kRmax, kRmin), kRmin);
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(kRmin * 0.5, 0.0, 0.1, 0.01, 0.125, kRmax, kRmin),
                   std::max(kRmin, 0.875 * kRmin * 0.5 + 0.125 * kRmax));
  // R_max: increases converge to it and never pass it; a rate above it is brought back.
  r = kRmin;
  for (int i = 0; i < 1000; ++i) {
    r = rate_law::paper_next_rate(r, 0.0, 0.5, 0.01, 0.125, kRmax, kRmin);
    ASSERT_LE(r, kRmax);
  }
  EXPECT_NEAR(r, kRmax, 1.0);
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(2 * kRmax, 0.0, 0.5, 0.01, 0.125, kRmax, kRmin), kRmax);
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(4 * kRmax, 0.1, 0.05, 0.01, 0.125, kRmax, kRmin), kRmax);
  // R_min above R_max (a tiny line rate with a short RTT): R_max wins.
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(1e5, 1.0, 0.1, 0.01, 0.125, 1e5, 1e6), 1e5);
  EXPECT_DOUBLE_EQ(rate_law::paper_next_rate(1e5, 0.0, 0.1, 0.01, 0.125, 1e5, 1e6), 1e5);
}

TEST(RateLawTest, NextRateMatchesEquationsOnRandomInputs) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 20000; ++i) {
    const double rate = kRmin + u(rng) * (kRmax - kRmin);
    const double rho = u(rng), tlr = u(rng), fl = u(rng) * 0.1, m = 0.01 + u(rng) * 0.99;
    const double raw = rho < std::max(tlr, fl) ? (1 - m) * rate + m * kRmax : rate * (1 - rho / 2);
    EXPECT_NEAR(rate_law::paper_next_rate(rate, rho, tlr, fl, m, kRmax, kRmin), std::clamp(raw, kRmin, kRmax), 1e-3);
  }
}

// ============================================================================================ ablation switches

TEST(ModeTest, AblationModeSwitches) {
  struct Row { Mode m; const char* name; bool rc, dyn_tlr, mrdf, slack, dyn_prio; };
  const Row rows[] = {
      {Mode::kBase, "base", false, false, false, false, false},
      {Mode::kRc, "rc", true, false, false, false, false},
      {Mode::kRcMrdf, "rc_mrdf", true, false, true, false, false},
      {Mode::kFixTlr, "fixtlr", true, false, true, true, true},
      {Mode::kFixPrio, "fixprio", true, true, true, true, false},
      {Mode::kFull, "full", true, true, true, true, true},
  };
  for (const auto& r : rows) {
    const ModeFlags f = mode_flags(r.m);
    EXPECT_EQ(f.rate_control, r.rc) << r.name;
    EXPECT_EQ(f.dynamic_tlr, r.dyn_tlr) << r.name;
    EXPECT_EQ(f.mrdf, r.mrdf) << r.name;
    EXPECT_EQ(f.slack_priority, r.slack) << r.name;
    EXPECT_EQ(f.dynamic_priority, r.dyn_prio) << r.name;
    EXPECT_STREQ(mode_name(r.m), r.name);
    ASSERT_TRUE(parse_mode(r.name).has_value());
    EXPECT_EQ(*parse_mode(r.name), r.m);
  }
  EXPECT_FALSE(parse_mode("Full").has_value());
  EXPECT_FALSE(parse_mode("").has_value());
  EXPECT_STREQ(mode_name(static_cast<Mode>(6)), "unknown");
}

}  // namespace
