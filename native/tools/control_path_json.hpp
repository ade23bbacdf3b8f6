// The control-path counters of a job report (docs/protocol.md section 14) as JSON keys, the same in atp-perf and
// netlab-agent: announces_sent, updates_sent, dones_sent, start_to_running_ns, last_data_to_done_ns, announce_probes,
// start_to_announce_sent_ns from the sender's report, what its losses cost (given_up_for_loss,
// segments_given_up_for_loss, segments_given_up_satisfied, repairs_within_allowance; docs/protocol.md section 5), and
// (netlab-agent, from the receiver's report) rx_announces_received, rx_announces_duplicate, rx_announces_acked,
// rx_early_data_packets, rx_start_to_running_ns.
#pragma once

#include "core/engine.hpp"
#include "perf_json.hpp"

namespace netapprox::perf {

struct ControlPath {
  uint32_t announces_sent = 0, updates_sent = 0, dones_sent = 0;
  uint64_t start_to_running_ns = 0, last_data_to_done_ns = 0, start_to_announce_sent_ns = 0;
  uint32_t announce_probes = 0, acks_while_starting = 0;
  uint64_t given_up_for_loss = 0, segments_given_up_for_loss = 0, segments_given_up_satisfied = 0;
  uint64_t repairs_within_allowance = 0;
  // The receiver's side of the same job (filled where the receiver's report is available).
  bool has_rx = false;
  uint64_t rx_announces_received = 0, rx_announces_duplicate = 0, rx_announces_acked = 0, rx_early_data_packets = 0;
  uint64_t rx_start_to_running_ns = 0;
  // The receiver's first packet of the job (its clock) minus the sender's start_job (its clock): one clock on one
  // machine (CLOCK_MONOTONIC in network namespaces), so this is how long the job's first datagram took to arrive.
  int64_t rx_first_packet_delay_ns = 0;
  uint64_t started_ns = 0;  // the sender's start_job time (not written)

  static ControlPath of(const atp::JobReport& r) {
    ControlPath c;
    c.announces_sent = r.announces_sent;
    c.updates_sent = r.updates_sent;
    c.dones_sent = r.dones_sent;
    c.start_to_running_ns = r.start_to_running;
    c.start_to_announce_sent_ns = r.start_to_announce_sent;
    c.last_data_to_done_ns = r.last_data_to_done;
    c.announce_probes = r.announce_probes;
    c.acks_while_starting = r.acks_while_starting;
    c.given_up_for_loss = r.given_up_for_loss;
    c.segments_given_up_for_loss = r.segments_given_up_for_loss;
    c.segments_given_up_satisfied = r.segments_given_up_satisfied;
    c.repairs_within_allowance = r.repairs_within_allowance;
    c.started_ns = r.started;
    return c;
  }
  // The receiver's counters as JSON keys (the netlab server sends them with its report).
  static void write_receiver(Json& j, const atp::JobReport& r) {
    j.uinteger("announces_received", r.announces_received).uinteger("announces_duplicate", r.announces_duplicate);
    j.uinteger("announces_acked", r.announces_acked).uinteger("early_data_packets", r.early_data_packets);
    j.uinteger("start_to_running_ns", r.start_to_running).uinteger("started_ns", r.started);
  }
  void write(Json& j) const {
    j.uinteger("announces_sent", announces_sent).uinteger("updates_sent", updates_sent);
    j.uinteger("dones_sent", dones_sent);
    j.uinteger("start_to_running_ns", start_to_running_ns).uinteger("last_data_to_done_ns", last_data_to_done_ns);
    j.uinteger("announce_probes", announce_probes).uinteger("acks_while_starting", acks_while_starting);
    j.uinteger("start_to_announce_sent_ns", start_to_announce_sent_ns);
    j.uinteger("given_up_for_loss", given_up_for_loss)
        .uinteger("segments_given_up_for_loss", segments_given_up_for_loss);
    j.uinteger("segments_given_up_satisfied", segments_given_up_satisfied);
    j.uinteger("repairs_within_allowance", repairs_within_allowance);
    if (!has_rx) return;
    j.uinteger("rx_announces_received", rx_announces_received)
        .uinteger("rx_announces_duplicate", rx_announces_duplicate);
    j.uinteger("rx_announces_acked", rx_announces_acked).uinteger("rx_early_data_packets", rx_early_data_packets);
    j.uinteger("rx_start_to_running_ns", rx_start_to_running_ns);
    j.num("rx_first_packet_delay_ns", double(rx_first_packet_delay_ns));
  }
};

}  // namespace netapprox::perf
