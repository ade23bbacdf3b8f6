// Scheme names (the netlab's, docs/netlab.md) and what each means in the simulator: the one table mapping a
// scheme to a transport and, for ATP, to an engine mode.
#pragma once

#include <optional>
#include <string>

namespace netapprox::sim {

enum class Transport { kAtp, kDctcp, kUdp };
enum class TcpVariant { kEarlySend, kSampleSend, kExact };

struct Scheme {
  const char* name;
  Transport transport;
  const char* atp_mode;      // parse_mode() name; ATP only
  const char* atp_fallback;  // used while the engine does not know atp_mode yet (see below)
  TcpVariant tcp;            // DCTCP only
  // DCTCP only: pFabric-style priorities - the connection's DSCP follows the bytes it still needs for its answer,
  // through the same remaining-size classes (EngineConfig::size_class_bytes) as ATP's size classes.
  bool size_priority = false;
  // ATP only: engine settings of the scheme, as --atp KEY=VALUE pairs separated by spaces (applied before the
  // command line's --atp, which may override them).
  const char* atp_settings = "";
};

// atp_paper is the paper's rate law (eqs. 1-3). Until the engine has a mode of its own for it (Mode::kPaper,
// parse_mode("paper")), the paper's law IS the default Full law, so atp_paper runs Full.
// atp_full is Full with remaining-size classes (EngineConfig::size_classes; the switch's approximate classes then
// carry jobs by what they still need, docs/simulation.md); atp_full_tlr is Full as the engine's defaults configure it
// (the paper's TLR classes plus Full's class-0 rules for needy and small jobs).
inline constexpr Scheme kSchemes[] = {
    {"atp_full", Transport::kAtp, "full", nullptr, TcpVariant::kExact, false, "size_classes=1"},
    {"atp_full_tlr", Transport::kAtp, "full", nullptr, TcpVariant::kExact},
    {"atp_paper", Transport::kAtp, "paper", "full", TcpVariant::kExact},
    {"atp_base", Transport::kAtp, "base", nullptr, TcpVariant::kExact},
    {"atp_rc", Transport::kAtp, "rc", nullptr, TcpVariant::kExact},
    {"atp_rc_mrdf", Transport::kAtp, "rc_mrdf", nullptr, TcpVariant::kExact},
    {"atp_fixtlr", Transport::kAtp, "fixtlr", nullptr, TcpVariant::kExact},
    {"atp_fixprio", Transport::kAtp, "fixprio", nullptr, TcpVariant::kExact},
    {"dctcp_es", Transport::kDctcp, nullptr, nullptr, TcpVariant::kEarlySend},
    {"dctcp_ss", Transport::kDctcp, nullptr, nullptr, TcpVariant::kSampleSend},
    {"dctcp_exact", Transport::kDctcp, nullptr, nullptr, TcpVariant::kExact},
    {"pfabric_es", Transport::kDctcp, nullptr, nullptr, TcpVariant::kEarlySend, true},
    {"udp", Transport::kUdp, nullptr, nullptr, TcpVariant::kExact},
};

inline std::optional<Scheme> find_scheme(const std::string& name) {
  for (const Scheme& s : kSchemes)
    if (name == s.name) return s;
  return std::nullopt;
}

}  // namespace netapprox::sim
