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
  double rho = 0;                // lost / (acked + lost)
  double tlr_pkt = 0;            // the job's TLR at packet level (slack::packet_tlr)
  double r_min = 0;              // one packet per smoothed RTT (the starvation guard)
};

// The law's state, kept by the job's rate controller.
struct State {
  double rate = 0;  // R_i, the pacing rate
};

struct RateLaw {
  const char* name;
  bool adaptive;  // false: the job is paced at R_max and the epoch is one RTT (ATP_Base)
  void (*start)(State&, const Params&);
  // Called at the end of an epoch that resolved at least one DATA packet.
  void (*on_epoch)(State&, const Params&, const Epoch&);
};

// ATP_Base: no rate control, every job paced at the line rate.
extern const RateLaw kLineRate;
// The paper's eqs. 2-3 (section 4.2), starting at R_max.
extern const RateLaw kPaper;

// The law a mode runs.
const RateLaw& for_mode(Mode m);

// Eqs. 2-3: one rate update at the end of an epoch. Rates are in bytes per second.
//   rho < max(tlr, tlr_floor):  R' = (1 - m) R + m R_max        (eq. 2)
//   otherwise:                  R' = R (1 - rho / 2)             (eq. 3)
// and R' clamped to [min(r_min, r_max), r_max] (R_min: one packet per RTT, the starvation guard).
double paper_next_rate(double rate, double rho, double tlr, double tlr_floor, double m, double r_max, double r_min);

}  // namespace netapprox::atp::rate_law
