#include "switch_queue.hpp"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/object-factory.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace netapprox::sim {

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(SwitchQueueDisc);

namespace {
std::array<int8_t, 64> g_class_of_dscp = [] {
  std::array<int8_t, 64> m{};
  m.fill(0);
  return m;
}();
}  // namespace

SwitchQueueStats& switch_queue_stats() {
  static SwitchQueueStats s;
  return s;
}

void set_dscp_classes(const uint8_t dscp_by_class[kClasses]) {
  g_class_of_dscp.fill(0);
  for (int c = kClasses - 1; c >= 0; --c) g_class_of_dscp[dscp_by_class[c] & 63] = static_cast<int8_t>(c);
}

bool dt_admits(uint64_t queued, uint32_t size, double alpha, uint64_t pool_free) {
  if (size > pool_free) return false;
  return static_cast<double>(queued + size) <= alpha * static_cast<double>(pool_free);
}

TypeId SwitchQueueDisc::GetTypeId() {
  static TypeId tid =
      TypeId("netapprox::SwitchQueueDisc")
          .SetParent<QueueDisc>()
          .AddConstructor<SwitchQueueDisc>()
          .AddAttribute("Slack", "8 strict-priority queues by DSCP (true) or one FIFO (false)", BooleanValue(true),
                        MakeBooleanAccessor(&SwitchQueueDisc::slack_), MakeBooleanChecker())
          .AddAttribute("CountStats", "add this port's counters to the fabric totals", BooleanValue(true),
                        MakeBooleanAccessor(&SwitchQueueDisc::count_stats_), MakeBooleanChecker())
          .AddAttribute("BufferBytes", "port buffer", UintegerValue(1'500'000),
                        MakeUintegerAccessor(&SwitchQueueDisc::buffer_bytes_), MakeUintegerChecker<uint32_t>())
          .AddAttribute("MtuBytes", "one MTU of approximate-queue buffer", UintegerValue(1500),
                        MakeUintegerAccessor(&SwitchQueueDisc::mtu_bytes_), MakeUintegerChecker<uint32_t>())
          .AddAttribute("EcnThreshold", "CE-mark ECT packets while their queue holds this many packets (0: off)",
                        UintegerValue(65), MakeUintegerAccessor(&SwitchQueueDisc::ecn_threshold_),
                        MakeUintegerChecker<uint32_t>())
          .AddAttribute("Alpha", "shared buffer: class 0 / fifo dynamic threshold (x free pool bytes)", DoubleValue(1.0),
                        MakeDoubleAccessor(&SwitchQueueDisc::alpha_), MakeDoubleChecker<double>(0.001, 1000))
          .AddAttribute("ApproxAlpha", "shared buffer: class 1's dynamic threshold, class k's x (8-k)/7 (0: static)",
                        DoubleValue(0.0), MakeDoubleAccessor(&SwitchQueueDisc::approx_alpha_),
                        MakeDoubleChecker<double>(0, 1000));
  return tid;
}

SwitchQueueDisc::SwitchQueueDisc() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}

int SwitchQueueDisc::classify(const Ptr<QueueDiscItem>& item) const {
  if (!slack_) return 0;
  auto ip = DynamicCast<Ipv4QueueDiscItem>(item);
  if (!ip) return 0;
  return g_class_of_dscp[ip->GetHeader().GetDscp() & 63];
}

bool SwitchQueueDisc::admits(int c, uint32_t size) const {
  if (!pool_) return bytes_[c] + size <= limit_[c];
  if (c > 0 && approx_alpha_ <= 0) return bytes_[c] + size <= limit_[c] && size <= pool_->free();
  const double a = c == 0 ? alpha_ : approx_alpha_ * static_cast<double>(kClasses - c) / (kClasses - 1);
  return dt_admits(bytes_[c], size, a, pool_->free());
}

bool SwitchQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item) {
  const int c = classify(item);
  const uint32_t size = item->GetSize();
  auto& st = switch_queue_stats();
  if (!admits(c, size)) {
    if (count_stats_) st.dropped[c]++;
    DropBeforeEnqueue(item, "class buffer full");
    return false;
  }
  auto q = GetInternalQueue(c);
  if (ecn_threshold_ > 0 && q->GetNPackets() >= ecn_threshold_) {
    if (Mark(item, "ecn threshold") && count_stats_) st.marked[c]++;
  }
  if (!q->Enqueue(item)) return false;  // counted by the internal queue's own drop trace
  bytes_[c] += size;
  if (pool_) {
    pool_->used += size;
    pool_->max_used = std::max(pool_->max_used, pool_->used);
  }
  if (count_stats_) {
    st.enqueued[c]++;
    if (bytes_[c] > st.max_bytes[c]) st.max_bytes[c] = bytes_[c];
  }
  return true;
}

Ptr<QueueDiscItem> SwitchQueueDisc::DoDequeue() {
  const size_t n = GetNInternalQueues();
  for (size_t c = 0; c < n; ++c) {
    auto q = GetInternalQueue(c);
    if (q->IsEmpty()) continue;
    Ptr<QueueDiscItem> item = q->Dequeue();
    if (item) {
      bytes_[c] -= item->GetSize();
      if (pool_) pool_->used -= item->GetSize();
    }
    return item;
  }
  return nullptr;
}

bool SwitchQueueDisc::CheckConfig() {
  if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
  const int n = slack_ ? kClasses : 1;
  uint32_t approx = 0;
  for (int c = 1; c < n; ++c) {
    limit_[c] = static_cast<uint32_t>(kClasses - c) * mtu_bytes_;
    approx += limit_[c];
  }
  if (approx + mtu_bytes_ > buffer_bytes_) return false;  // class 0 must hold at least one MTU
  limit_[0] = buffer_bytes_ - approx;
  if (GetNInternalQueues() == 0) {
    for (int c = 0; c < n; ++c)
      AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
          "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1'000'000))));
  }
  return static_cast<int>(GetNInternalQueues()) == n;
}

}  // namespace netapprox::sim
