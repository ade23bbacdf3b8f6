#include "topology.hpp"

#include "switch_queue.hpp"

#include "ns3/core-module.h"
#include "ns3/error-model.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-route.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/traffic-control-helper.h"

#include <deque>
#include <stdexcept>

namespace netapprox::sim {

using namespace ns3;

namespace {

struct Port {
  uint32_t node;        // global node index (hosts first, then switches)
  uint32_t iface;       // this node's IPv4 interface index for the link
  uint32_t peer;
  Ipv4Address peer_addr;
};

struct Builder {
  const FabricSpec& spec;
  Fabric& f;
  std::vector<Ptr<Node>> nodes;
  std::vector<std::vector<Port>> adj;
  PointToPointHelper p2p;
  Ipv4AddressHelper addr;
  TrafficControlHelper switch_tc, host_tc;

  Builder(const FabricSpec& s, Fabric& fab) : spec(s), f(fab) {
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(static_cast<uint64_t>(s.rate_gbps * 1e9))));
    p2p.SetChannelAttribute("Delay", TimeValue(NanoSeconds(static_cast<int64_t>(s.delay_us * 1000))));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(s.mtu));
    // One packet in the device: the queue discipline holds the queue, as on a switch ASIC.
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1p")));
    switch_tc.SetRootQueueDisc("netapprox::SwitchQueueDisc", "Slack", BooleanValue(s.slack), "BufferBytes",
                               UintegerValue(s.buffer_bytes), "MtuBytes", UintegerValue(s.mtu), "EcnThreshold",
                               UintegerValue(s.ecn_threshold), "Alpha", DoubleValue(s.alpha), "ApproxAlpha",
                               DoubleValue(s.approx_alpha));
    host_tc.SetRootQueueDisc("netapprox::SwitchQueueDisc", "Slack", BooleanValue(false), "CountStats",
                             BooleanValue(false), "BufferBytes", UintegerValue(s.host_buffer_bytes), "EcnThreshold",
                             UintegerValue(0));
    addr.SetBase("10.0.0.0", "255.255.255.252");
  }

  bool is_host(uint32_t n) const { return n < f.hosts.GetN(); }

  // A switch port's queue discipline, drawing from the switch's pool in the shared model.
  void install(uint32_t node, Ptr<NetDevice> dev) {
    if (is_host(node)) {
      host_tc.Install(dev);
      return;
    }
    QueueDiscContainer qd = switch_tc.Install(dev);
    if (spec.buffer_model != "shared") return;
    auto& pool = f.pools[node];
    if (!pool) pool = std::make_shared<SwitchBuffer>(spec.buffer_bytes);
    DynamicCast<SwitchQueueDisc>(qd.Get(0))->set_shared_buffer(pool);
  }

  void link(uint32_t a, uint32_t b, bool lossy = false) {
    NetDeviceContainer d = p2p.Install(nodes[a], nodes[b]);
    install(a, d.Get(0));
    install(b, d.Get(1));
    if (lossy) {  // random loss on what b receives (b is host 1: the bottleneck into the receiver)
      auto em = CreateObject<RateErrorModel>();
      em->SetAttribute("ErrorRate", DoubleValue(spec.bottleneck_loss));
      em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
      auto rv = CreateObject<UniformRandomVariable>();
      rv->SetStream(static_cast<int64_t>(spec.seed));
      em->SetRandomVariable(rv);
      d.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }
    Ipv4InterfaceContainer ifs = addr.Assign(d);
    addr.NewNetwork();
    const uint32_t ia = ifs.Get(0).second, ib = ifs.Get(1).second;
    adj[a].push_back(Port{a, ia, b, ifs.GetAddress(1)});
    adj[b].push_back(Port{b, ib, a, ifs.GetAddress(0)});
  }

  void routes() {
    const uint32_t n = static_cast<uint32_t>(nodes.size());
    f.tables.clear();
    for (uint32_t i = 0; i < n; ++i) f.tables.push_back(std::make_unique<RouteTable>());
    // BFS from every host; a node's next hops toward it are the neighbours one step closer.
    for (uint32_t h = 0; h < f.hosts.GetN(); ++h) {
      std::vector<int> dist(n, -1);
      std::deque<uint32_t> q{h};
      dist[h] = 0;
      while (!q.empty()) {
        uint32_t u = q.front();
        q.pop_front();
        for (const Port& p : adj[u]) {
          if (dist[p.peer] >= 0) continue;
          dist[p.peer] = dist[u] + 1;
          if (!is_host(p.peer)) q.push_back(p.peer);  // hosts do not forward
        }
      }
      const uint32_t dst = f.host_addr[h].Get();
      for (uint32_t u = 0; u < n; ++u) {
        if (u == h || dist[u] < 0) continue;
        auto ipv4 = nodes[u]->GetObject<Ipv4>();
        auto& hops = f.tables[u]->next_hops[dst];
        for (const Port& p : adj[u]) {
          if (dist[p.peer] != dist[u] - 1) continue;
          auto r = Create<Ipv4Route>();
          r->SetDestination(Ipv4Address(dst));
          r->SetGateway(p.peer_addr);
          r->SetOutputDevice(ipv4->GetNetDevice(p.iface));
          r->SetSource(ipv4->GetAddress(p.iface, 0).GetLocal());
          hops.push_back(r);
        }
      }
    }
    for (uint32_t u = 0; u < n; ++u) {
      auto rp = DynamicCast<FabricRouting>(nodes[u]->GetObject<Ipv4>()->GetRoutingProtocol());
      if (!rp) throw std::runtime_error("fabric: node without FabricRouting");
      rp->set_table(f.tables[u].get(), u * 2654435761U);
    }
  }
};

}  // namespace

std::unique_ptr<Fabric> build_fabric(const FabricSpec& spec) {
  auto f = std::make_unique<Fabric>();
  int hosts = 0, switches = 0;
  if (spec.buffer_model != "shared" && spec.buffer_model != "port")
    throw std::invalid_argument("unknown buffer model " + spec.buffer_model + " (shared | port)");
  if (spec.kind == "star") {
    if (spec.hosts < 2) throw std::invalid_argument("star needs --hosts >= 2");
    hosts = spec.hosts;
    switches = 1;
  } else if (spec.kind == "fattree") {
    if (spec.k < 2 || spec.k % 2) throw std::invalid_argument("fat-tree k must be even and >= 2");
    const int full = spec.k * spec.k * spec.k / 4;
    hosts = spec.hosts > 0 ? spec.hosts : full;
    if (hosts < 2 || hosts > full) throw std::invalid_argument("fat-tree hosts must be in [2, k^3/4]");
    switches = spec.k * spec.k + spec.k * spec.k / 4;  // k*k/2 edge + k*k/2 agg + (k/2)^2 core
  } else {
    throw std::invalid_argument("unknown topology " + spec.kind + " (star | fattree)");
  }
  f->hosts.Create(hosts);
  f->switches.Create(switches);
  InternetStackHelper stack;
  FabricRoutingHelper routing;
  stack.SetRoutingHelper(routing);
  stack.Install(f->hosts);
  stack.Install(f->switches);

  Builder b(spec, *f);
  for (int i = 0; i < hosts; ++i) b.nodes.push_back(f->hosts.Get(i));
  for (int i = 0; i < switches; ++i) b.nodes.push_back(f->switches.Get(i));
  b.adj.resize(b.nodes.size());
  const uint32_t sw0 = static_cast<uint32_t>(hosts);
  std::vector<uint32_t> host_edge(hosts);
  if (spec.kind == "star") {
    for (int i = 0; i < hosts; ++i) host_edge[i] = sw0;
    f->describe = "star of " + std::to_string(hosts) + " hosts";
  } else {
    const int k = spec.k, half = k / 2;
    const uint32_t edge0 = sw0, agg0 = sw0 + k * half, core0 = agg0 + k * half;
    const int edges = k * half;
    // Hosts are spread round-robin over the edge switches (pod by pod), so a partly populated fat-tree keeps
    // its hosts evenly spread (the paper's 192 hosts on a k=12 tree: 2-3 per edge switch).
    for (int i = 0; i < hosts; ++i) host_edge[i] = edge0 + static_cast<uint32_t>(i % edges);
    for (int pod = 0; pod < k; ++pod)
      for (int e = 0; e < half; ++e)
        for (int a = 0; a < half; ++a) b.link(edge0 + pod * half + e, agg0 + pod * half + a);
    for (int pod = 0; pod < k; ++pod)
      for (int a = 0; a < half; ++a)
        for (int c = 0; c < half; ++c) b.link(agg0 + pod * half + a, core0 + a * half + c);
    f->describe = "k=" + std::to_string(k) + " fat-tree, " + std::to_string(hosts) + " hosts";
  }
  // Host links last so host addresses do not depend on the switch wiring order... and host 1's downlink may be
  // the lossy bottleneck of the tests.
  f->host_addr.resize(hosts);
  for (int i = 0; i < hosts; ++i) {
    b.link(host_edge[i], static_cast<uint32_t>(i), i == 0 && spec.bottleneck_loss > 0);
    f->host_addr[i] = b.adj[i].back().peer == host_edge[i]
                          ? b.nodes[i]->GetObject<Ipv4>()->GetAddress(b.adj[i].back().iface, 0).GetLocal()
                          : Ipv4Address();
  }
  b.routes();
  char buf[256];
  if (spec.buffer_model == "shared")
    std::snprintf(buf, sizeof buf, ", %.0f Gbit/s, %.1f us links, %s switch, %u B shared buffer/switch (alpha %g, approx %s)",
                  spec.rate_gbps, spec.delay_us, spec.slack ? "slack" : "fifo", spec.buffer_bytes, spec.alpha,
                  spec.approx_alpha > 0 ? ("alpha " + std::to_string(spec.approx_alpha).substr(0, 6)).c_str()
                                        : "static k MTU");
  else
    std::snprintf(buf, sizeof buf, ", %.0f Gbit/s, %.1f us links, %s switch, %u B buffer/port", spec.rate_gbps,
                  spec.delay_us, spec.slack ? "slack" : "fifo", spec.buffer_bytes);
  f->describe += buf;
  return f;
}

}  // namespace netapprox::sim
