// Rate laws: how a job's pacing rate starts and how it moves at the end of each epoch. A law is a table of
// operations; the mode picks one (mode.cpp), so nothing else in the engine asks which mode it runs.
#pragma once

#include <cstdint>

#include "core/engine.hpp"

namespace netapprox::atp::rate_law {

// Fixed inputs of a job's law (rates in bytes per second).
struct Params {
  double r_max;      // the host's line rate
  double m;          // reaction speed (eq. 2)
  double tlr_floor;  // a TLR below this is treated as this (exact traffic must be able to grow)
};

// What one epoch learnt about the job's DATA packets.
struct Epoch {
  uint64_t acked = 0, lost = 0;  // packets resolved during the epoch
  uint64_t acked_bytes = 0;      // datagram bytes of the acknowledged ones (the unit of the rate)
  TimeNs duration = 0;           // since the previous epoch ended
  double rho = 0;                // lost / (acked + lost)
  double tlr_pkt = 0;            // the job's TLR at packet level (slack::packet_tlr)
  double r_min = 0;              // the law's floor (rtts_per_min_packet)
  TimeNs srtt = 0;
  bool app_limited = false;  // the job left its pacer idle (nothing to send) at some point in the epoch
};

// The law's state, kept by the job's rate controller.
struct State {
  double rate = 0;  // R_i, the pacing rate
  // The slack law decides over several epochs: what was resolved since its last decision.
  uint64_t acc_acked = 0, acc_lost = 0, acc_bytes = 0;
  TimeNs acc_time = 0;
  bool acc_app_limited = false;
  double rho_avg = 0;  // EWMA of rho over decisions
  uint64_t decisions = 0;
  // Service gaps (slack law): the rate before the last cut for loss and that decision's rho (0: the last decision
  // was no cut), and how many more loss decisions hold the rate because a cut did not lower the loss.
  double cut_from = 0, cut_rho = 0, cut_delivered = 0;
  uint32_t gap_holds = 0;
  uint64_t gaps = 0;  // cuts undone as service gaps (diagnostics)
};

struct RateLaw {
  const char* name;
  bool adaptive;  // false: the job is paced at R_max and the epoch is one RTT (ATP_Base)
  // R_min (the starvation guard) is one packet per this many smoothed RTTs.
  double rtts_per_min_packet;
  void (*start)(State&, const Params&);
  // Called at the end of an epoch that resolved at least one DATA packet.
  void (*on_epoch)(State&, const Params&, const Epoch&);
};

// ATP_Base: no rate control, every job paced at the line rate.
extern const RateLaw kLineRate;
// The paper's eqs. 2-3 (section 4.2), starting at R_max, R_min one packet per RTT.
extern const RateLaw kPaper;
// The default ("slack law", docs/protocol.md section 10): eqs. 2-3 decided over at least kSlackMinResolved
// resolved packets or kSlackMinRtts round trips; an increase (eq. 2) at most doubles the delivered rate; a decrease
// (eq. 3 on an EWMA of rho) goes at least down to the rate the path delivers at the affordable loss,
// delivered / (1 - TLR_pkt). R_min is one packet per 4 RTTs, so 32 senders can share a port whose
// bandwidth-delay product is a few packets.
extern const RateLaw kSlack;
constexpr uint64_t kSlackMinResolved = 8;
constexpr double kSlackMinRtts = 2;
constexpr double kSlackRhoGain = 0.25;  // EWMA weight of a decision's rho
// Service gap vs overload (docs/protocol.md section 10): a cut for excess loss is undone when the next decision
// still loses at least kGapLossRatio of what the cut was for and the delivered rate fell with the rate (by at least
// three quarters of the cut) - loss that does not answer the job's rate, and a delivery that follows it, come from a
// higher priority class's bursts (strict priority serves no approximate queue while class 0 has a backlog), not from
// the job. Overload is the opposite: the job delivers its share whatever it sends above it. The rate then holds through
// kGapHoldDecisions loss decisions before a cut is tried again.
constexpr double kGapLossRatio = 0.75;
constexpr uint32_t kGapHoldDecisions = 4;
// One slack-law decision (exposed for the tests). rho: this decision's loss; rho_avg: its EWMA, already updated;
// delivered: acknowledged bytes per second over the decision; t: the affordable packet loss (TLR_pkt, at least
// tlr_floor); app_limited: the job left its pacer idle during the decision, so `delivered` is what it had to send,
// not what the path takes, and a decision without excess loss must not lower the rate.
double slack_next_rate(double rate, double rho, double rho_avg, double delivered, double t, double m, double r_max,
                       double r_min, bool app_limited);

// The law a mode runs.
const RateLaw& for_mode(Mode m);

// Eqs. 2-3: one rate update at the end of an epoch. Rates are in bytes per second.
//   rho < max(tlr, tlr_floor):  R' = (1 - m) R + m R_max        (eq. 2)
//   otherwise:                  R' = R (1 - rho / 2)             (eq. 3)
// and R' clamped to [min(r_min, r_max), r_max] (R_min: one packet per RTT, the starvation guard).
double paper_next_rate(double rate, double rho, double tlr, double tlr_floor, double m, double r_max, double r_min);

}  // namespace netapprox::atp::rate_law
