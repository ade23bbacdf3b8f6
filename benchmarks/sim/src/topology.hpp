// The simulated fabrics: a star (N hosts on one switch: dumbbell/incast) and a k-ary fat-tree (k pods of k/2 edge
// and k/2 aggregation switches, (k/2)^2 cores), point-to-point links of one rate and delay, SwitchQueueDisc on
// every switch port, a large FIFO on host NICs, and FabricRouting tables computed from the link graph.
#pragma once

#include "fabric_routing.hpp"

#include "ns3/ipv4-address.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace netapprox::sim {

struct SwitchBuffer;

struct FabricSpec {
  std::string kind = "star";   // star | fattree
  int k = 4;                   // fat-tree arity
  int hosts = 0;               // star: hosts; fat-tree: populated host ports (0 = all k^3/4)
  double rate_gbps = 40;
  double delay_us = 1;         // per link, one way
  bool slack = true;           // switch ports: 8 strict-priority queues (true) or one FIFO
  // Switch buffer (switch_queue.hpp): "shared" = buffer_bytes per switch, one pool for all its ports, dynamic
  // thresholds (alpha for class 0 / fifo, approx_alpha for the approximate classes, 0 = the paper's static k MTU);
  // "port" = buffer_bytes per port, the approximate classes' static k MTU (the first model).
  std::string buffer_model = "shared";
  uint32_t buffer_bytes = 1'500'000;
  double alpha = 1.0;
  double approx_alpha = 0.0;
  uint32_t mtu = 1500;
  uint32_t ecn_threshold = 65;
  uint32_t host_buffer_bytes = 4'000'000;
  double bottleneck_loss = 0;  // random loss on the link into host 1 (tests)
  uint64_t seed = 1;
};

struct Fabric {
  ns3::NodeContainer hosts;       // host i (1-based in schedules) is hosts.Get(i - 1)
  ns3::NodeContainer switches;
  std::vector<ns3::Ipv4Address> host_addr;  // index i - 1
  std::vector<std::unique_ptr<RouteTable>> tables;
  std::map<uint32_t, std::shared_ptr<SwitchBuffer>> pools;  // shared model: node index -> its pool
  std::string describe;
};

std::unique_ptr<Fabric> build_fabric(const FabricSpec& spec);

}  // namespace netapprox::sim
