#include "fabric_routing.hpp"

#include "ns3/ipv4-route.h"
#include "ns3/node.h"

namespace netapprox::sim {

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(FabricRouting);

TypeId FabricRouting::GetTypeId() {
  static TypeId tid = TypeId("netapprox::FabricRouting").SetParent<Ipv4RoutingProtocol>().AddConstructor<FabricRouting>();
  return tid;
}

namespace {
uint64_t mix(uint64_t x) {  // splitmix64 finaliser: a cheap, well-spread flow hash
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
}  // namespace

Ptr<Ipv4Route> FabricRouting::pick(const Ipv4Header& header, Ptr<const Packet> p) const {
  if (!table_) return nullptr;
  auto it = table_->next_hops.find(header.GetDestination().Get());
  if (it == table_->next_hops.end() || it->second.empty()) return nullptr;
  const auto& hops = it->second;
  if (hops.size() == 1) return hops[0];
  uint8_t ports[4] = {0, 0, 0, 0};  // TCP and UDP both start with source and destination port
  if (p && p->GetSize() >= 4 && (header.GetProtocol() == 6 || header.GetProtocol() == 17)) p->CopyData(ports, 4);
  uint64_t key = (uint64_t{header.GetSource().Get()} << 32) | header.GetDestination().Get();
  key = mix(key ^ (uint64_t{header.GetProtocol()} << 40) ^
            (uint64_t{static_cast<uint32_t>(ports[0]) << 24 | ports[1] << 16 | ports[2] << 8 | ports[3]}) ^
            (uint64_t{salt_} << 48));
  return hops[key % hops.size()];
}

Ptr<Ipv4Route> FabricRouting::RouteOutput(Ptr<Packet> p, const Ipv4Header& header, Ptr<NetDevice>,
                                          Socket::SocketErrno& sockerr) {
  Ptr<Ipv4Route> r = pick(header, p);
  sockerr = r ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
  return r;
}

bool FabricRouting::RouteInput(Ptr<const Packet> p, const Ipv4Header& header, Ptr<const NetDevice> idev,
                               const UnicastForwardCallback& ucb, const MulticastForwardCallback&,
                               const LocalDeliverCallback& lcb, const ErrorCallback& ecb) {
  const int32_t iif = ipv4_->GetInterfaceForDevice(idev);
  if (ipv4_->IsDestinationAddress(header.GetDestination(), iif)) {
    if (!lcb.IsNull()) lcb(p, header, iif);
    return true;
  }
  Ptr<Ipv4Route> r = pick(header, p);
  if (!r) {
    ecb(p, header, Socket::ERROR_NOROUTETOHOST);
    return false;
  }
  ucb(r, p, header);
  return true;
}

Ptr<Ipv4RoutingProtocol> FabricRoutingHelper::Create(Ptr<Node>) const { return CreateObject<FabricRouting>(); }

}  // namespace netapprox::sim
