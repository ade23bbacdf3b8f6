// Blocking whole-buffer send/receive on a connected TCP socket, shared by the perf and lab tools.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace netapprox::tools {

inline bool write_full(int fd, const void* p, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    b += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// timeout_ms < 0 waits forever; otherwise each wait for more bytes gives up after timeout_ms.
inline bool read_full(int fd, void* p, size_t n, int timeout_ms = -1) {
  uint8_t* b = static_cast<uint8_t*>(p);
  while (n > 0) {
    if (timeout_ms >= 0) {
      pollfd pf{fd, POLLIN, 0};
      if (poll(&pf, 1, timeout_ms) <= 0) return false;
    }
    ssize_t rd = recv(fd, b, n, 0);
    if (rd < 0 && errno == EINTR) continue;
    if (rd <= 0) return false;
    b += rd;
    n -= static_cast<size_t>(rd);
  }
  return true;
}

}  // namespace netapprox::tools
