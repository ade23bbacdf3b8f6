#include "core/rate_law.hpp"

#include <algorithm>

namespace netapprox::atp::rate_law {

double paper_next_rate(double rate, double rho, double tlr, double tlr_floor, double m, double r_max, double r_min) {
  double next;
  if (rho < std::max(tlr, tlr_floor)) {
    next = (1.0 - m) * rate + m * r_max;
  } else {
    next = rate * (1.0 - rho / 2.0);
  }
  return std::clamp(next, std::min(r_min, r_max), r_max);
}

namespace {

void start_at_line_rate(State& s, const Params& p) { s.rate = p.r_max; }
void keep_line_rate(State& s, const Params& p, const Epoch&) { s.rate = p.r_max; }

void paper_on_epoch(State& s, const Params& p, const Epoch& e) {
  s.rate = paper_next_rate(s.rate, e.rho, e.tlr_pkt, p.tlr_floor, p.m, p.r_max, e.r_min);
}

}  // namespace

const RateLaw kLineRate{"line_rate", false, start_at_line_rate, keep_line_rate};
const RateLaw kPaper{"paper", true, start_at_line_rate, paper_on_epoch};

}  // namespace netapprox::atp::rate_law
