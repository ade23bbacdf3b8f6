#include "core/control.hpp"

#include <algorithm>
#include <cmath>

namespace netapprox::atp::control {

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

double next_rate(double rate, double rho, double tlr, double tlr_floor, double m, double r_max, double r_min) {
  double next;
  if (rho < std::max(tlr, tlr_floor)) {
    next = (1.0 - m) * rate + m * r_max;
  } else {
    next = rate * (1.0 - rho / 2.0);
  }
  return std::clamp(next, std::min(r_min, r_max), r_max);
}

int priority_class(double tlr, bool exact) {
  if (exact) return 0;
  const int k = static_cast<int>(std::ceil(tlr * 8.0 - 1e-12));
  return std::clamp(k, 1, 7);
}

}  // namespace netapprox::atp::control
