// Engine cost with many sessions (issue 11): two engines joined by N sessions, one sending job each, over a lossy
// simulated link (tests/core/many_sessions.hpp). A tool, not a test: run it under callgrind to count the
// instructions per datagram that next_timeout / on_timeout / poll_transmit spend on the session scan.
//
//   valgrind --tool=callgrind native/build/many-sessions-bench [sessions] [messages] [size]
#include <cstdio>
#include <cstdlib>

#include "many_sessions.hpp"

int main(int argc, char** argv) {
  using namespace netapprox::atp;
  many::Layout l;
  if (argc > 1) l.sessions = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10));
  if (argc > 2) l.messages = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  if (argc > 3) l.size = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  many::ManySessions sim(l);
  const bool ok = sim.run(60'000'000'000ULL);
  const EngineStats a = sim.a().stats(), b = sim.b().stats();
  std::printf("sessions %u messages/job %u size %u: %s, %u jobs done, %llu steps, datagrams a->b %llu, b->a %llu\n",
              l.sessions, l.messages, l.size, ok ? "ok" : "INCOMPLETE", sim.jobs_done(),
              static_cast<unsigned long long>(sim.steps()), static_cast<unsigned long long>(a.datagrams_out),
              static_cast<unsigned long long>(b.datagrams_out));
  return ok ? 0 : 1;
}
