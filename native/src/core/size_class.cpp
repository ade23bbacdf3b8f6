#include "core/size_class.hpp"

namespace netapprox::atp::size_class {

int class_of(uint64_t remaining_bytes, const uint64_t bounds[kBounds]) {
  for (int k = 0; k < kBounds; ++k)
    if (remaining_bytes <= bounds[k]) return k + 1;
  return kBounds + 1;
}

bool bounds_valid(const uint64_t bounds[kBounds]) {
  for (int k = 0; k < kBounds; ++k)
    if (bounds[k] == 0 || (k > 0 && bounds[k] <= bounds[k - 1])) return false;
  return true;
}

}  // namespace netapprox::atp::size_class
