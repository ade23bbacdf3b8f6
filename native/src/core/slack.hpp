// A job's slack (NetApprox section 4.2, eq. 1) and the slack-based priority classes (section 5.2), as pure
// functions so tests can check them against the equations directly.
#pragma once

#include <cstdint>
#include <vector>

namespace netapprox::atp::slack {

// target = ceil(msr * size), with a tolerance so that 0.8 * 10 is 8, not 9.
uint32_t target_of(double msr, uint32_t size);

// Per-group progress as the sender sees it (acknowledged = delivered).
struct GroupProgress {
  uint32_t size;       // N_g
  uint32_t target;     // ceil(MSR_g * N_g)
  uint32_t delivered;  // messages fully acknowledged
  uint32_t lost;       // messages given up
};

// Eq. 1 generalised to several groups ("pooled slack"): the loss rate the job can still afford over everything
// it has not delivered yet,
//     TLR = sum_g max(0, (N_g - target_g) - lost_g) / sum_g (N_g - delivered_g)
// With one group this is exactly eq. 1 ((1 - MSR) N - lost) / (N - delivered). Exact groups add no allowance but
// their undelivered messages count in the denominator, because losses there cost retransmissions. Returns 0 when
// nothing is left to deliver. `approx_only` restricts both sums to approximate groups (used for the priority
// class of approximate packets; exact packets always use class 0).
double target_loss_rate(const std::vector<GroupProgress>& groups, bool approx_only = false);

// The TLR is a budget of messages; rate control measures packets. A message of k packets is lost (unless
// repaired) when any of them is, so the packet loss that costs a message loss of `tlr` is 1 - (1 - tlr)^(1/k).
// k <= 1 returns tlr unchanged (the paper's one-packet messages).
double packet_tlr(double tlr, double packets_per_message);

// A job that can no longer afford a loss and is near its target (docs/protocol.md section 11, "needy jobs"): it has
// approximate groups, their pooled allowance is spent (target_loss_rate(approx_only) is 0), and the messages they
// still need, sum_g max(0, target_g - delivered_g), are at most `near_fraction` of their targets. Such a job is
// exact for the rest of its life; the engine sends its data in class 0 instead of a tiny approximate queue.
// `losses_repaired`: the job repairs its losses whatever its allowance (multi-segment messages under
// EngineConfig::repair_after_segments), so the allowance buys it nothing in a lossy queue: the fraction alone decides.
// A job repairs a lost segment of a message it could afford to lose (instead of giving the message up) when its
// messages average at least `repair_after` segments (EngineConfig::repair_after_segments; 0 = never).
inline bool repairs_losses(double packets_per_message, uint32_t repair_after) {
  return repair_after > 0 && packets_per_message >= double(repair_after);
}

bool needs_exact_service(const std::vector<GroupProgress>& groups, double near_fraction, bool losses_repaired = false);

// Size-aware class (docs/protocol.md section 11, "small jobs"; EngineConfig::small_job_class0_bytes): a job whose
// remaining needed bytes are known and at most `threshold` (> 0) sends in class 0. ~0 = unknown (nothing submitted).
inline bool small_enough_for_class0(uint64_t remaining_bytes, uint64_t threshold) {
  return threshold > 0 && remaining_bytes != ~uint64_t{0} && remaining_bytes <= threshold;
}

// Deadline escalation (docs/protocol.md section 11, "deadlines"; JobSpec::deadline). A group still short of its
// target lags a schedule that would deliver the target evenly over the deadline by
//     lag_g = elapsed / deadline - delivered_g / target_g
// deadline_lag is the worst lag over the approximate groups still short of their targets (-1 when none is, or when
// deadline is 0; <= 0: on schedule).
double deadline_lag(const std::vector<GroupProgress>& groups, uint64_t elapsed, uint64_t deadline);
// The class a lag allows the job's approximate DATA at most: ceil(8 x (1 - lag)) - 1 (7: no limit; 0 once the lag
// is at least 7/8), the TLR classes' mapping shifted one class up so that the last eighth of the deadline is class 0.
// A group that delivered nothing is in class 0 after 7/8 of the deadline however busy class 0 is.
int deadline_class_cap(double lag);
inline int deadline_class_cap(const std::vector<GroupProgress>& groups, uint64_t elapsed, uint64_t deadline) {
  return deadline_class_cap(deadline_lag(groups, elapsed, deadline));
}

// Slack-based priority (section 5.2): class 0 is reserved for exact traffic; approximate traffic goes to class k
// with (k-1)/8 < TLR <= k/8, k in 1..7 (TLR above 7/8 also maps to 7, TLR 0 to 1).
int priority_class(double tlr, bool exact);

}  // namespace netapprox::atp::slack
