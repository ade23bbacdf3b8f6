// Routing for the simulated fabric: shortest paths over the topology graph with per-flow ECMP.
//
// ns-3's Ipv4GlobalRouting only knows one path or per-packet random spraying; a datacenter fabric hashes the
// 5-tuple so a flow keeps one path (TCP would otherwise see reordering the real network does not cause). The
// tables are computed once from the topology (Fabric::compute) and shared read-only by every node's protocol.
#pragma once

#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace netapprox::sim {

// One node's view of the fabric: for each destination host address, the equal-cost next hops.
struct RouteTable {
  std::unordered_map<uint32_t, std::vector<ns3::Ptr<ns3::Ipv4Route>>> next_hops;
};

class FabricRouting : public ns3::Ipv4RoutingProtocol {
 public:
  static ns3::TypeId GetTypeId();
  void set_table(const RouteTable* table, uint32_t salt) {
    table_ = table;
    salt_ = salt;
  }

  ns3::Ptr<ns3::Ipv4Route> RouteOutput(ns3::Ptr<ns3::Packet> p, const ns3::Ipv4Header& header,
                                       ns3::Ptr<ns3::NetDevice> oif, ns3::Socket::SocketErrno& sockerr) override;
  bool RouteInput(ns3::Ptr<const ns3::Packet> p, const ns3::Ipv4Header& header, ns3::Ptr<const ns3::NetDevice> idev,
                  const UnicastForwardCallback& ucb, const MulticastForwardCallback& mcb,
                  const LocalDeliverCallback& lcb, const ErrorCallback& ecb) override;
  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, ns3::Ipv4InterfaceAddress) override {}
  void SetIpv4(ns3::Ptr<ns3::Ipv4> ipv4) override { ipv4_ = ipv4; }
  void PrintRoutingTable(ns3::Ptr<ns3::OutputStreamWrapper>, ns3::Time::Unit) const override {}

 private:
  ns3::Ptr<ns3::Ipv4Route> pick(const ns3::Ipv4Header& header, ns3::Ptr<const ns3::Packet> p) const;

  ns3::Ptr<ns3::Ipv4> ipv4_;
  const RouteTable* table_ = nullptr;
  uint32_t salt_ = 0;
};

class FabricRoutingHelper : public ns3::Ipv4RoutingHelper {
 public:
  FabricRoutingHelper* Copy() const override { return new FabricRoutingHelper(*this); }
  ns3::Ptr<ns3::Ipv4RoutingProtocol> Create(ns3::Ptr<ns3::Node> node) const override;
};

}  // namespace netapprox::sim
