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

double slack_next_rate(double rate, double rho, double rho_avg, double delivered, double t, double m, double r_max,
                       double r_min, bool app_limited) {
  double next;
  if (rho < t) {
    // Eq. 2, but at most twice what the path delivered: far above the delivered rate, a step towards R_max (a
    // multiple of the port when the host is faster) only fills a tiny queue and loses. A backlogged job that
    // delivers less than half its rate is queueing, and the bound brings it down before the queue overflows. A job
    // that left its pacer idle delivered what it had, not what the path takes: the bound must not lower its rate
    // (it cut production-limited FBKV-like jobs from 200 to 2-5 Mbit/s in the network lab, without a loss).
    next = std::min((1.0 - m) * rate + m * r_max, 2.0 * std::max(delivered, r_min));
    if (app_limited) next = std::max(next, rate);
  } else {
    // Eq. 3 on the smoothed loss, and at least down to the rate that loses just what the job can afford while the
    // competition stays as it is: one step to the equilibrium instead of halving repeatedly.
    next = std::min(rate * (1.0 - rho_avg / 2.0), delivered / (1.0 - t));
  }
  return std::clamp(next, std::min(r_min, r_max), r_max);
}

namespace {

void start_at_line_rate(State& s, const Params& p) { s.rate = p.r_max; }
void keep_line_rate(State& s, const Params& p, const Epoch&) { s.rate = p.r_max; }

void paper_on_epoch(State& s, const Params& p, const Epoch& e) {
  s.rate = paper_next_rate(s.rate, e.rho, e.tlr_pkt, p.tlr_floor, p.m, p.r_max, e.r_min);
}

// Accumulates epochs until a decision has enough evidence: kSlackMinResolved packets, or kSlackMinRtts round
// trips (with at least one packet) when the job is slow. With a handful of packets rho is mostly 0 or 1.
void slack_on_epoch(State& s, const Params& p, const Epoch& e) {
  s.acc_acked += e.acked;
  s.acc_lost += e.lost;
  s.acc_bytes += e.acked_bytes;
  s.acc_time += e.duration;
  s.acc_app_limited = s.acc_app_limited || e.app_limited;
  const uint64_t resolved = s.acc_acked + s.acc_lost;
  if (resolved < kSlackMinResolved && double(s.acc_time) < kSlackMinRtts * double(e.srtt)) return;
  const double rho = double(s.acc_lost) / double(resolved);
  const double delivered = s.acc_time > 0 ? double(s.acc_bytes) * 1e9 / double(s.acc_time) : s.rate;
  s.rho_avg = s.decisions == 0 ? rho : s.rho_avg + kSlackRhoGain * (rho - s.rho_avg);
  s.decisions++;
  s.acc_acked = s.acc_lost = s.acc_bytes = 0;
  s.acc_time = 0;
  const bool app_limited = s.acc_app_limited;
  s.acc_app_limited = false;
  const double t = std::max(e.tlr_pkt, p.tlr_floor);
  if (rho < t) {
    s.cut_from = 0;
  } else if (s.gap_holds > 0) {
    s.gap_holds--;  // a service gap: the loss is not the job's to fix, keep the rate
    return;
  } else if (s.cut_from > 0 && rho >= kGapLossRatio * s.cut_rho &&
             delivered < s.cut_delivered * (0.25 + 0.75 * s.rate / s.cut_from)) {
    // The last cut did not lower the loss: undo it and hold (the job tolerates the loss; the retransmission
    // criterion spends the allowance, then repairs).
    s.rate = std::max(s.rate, s.cut_from);
    s.cut_from = 0;
    s.gap_holds = kGapHoldDecisions;
    s.gaps++;
    return;
  } else {
    s.cut_from = s.rate;
    s.cut_rho = rho;
    s.cut_delivered = delivered;
  }
  s.rate = slack_next_rate(s.rate, rho, s.rho_avg, delivered, t, p.m, p.r_max, e.r_min, app_limited);
  if (s.rate >= s.cut_from) s.cut_from = 0;  // not a cut after all (R_min, or the delivered rate)
}

}  // namespace

const RateLaw kLineRate{"line_rate", false, 1, start_at_line_rate, keep_line_rate};
const RateLaw kPaper{"paper", true, 1, start_at_line_rate, paper_on_epoch};
const RateLaw kSlack{"slack", true, 4, start_at_line_rate, slack_on_epoch};

}  // namespace netapprox::atp::rate_law
