#include "tcp_host.hpp"

#include "ns3/inet-socket-address.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace netapprox::sim {

using namespace ns3;

namespace {
uint64_t now_ns() { return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds()); }
constexpr uint32_t kMagic = 0x4e415450;  // "NATP"
constexpr size_t kJobHeader = 16, kMsgHeader = 8;

void put32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint32_t get32(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t{p[3]} << 24; }

uint32_t target_of(const JobDesc& j) {
  const double t = std::ceil(j.msr * static_cast<double>(j.sizes.size()) - 1e-9);
  return static_cast<uint32_t>(std::clamp(t, 0.0, static_cast<double>(j.sizes.size())));
}
}  // namespace

void TcpHost::add_job(const JobDesc& job, TcpVariant variant) {
  jobs_.push_back(job);
  variants_.push_back(variant);
}

void TcpHost::set_size_priority(const uint8_t dscp_by_class[8], const uint64_t bounds[6], uint32_t send_buffer) {
  size_priority_ = true;
  tcp_buffer_ = send_buffer;
  std::copy(dscp_by_class, dscp_by_class + 8, dscp_);
  std::copy(bounds, bounds + 6, bounds_);
}

// The remaining-size class of what the connection still needs acknowledged before the receiver answers: acked =
// written - what the socket still holds (unacknowledged or unsent).
void TcpHost::update_priority(Sender& s) {
  if (!size_priority_ || !s.socket) return;
  const uint64_t held = s.socket->GetTxAvailable() <= tcp_buffer_ ? tcp_buffer_ - s.socket->GetTxAvailable() : 0;
  const uint64_t acked = s.written > held ? s.written - held : 0;
  const uint64_t remaining = s.answer_bytes > acked ? s.answer_bytes - acked : 0;
  int k = 7;
  for (int i = 0; i < 6; ++i)
    if (remaining <= bounds_[i]) {
      k = i + 1;
      break;
    }
  if (k == s.klass) return;
  s.klass = k;
  s.socket->SetIpTos(static_cast<uint8_t>(dscp_[k] << 2));
}

void TcpHost::StartApplication() {
  listener_ = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
  listener_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
  listener_->Listen();
  listener_->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                               MakeCallback(&TcpHost::on_accept, this));
  senders_.reserve(jobs_.size());
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const JobDesc& j = jobs_[i];
    Sender s;
    s.desc = &j;
    s.variant = variants_[i];
    const uint32_t n = static_cast<uint32_t>(j.sizes.size());
    uint32_t answer_at = n;
    if (s.variant == TcpVariant::kSampleSend) {
      std::vector<uint32_t> all(n);
      for (uint32_t m = 0; m < n; ++m) all[m] = m;
      std::mt19937_64 rng(ctx_->seed * 1000003ULL + j.id);
      std::shuffle(all.begin(), all.end(), rng);
      all.resize(target_of(j));
      std::sort(all.begin(), all.end());
      s.order = std::move(all);
      answer_at = static_cast<uint32_t>(s.order.size());
    } else {
      s.order.resize(n);
      for (uint32_t m = 0; m < n; ++m) s.order[m] = m;
      if (s.variant == TcpVariant::kEarlySend) answer_at = target_of(j);
    }
    put32(s.head, kMagic);
    put32(s.head, j.id);
    put32(s.head, static_cast<uint32_t>(s.order.size()));
    put32(s.head, answer_at);
    s.answer_bytes = kJobHeader;
    for (uint32_t i = 0; i < answer_at && i < s.order.size(); ++i) s.answer_bytes += kMsgHeader + j.sizes[s.order[i]];
    JobResult& r = ctx_->results[j.id];
    r.target = answer_at;
    senders_.push_back(std::move(s));
    const uint64_t at = j.start_ns > ctx_->connect_lead_ns ? j.start_ns - ctx_->connect_lead_ns : 0;
    Simulator::Schedule(NanoSeconds(at) - Simulator::Now(), &TcpHost::connect, this, i);
    Simulator::Schedule(NanoSeconds(j.start_ns) - Simulator::Now(), &TcpHost::start, this, i);
  }
}

void TcpHost::StopApplication() {}

void TcpHost::connect(size_t idx) {
  Sender& s = senders_[idx];
  s.socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
  s.socket->Bind();
  sender_of_socket_[PeekPointer(s.socket)] = idx;
  s.socket->SetConnectCallback(MakeBoundCallback(&TcpHost::on_connected, this, idx),
                               MakeNullCallback<void, Ptr<Socket>>());
  s.socket->SetSendCallback(MakeBoundCallback(&TcpHost::on_send_space, this, idx));
  s.socket->SetRecvCallback(MakeCallback(&TcpHost::on_sender_recv, this));
  s.socket->Connect(InetSocketAddress(ctx_->host_addr[s.desc->receiver - 1], kPort));
}

void TcpHost::start(size_t idx) { produce(idx); }

void TcpHost::on_connected(TcpHost* h, size_t idx, Ptr<Socket>) {
  h->senders_[idx].connected = true;
  h->pump(idx);
}

void TcpHost::on_send_space(TcpHost* h, size_t idx, Ptr<Socket>, uint32_t) { h->pump(idx); }

void TcpHost::produce(size_t idx) {
  Sender& s = senders_[idx];
  const JobDesc& j = *s.desc;
  const uint64_t now = now_ns();
  while (s.produced < s.order.size() && j.start_ns + j.offsets_ns[s.order[s.produced]] <= now) s.produced++;
  if (s.produced < s.order.size() && !s.stopped)
    Simulator::Schedule(NanoSeconds(j.start_ns + j.offsets_ns[s.order[s.produced]] - now), &TcpHost::produce, this,
                        idx);
  pump(idx);
}

// Hands produced bytes to TCP as far as its send buffer allows.
void TcpHost::pump(size_t idx) {
  Sender& s = senders_[idx];
  if (!s.connected || s.stopped) return;
  JobResult& r = ctx_->results[s.desc->id];
  update_priority(s);
  if (!s.head.empty()) {
    if (s.socket->GetTxAvailable() < s.head.size()) return;
    s.socket->Send(Create<Packet>(s.head.data(), static_cast<uint32_t>(s.head.size())));
    r.bytes_sent += s.head.size();
    s.written += s.head.size();
    s.head.clear();
  }
  while (s.sent_msg < s.produced) {
    const uint32_t m = s.order[s.sent_msg];
    const uint32_t total = static_cast<uint32_t>(kMsgHeader) + s.desc->sizes[m];
    uint32_t avail = s.socket->GetTxAvailable();
    if (avail == 0) return;
    if (s.sent_bytes_of_current < kMsgHeader) {
      if (avail < kMsgHeader) return;  // headers go in one piece (simpler receiver)
      std::vector<uint8_t> h;
      put32(h, m);
      put32(h, s.desc->sizes[m]);
      s.socket->Send(Create<Packet>(h.data(), kMsgHeader));
      s.written += kMsgHeader;
      s.sent_bytes_of_current = kMsgHeader;
      r.bytes_sent += kMsgHeader;
      avail -= kMsgHeader;
    }
    const uint32_t chunk = std::min(avail, total - s.sent_bytes_of_current);
    if (chunk > 0) {
      int sent = s.socket->Send(Create<Packet>(chunk));
      if (sent <= 0) return;
      s.written += static_cast<uint32_t>(sent);
      s.sent_bytes_of_current += static_cast<uint32_t>(sent);
    }
    r.bytes_sent += chunk;
    if (s.sent_bytes_of_current < total) return;
    s.sent_msg++;
    s.sent_bytes_of_current = 0;
  }
}

void TcpHost::on_sender_recv(Ptr<Socket> sock) {
  auto it = sender_of_socket_.find(PeekPointer(sock));
  while (Ptr<Packet> p = sock->Recv()) {
    if (it == sender_of_socket_.end() || p->GetSize() == 0) continue;
    Sender& s = senders_[it->second];
    if (s.done) continue;
    s.done = true;
    s.stopped = true;
    JobResult& r = ctx_->results[s.desc->id];
    r.done_ns = now_ns();
    r.status = "ok";
    r.delivered = r.target;
    sock->Close();  // EarlySend stops here; what TCP already buffered still drains
    ctx_->finished(s.desc->id, r.done_ns);
  }
}

void TcpHost::on_accept(Ptr<Socket> s, const Address&) {
  receivers_[PeekPointer(s)] = Receiver{};
  s->SetRecvCallback(MakeCallback(&TcpHost::on_receiver_recv, this));
}

void TcpHost::on_receiver_recv(Ptr<Socket> sock) {
  Receiver& rc = receivers_[PeekPointer(sock)];
  std::vector<uint8_t> data;
  while (Ptr<Packet> p = sock->Recv()) {
    data.resize(p->GetSize());
    p->CopyData(data.data(), p->GetSize());
    size_t off = 0;
    while (off < data.size()) {
      if (rc.in_payload) {
        const uint32_t take = static_cast<uint32_t>(std::min<size_t>(rc.payload_left, data.size() - off));
        rc.payload_left -= take;
        rc.bytes += take;
        off += take;
        if (rc.payload_left == 0) {
          rc.in_payload = false;
          rc.complete++;
          if (!rc.answered && rc.complete >= rc.answer_at) {
            rc.answered = true;
            ctx_->results[rc.job].bytes_received = rc.bytes;
            uint8_t one = 1;
            sock->Send(Create<Packet>(&one, 1));
          }
        }
        continue;
      }
      const size_t want = rc.have_job ? kMsgHeader : kJobHeader;
      const size_t take = std::min(want - rc.hdr.size(), data.size() - off);
      rc.hdr.insert(rc.hdr.end(), data.begin() + off, data.begin() + off + take);
      off += take;
      if (rc.hdr.size() < want) continue;
      if (!rc.have_job) {
        if (get32(rc.hdr.data()) != kMagic) {  // not our stream: stop reading it
          sock->Close();
          return;
        }
        rc.have_job = true;
        rc.job = get32(rc.hdr.data() + 4);
        rc.expect = get32(rc.hdr.data() + 8);
        rc.answer_at = get32(rc.hdr.data() + 12);
        if (rc.answer_at == 0 && !rc.answered) {
          rc.answered = true;
          uint8_t one = 1;
          sock->Send(Create<Packet>(&one, 1));
        }
      } else {
        rc.payload_left = get32(rc.hdr.data() + 4);
        rc.in_payload = true;
        if (rc.payload_left == 0) rc.in_payload = false, rc.complete++;
      }
      rc.hdr.clear();
    }
  }
}

}  // namespace netapprox::sim
