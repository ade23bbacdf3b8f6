#include "core/slack.hpp"

#include <algorithm>
#include <cmath>

namespace netapprox::atp::slack {

uint32_t target_of(double msr, uint32_t size) {
  const double t = std::ceil(msr * double(size) - 1e-9);
  return static_cast<uint32_t>(std::clamp(t, 0.0, double(size)));
}

double target_loss_rate(const std::vector<GroupProgress>& groups, bool approx_only) {
  double allowance = 0, remaining = 0;
  for (const auto& g : groups) {
    const bool exact = g.target >= g.size;
    if (approx_only && exact) continue;
    const double allow = double(g.size - g.target) - double(g.lost);
    allowance += std::max(0.0, allow);
    remaining += double(g.size) - double(std::min(g.delivered, g.size));
  }
  if (remaining <= 0) return 0.0;
  return std::clamp(allowance / remaining, 0.0, 1.0);
}

double packet_tlr(double tlr, double packets_per_message) {
  if (!(packets_per_message > 1.0)) return tlr;
  return 1.0 - std::pow(1.0 - std::clamp(tlr, 0.0, 1.0), 1.0 / packets_per_message);
}

bool needs_exact_service(const std::vector<GroupProgress>& groups, double near_fraction, bool losses_repaired) {
  double targets = 0, needed = 0;
  for (const auto& g : groups) {
    if (g.target >= g.size) continue;  // exact groups travel in class 0 anyway
    targets += double(g.target);
    needed += double(g.target - std::min(g.delivered, g.target));
  }
  if (targets <= 0 || needed <= 0) return false;
  return (losses_repaired || target_loss_rate(groups, true) <= 0) && needed <= near_fraction * targets;
}

double deadline_lag(const std::vector<GroupProgress>& groups, uint64_t elapsed, uint64_t deadline) {
  double lag = -1.0;
  if (deadline == 0) return lag;
  const double time = double(elapsed) / double(deadline);
  for (const auto& g : groups) {
    if (g.target >= g.size || g.delivered >= g.target) continue;
    lag = std::max(lag, time - double(g.delivered) / double(g.target));
  }
  return lag;
}

int deadline_class_cap(double lag) {
  const double left = 1.0 - lag;
  if (!(left > 0)) return 0;
  return std::clamp(static_cast<int>(std::ceil(left * 8.0 - 1e-12)) - 1, 0, 7);
}

int priority_class(double tlr, bool exact) {
  if (exact) return 0;
  const int k = static_cast<int>(std::ceil(tlr * 8.0 - 1e-12));
  return std::clamp(k, 1, 7);
}

}  // namespace netapprox::atp::slack
