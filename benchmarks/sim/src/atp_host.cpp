#include "atp_host.hpp"

#include "ns3/inet-socket-address.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-socket-factory.h"

#include <algorithm>
#include <cstring>

namespace netapprox::sim {

using namespace ns3;
namespace atp = netapprox::atp;

namespace {
uint64_t now_ns() { return static_cast<uint64_t>(Simulator::Now().GetNanoSeconds()); }

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A session's id and key, as the control plane would hand them out: here derived from the seed, so runs repeat.
void session_key(uint64_t seed, atp::SessionId id, uint8_t key[atp::kKeyBytes]) {
  for (size_t i = 0; i < atp::kKeyBytes; i += 8) {
    uint64_t v = mix(seed * 0x100000001b3ULL ^ id ^ (i << 56));
    std::memcpy(key + i, &v, 8);
  }
}
}  // namespace

AtpHost::AtpHost(SimContext* ctx, uint32_t host, const atp::EngineConfig& cfg, std::vector<AtpHost*>* all)
    : ctx_(ctx), host_(host), all_(all), engine_(std::make_unique<atp::Engine>(cfg)) {
  buf_.resize(cfg.max_datagram + 64);
  engine_->set_trace_epochs(ctx->trace != nullptr && !ctx->traced.empty());
}

void AtpHost::add_job(const JobDesc& job) { jobs_.push_back(job); }

void AtpHost::StartApplication() {
  socket_ = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
  socket_->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
  socket_->SetRecvCallback(MakeCallback(&AtpHost::on_recv, this));
  sending_.reserve(jobs_.size());
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const JobDesc& j = jobs_[i];
    sending_.push_back(SendingJob{&j, (uint64_t{host_} << 32) | j.receiver});
    const uint64_t open_at = j.start_ns > ctx_->connect_lead_ns ? j.start_ns - ctx_->connect_lead_ns : 0;
    Simulator::Schedule(NanoSeconds(open_at) - Simulator::Now(), &AtpHost::open_session_to, this, j.receiver);
    Simulator::Schedule(NanoSeconds(j.start_ns) - Simulator::Now(), &AtpHost::start_job, this, i);
  }
}

void AtpHost::StopApplication() {
  if (wake_.IsPending()) wake_.Cancel();
  if (socket_) socket_->Close();
}

// Sessions are set up out of band (the control plane's job), before the job, on both engines.
void AtpHost::open_session_to(uint32_t receiver) {
  if (!sessions_to_.insert(receiver).second) return;
  const atp::SessionId id = (uint64_t{host_} << 32) | receiver;
  uint8_t key[atp::kKeyBytes];
  session_key(ctx_->seed, id, key);
  engine_->open_session(id, key, receiver, true, now_ns());
  (*all_)[receiver - 1]->accept_session(id, key, host_);
}

void AtpHost::accept_session(atp::SessionId id, const uint8_t* key, uint32_t sender) {
  engine_->open_session(id, key, sender, false, now_ns());
}

void AtpHost::start_job(size_t idx) {
  SendingJob& s = sending_[idx];
  const JobDesc& j = *s.desc;
  JobResult& r = ctx_->results[j.id];
  atp::JobSpec spec{j.id, {atp::GroupSpec{0, static_cast<uint32_t>(j.sizes.size()), j.msr}}, true};
  atp::Status st = engine_->start_job(s.session, spec, now_ns());
  if (st != atp::Status::kOk) {
    r.status = std::string("start_job: ") + atp::status_name(st);
    ctx_->finished(j.id, now_ns());
    return;
  }
  produce(idx);
}

// Makes every message whose production time has come ready, then waits for the next one. A job whose message
// met a full send buffer waits in blocked_ until acknowledgements free space (pump retries it).
void AtpHost::produce(size_t idx) {
  SendingJob& s = sending_[idx];
  if (s.blocked) return;
  submit_due(idx);
  pump();
}

void AtpHost::submit_due(size_t idx) {
  SendingJob& s = sending_[idx];
  const JobDesc& j = *s.desc;
  const uint64_t now = now_ns();
  while (s.next < j.sizes.size() && j.start_ns + j.offsets_ns[s.next] <= now) {
    if (!submit(s)) {
      s.blocked = true;
      blocked_.push_back(idx);
      return;
    }
  }
  if (s.next < j.sizes.size())
    Simulator::Schedule(NanoSeconds(j.start_ns + j.offsets_ns[s.next] - now), &AtpHost::produce, this, idx);
}

bool AtpHost::submit(SendingJob& s) {
  const JobDesc& j = *s.desc;
  const uint32_t len = j.sizes[s.next];
  msg_.resize(len);
  if (ctx_->verify) {
    for (uint32_t i = 0; i < len; ++i) msg_[i] = pattern_byte(j.id, s.next, i, true);
  } else {
    std::memset(msg_.data(), pattern_byte(j.id, s.next, 0, false), len);
  }
  atp::Status st = engine_->submit(s.session, j.id, 0, s.next, msg_.data(), len, now_ns());
  if (st == atp::Status::kWouldBlock) return false;
  if (st != atp::Status::kOk) {  // the job already ended (e.g. reached its target): later messages are moot
    s.next = static_cast<uint32_t>(j.sizes.size());
    return true;
  }
  s.next++;
  return true;
}

void AtpHost::on_recv(Ptr<Socket> socket) {
  Address from;
  while (Ptr<Packet> p = socket->RecvFrom(from)) {
    const uint32_t len = p->GetSize();
    if (len > buf_.size()) continue;  // larger than any ATP datagram: not ours
    p->CopyData(buf_.data(), len);
    const uint32_t addr = InetSocketAddress::ConvertFrom(from).GetIpv4().Get();
    auto it = ctx_->host_of_addr.find(addr);
    if (it == ctx_->host_of_addr.end()) continue;
    engine_->on_datagram(buf_.data(), len, it->second, now_ns());
  }
  pump();
}

void AtpHost::pump() {
  if (in_pump_) return;  // produce() -> pump() from inside an event handler
  in_pump_ = true;
  const uint64_t now = now_ns();
  atp::Transmit tx{};
  for (int round = 0; round < 64; ++round) {
    if (engine_->next_timeout() <= now) engine_->on_timeout(now);
    while (engine_->poll_transmit(now, buf_.data(), buf_.size(), &tx)) {
      if (tos_ != tx.dscp << 2) {
        tos_ = tx.dscp << 2;
        socket_->SetIpTos(static_cast<uint8_t>(tos_));
      }
      socket_->SendTo(Create<Packet>(buf_.data(), static_cast<uint32_t>(tx.len)), 0,
                      InetSocketAddress(ctx_->host_addr[tx.peer - 1], kPort));
    }
    atp::Event ev;
    while (engine_->poll_event(&ev)) on_event(ev);
    // Messages that met a full send buffer get another chance now that acknowledgements freed some.
    for (size_t n = blocked_.size(); n > 0; --n) {
      size_t idx = blocked_.front();
      blocked_.pop_front();
      sending_[idx].blocked = false;
      submit_due(idx);
    }
    if (engine_->next_timeout() > now) break;
  }
  in_pump_ = false;
  arm();
}

void AtpHost::arm() {
  const uint64_t now = now_ns();
  uint64_t t = engine_->next_timeout();
  if (t == atp::kNever) return;
  if (t <= now) t = now + 1;
  if (wake_.IsPending() && wake_at_ <= t) return;
  if (wake_.IsPending()) wake_.Cancel();
  wake_at_ = t;
  wake_ = Simulator::Schedule(NanoSeconds(t - now), &AtpHost::pump, this);
}

void AtpHost::on_event(const atp::Event& ev) {
  switch (ev.type) {
    case atp::EventType::kMessage: {
      auto& rj = receiving_[ev.job];
      JobResult& r = ctx_->results[ev.job];
      if (static_cast<int64_t>(ev.message) <= rj.last_msg) r.in_order = false;
      rj.last_msg = ev.message;
      r.bytes_received += ev.len;
      if (ctx_->verify) {
        for (size_t i = 0; i < ev.len; ++i)
          if (ev.data[i] != pattern_byte(ev.job, ev.message, i, true)) {
            r.content_ok = false;
            break;
          }
      }
      engine_->release(ev.handle);
      break;
    }
    case atp::EventType::kJobDone: {
      const atp::JobReport& rep = *ev.report;
      JobResult& r = ctx_->results[ev.job];
      if (rep.is_sender) {
        r.status = rep.status == atp::Status::kOk ? "ok" : atp::status_name(rep.status);
        r.done_ns = rep.finished;
        r.bytes_sent = rep.bytes_sent;
        r.packets_sent = rep.packets_sent;
        r.packets_retransmitted = rep.packets_retransmitted;
        r.measured_loss = rep.measured_loss;
        r.epochs = rep.epochs;
        for (int c = 0; c < atp::kNumPriorityClasses; ++c) r.time_in_class_ns[c] = rep.time_in_class[c];
        if (!r.receiver_done) {  // the receiver's count is the truth; the sender's is what it learned
          r.delivered = rep.delivered;
          r.lost = rep.lost;
        }
        ctx_->finished(ev.job, now_ns());
      } else {
        r.receiver_done = true;
        r.delivered = rep.delivered;
        r.lost = rep.lost;
        receiving_.erase(ev.job);
      }
      break;
    }
    case atp::EventType::kEpoch:
      if (ctx_->trace && ctx_->traced.count(ev.epoch.job)) {
        const atp::EpochSample& e = ev.epoch;
        std::fprintf(ctx_->trace, "%u,%llu,%.6f,%.6f,%.0f,%d\n", e.job, (unsigned long long)e.at, e.tlr, e.loss,
                     e.rate_bps, e.priority_class);
      }
      break;
    default:
      break;
  }
}

}  // namespace netapprox::sim
