#include "udp_host.hpp"

#include "ns3/inet-socket-address.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>
#include <cstring>

namespace netapprox::sim {

using namespace ns3;

namespace {
uint64_t now_ns() { return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds()); }
constexpr uint32_t kHeader = 16;
constexpr uint32_t kBackgroundJob = 0xffffffffu;
}  // namespace

UdpHost::UdpHost(SimContext* ctx, uint32_t host, const uint8_t dscp_by_class[8]) : ctx_(ctx), host_(host) {
  std::memcpy(dscp_, dscp_by_class, 8);
}

void UdpHost::add_job(const JobDesc& job) { jobs_.push_back(job); }
void UdpHost::add_background(const BackgroundDesc& bg) { bgs_.push_back(bg); }

void UdpHost::StartApplication() {
  socket_ = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
  socket_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
  socket_->SetRecvCallback(MakeCallback(&UdpHost::on_recv, this));
  produced_.assign(jobs_.size(), 0);
  last_sent_.assign(jobs_.size(), 0);
  remaining_.assign(jobs_.size(), 0);
  for (size_t i = 0; i < jobs_.size(); ++i) {
    for (uint32_t s : jobs_[i].sizes) remaining_[i] += (s + kChunk - 1) / kChunk;
    Simulator::Schedule(NanoSeconds(jobs_[i].start_ns) - Simulator::Now(), &UdpHost::produce, this, i);
  }
  for (size_t b = 0; b < bgs_.size(); ++b) {
    auto s = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    s->Bind();
    bg_sockets_.push_back(s);
    Simulator::Schedule(NanoSeconds(bgs_[b].start_ns) - Simulator::Now(), &UdpHost::bg_tick, this, b);
  }
}

void UdpHost::StopApplication() {}

void UdpHost::produce(size_t idx) {
  const JobDesc& j = jobs_[idx];
  const uint64_t now = now_ns();
  size_t& m = produced_[idx];
  while (m < j.sizes.size() && j.start_ns + j.offsets_ns[m] <= now) {
    const uint32_t n = (j.sizes[m] + kChunk - 1) / kChunk;
    for (uint32_t f = 0; f < n; ++f)
      queue_.push_back(Datagram{static_cast<uint32_t>(idx), static_cast<uint32_t>(m), f, n,
                                std::min(kChunk, j.sizes[m] - f * kChunk)});
    m++;
  }
  if (m < j.sizes.size())
    Simulator::Schedule(NanoSeconds(j.start_ns + j.offsets_ns[m] - now), &UdpHost::produce, this, idx);
  if (!sending_) send_next();
}

// The host's pacer: one datagram per wire time at the line rate.
void UdpHost::send_next() {
  if (queue_.empty()) {
    sending_ = false;
    return;
  }
  sending_ = true;
  Datagram d = queue_.front();
  queue_.pop_front();
  const JobDesc& j = jobs_[d.job_idx];
  uint8_t buf[kChunk + kHeader];
  const uint32_t words[4] = {j.id, d.msg, d.frag, d.nfrags};
  std::memcpy(buf, words, kHeader);
  std::memset(buf + kHeader, 0, d.bytes);
  socket_->SendTo(Create<Packet>(buf, kHeader + d.bytes), 0,
                  InetSocketAddress(ctx_->host_addr[j.receiver - 1], kPort));
  const uint64_t now = now_ns();
  last_sent_[d.job_idx] = now;
  if (--remaining_[d.job_idx] == 0) {
    JobResult& r = ctx_->results[j.id];
    r.status = "ok";
    r.done_ns = now;
    r.bytes_sent = 0;
    for (uint32_t s : j.sizes) r.bytes_sent += s;
    // The job is over once its last datagram has crossed the fabric or been dropped; give it 1 ms.
    Simulator::Schedule(MilliSeconds(1), +[](SimContext* c, uint32_t id) { c->finished(id, now_ns()); }, ctx_, j.id);
  }
  const uint64_t wire = (kHeader + d.bytes + 28 + 2) * 8ULL * 1'000'000'000ULL / static_cast<uint64_t>(ctx_->rate_bps);
  Simulator::Schedule(NanoSeconds(std::max<uint64_t>(wire, 1)), &UdpHost::send_next, this);
}

void UdpHost::bg_tick(size_t idx) {
  const BackgroundDesc& b = bgs_[idx];
  const uint64_t now = now_ns();
  if (now >= b.stop_ns) return;
  int cls = b.cls;
  for (const auto& mv : b.moves)
    if (now >= mv.first) cls = mv.second;
  bg_sockets_[idx]->SetIpTos(static_cast<uint8_t>(dscp_[cls] << 2));
  std::vector<uint8_t> buf(b.packet_bytes, 0);
  const uint32_t words[4] = {kBackgroundJob, b.id, 0, 0};
  std::memcpy(buf.data(), words, kHeader);
  bg_sockets_[idx]->SendTo(Create<Packet>(buf.data(), b.packet_bytes), 0,
                           InetSocketAddress(ctx_->host_addr[b.receiver - 1], kPort));
  const double gap_ns = (b.packet_bytes + 28 + 2) * 8.0 * 1e9 / b.rate_bps;
  Simulator::Schedule(NanoSeconds(static_cast<int64_t>(gap_ns)), &UdpHost::bg_tick, this, idx);
}

void UdpHost::on_recv(Ptr<Socket> s) {
  while (Ptr<Packet> p = s->Recv()) {
    if (p->GetSize() < kHeader) continue;
    uint32_t w[4];
    p->CopyData(reinterpret_cast<uint8_t*>(w), kHeader);
    if (w[0] == kBackgroundJob) continue;
    auto jt = job_desc_.find(w[0]);
    if (jt == job_desc_.end() || w[1] >= jt->second->sizes.size()) continue;
    Incoming& in = incoming_[w[0]];
    in.last_ns = now_ns();
    in.bytes += p->GetSize() - kHeader;
    if (++in.frags[w[1]] == w[3]) in.complete++;
  }
}

void UdpHost::collect() {
  for (const auto& [id, desc] : job_desc_) {
    JobResult& r = ctx_->results[id];
    auto it = incoming_.find(id);
    r.delivered = it == incoming_.end() ? 0 : it->second.complete;
    r.lost = static_cast<uint32_t>(desc->sizes.size()) - r.delivered;
    r.bytes_received = it == incoming_.end() ? 0 : it->second.bytes;
    if (it != incoming_.end() && r.done_ns) r.done_ns = std::max(r.done_ns, it->second.last_ns);
    r.receiver_done = true;
  }
}

}  // namespace netapprox::sim
