// Switch egress queue of the simulated fabric (the "8-queue strict priority classified by DSCP").
//
// slack mode (NetApprox section 5.2): 8 queues served in strict priority, class 0 first. A packet's class comes
// from its DSCP through the engine's dscp_by_class map; any other DSCP (TCP, plain UDP) is class 0. fifo mode: one
// queue. Full queues tail-drop. Per-class counters are kept process-wide (SwitchQueueStats).
//
// Two buffer models (SwitchBuffer):
//  - per port (the first model, `--buffer-model port`): every port owns BufferBytes; class k >= 1 buffers (8 - k) MTU
//    (class 7, the most loss-tolerant, 1 MTU), class 0 the rest of the port buffer.
//  - shared (the paper's "total buffer space of 1.5 MB" per switch, `--buffer-model shared`, the default): every
//    port of a switch draws from one pool of BufferBytes, and a queue admits a packet while it holds less than
//    alpha x (the pool's free bytes) - the dynamic threshold of shared-memory switch ASICs (Choudhury and Hahne,
//    "Dynamic queue length thresholds for shared-memory packet switches", 1998). Class 0 (and the fifo queue) uses
//    Alpha. The approximate classes use the paper's static (8 - k) MTU with ApproxAlpha 0, or a dynamic threshold
//    ApproxAlpha x (8 - k) / 7 (class 1: ApproxAlpha, class 7: a seventh of it) when ApproxAlpha > 0: a queue of
//    the approximate classes can absorb a burst while the switch is idle and shrinks to a few packets when it is
//    full, so loss tolerance still means less buffer.
//
// ECN: an ECN-capable packet is CE-marked on enqueue while its own queue holds at least EcnThreshold packets
// (DCTCP's instantaneous marking, K = 65); packets that are not ECN-capable are never dropped early.
#pragma once

#include "ns3/queue-disc.h"

#include <array>
#include <cstdint>
#include <memory>

namespace netapprox::sim {

constexpr int kClasses = 8;

struct SwitchQueueStats {
  std::array<uint64_t, kClasses> enqueued{}, dropped{}, marked{}, max_bytes{};
};
// Totals over every switch port (host NICs are not counted).
SwitchQueueStats& switch_queue_stats();

// The DSCP -> class map every SwitchQueueDisc uses (set once, before the simulation starts).
void set_dscp_classes(const uint8_t dscp_by_class[kClasses]);

// One switch's buffer pool, shared by the queue disciplines of its ports (shared model).
struct SwitchBuffer {
  explicit SwitchBuffer(uint64_t capacity) : capacity(capacity) {}
  uint64_t capacity;
  uint64_t used = 0;
  uint64_t max_used = 0;
  uint64_t free() const { return capacity > used ? capacity - used : 0; }
};

// Admission of one packet into queue `klass` holding `queued` bytes (pure: tested by test_sim.py through the
// simulator, and written so that the rule reads as in the paper it cites).
//   static limit:      queued + size <= limit
//   dynamic threshold: queued + size <= alpha x free (free = the pool's free bytes before the packet) and the pool
//                      has room for the packet
bool dt_admits(uint64_t queued, uint32_t size, double alpha, uint64_t pool_free);

class SwitchQueueDisc : public ns3::QueueDisc {
 public:
  static ns3::TypeId GetTypeId();
  SwitchQueueDisc();
  // Shared model: the switch's pool (set by the topology before the simulation starts). Without one the port's
  // BufferBytes is its own (per-port model).
  void set_shared_buffer(std::shared_ptr<SwitchBuffer> pool) { pool_ = std::move(pool); }

 private:
  bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
  ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
  bool CheckConfig() override;
  void InitializeParams() override {}
  int classify(const ns3::Ptr<ns3::QueueDiscItem>& item) const;
  bool admits(int c, uint32_t size) const;

  bool slack_ = true;
  bool count_stats_ = true;       // false on host NICs
  uint32_t buffer_bytes_ = 1'500'000;
  uint32_t mtu_bytes_ = 1500;
  uint32_t ecn_threshold_ = 65;   // packets; 0 = no marking
  double alpha_ = 1.0;            // shared model: class 0 / fifo dynamic threshold
  double approx_alpha_ = 0.0;     // shared model: approximate classes (0 = static (8 - k) MTU)
  std::shared_ptr<SwitchBuffer> pool_;
  std::array<uint32_t, kClasses> limit_{};
  std::array<uint32_t, kClasses> bytes_{};
};

}  // namespace netapprox::sim
