// Switch egress queue of the simulated fabric (the "8-queue strict priority classified by DSCP").
//
// slack mode (NetApprox section 5.2): 8 queues served in strict priority, class 0 first. A packet's class comes
// from its DSCP through the engine's dscp_by_class map; any other DSCP (TCP, plain UDP) is class 0. Class k >= 1
// buffers (8 - k) MTU (class 7, the most loss-tolerant, 1 MTU), class 0 the rest of the port buffer. fifo mode:
// one queue holding the whole buffer. In both, ECN-capable packets are CE-marked on enqueue while the class-0
// (fifo: the only) queue holds at least EcnThreshold packets (DCTCP's instantaneous marking, K = 65); packets
// that are not ECN-capable are never dropped early. Full queues tail-drop. Per-class counters are kept
// process-wide (SwitchQueueStats) so the simulator can report drops and marks per class.
#pragma once

#include "ns3/queue-disc.h"

#include <array>
#include <cstdint>

namespace netapprox::sim {

constexpr int kClasses = 8;

struct SwitchQueueStats {
  std::array<uint64_t, kClasses> enqueued{}, dropped{}, marked{}, max_bytes{};
};
// Totals over every switch port (host NICs are not counted).
SwitchQueueStats& switch_queue_stats();

// The DSCP -> class map every SwitchQueueDisc uses (set once, before the simulation starts).
void set_dscp_classes(const uint8_t dscp_by_class[kClasses]);

class SwitchQueueDisc : public ns3::QueueDisc {
 public:
  static ns3::TypeId GetTypeId();
  SwitchQueueDisc();

 private:
  bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
  ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
  bool CheckConfig() override;
  void InitializeParams() override {}
  int classify(const ns3::Ptr<ns3::QueueDiscItem>& item) const;

  bool slack_ = true;
  bool count_stats_ = true;       // false on host NICs
  uint32_t buffer_bytes_ = 1'500'000;
  uint32_t mtu_bytes_ = 1500;
  uint32_t ecn_threshold_ = 65;   // packets; 0 = no marking
  std::array<uint32_t, kClasses> limit_{};
  std::array<uint32_t, kClasses> bytes_{};
};

}  // namespace netapprox::sim
