// The control-path counters of a job report (docs/protocol.md section 14) as JSON keys, the same in atp-perf and
// netlab-agent: announces_sent, updates_sent, dones_sent, start_to_running_ns, last_data_to_done_ns.
#pragma once

#include "core/engine.hpp"
#include "perf_json.hpp"

namespace netapprox::perf {

struct ControlPath {
  uint32_t announces_sent = 0, updates_sent = 0, dones_sent = 0;
  uint64_t start_to_running_ns = 0, last_data_to_done_ns = 0;

  static ControlPath of(const atp::JobReport& r) {
    return ControlPath{r.announces_sent, r.updates_sent, r.dones_sent, r.start_to_running, r.last_data_to_done};
  }
  void write(Json& j) const {
    j.uinteger("announces_sent", announces_sent).uinteger("updates_sent", updates_sent);
    j.uinteger("dones_sent", dones_sent);
    j.uinteger("start_to_running_ns", start_to_running_ns).uinteger("last_data_to_done_ns", last_data_to_done_ns);
  }
};

}  // namespace netapprox::perf
