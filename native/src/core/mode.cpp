// The ablation modes (NetApprox section 7.1.3) in one table: name, switches, rate law.
#include <iterator>

#include "core/engine.hpp"
#include "core/rate_law.hpp"

namespace netapprox::atp {

namespace {

struct ModeRow {
  Mode mode;
  const char* name;
  ModeFlags flags;  // rate_control, dynamic_tlr, mrdf, slack_priority, dynamic_priority, needy_exact
  const rate_law::RateLaw* law;
};

const ModeRow kModes[] = {
    {Mode::kBase, "base", {false, false, false, false, false, false}, &rate_law::kLineRate},
    {Mode::kRc, "rc", {true, false, false, false, false, false}, &rate_law::kSlack},
    {Mode::kRcMrdf, "rc_mrdf", {true, false, true, false, false, false}, &rate_law::kSlack},
    {Mode::kFixTlr, "fixtlr", {true, false, true, true, true, false}, &rate_law::kSlack},
    {Mode::kFixPrio, "fixprio", {true, true, true, true, false, false}, &rate_law::kSlack},
    {Mode::kFull, "full", {true, true, true, true, true, true}, &rate_law::kSlack},
    {Mode::kPaper, "paper", {true, true, true, true, true, false}, &rate_law::kPaper},
};

const ModeRow* row(Mode m) {
  for (const auto& r : kModes)
    if (r.mode == m) return &r;
  return nullptr;
}

}  // namespace

const char* mode_name(Mode m) {
  const ModeRow* r = row(m);
  return r ? r->name : "unknown";
}

std::optional<Mode> parse_mode(const std::string& name) {
  for (const auto& r : kModes)
    if (name == r.name) return r.mode;
  return std::nullopt;
}

ModeFlags mode_flags(Mode m) {
  const ModeRow* r = row(m);
  return r ? r->flags : row(Mode::kFull)->flags;
}

bool mode_valid(Mode m) { return row(m) != nullptr; }

const rate_law::RateLaw& rate_law::for_mode(Mode m) {
  const ModeRow* r = row(m);
  return *(r ? r : row(Mode::kFull))->law;
}

}  // namespace netapprox::atp
