#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine (JDK 17, Maven 3.8, gcc 12, cmake, ninja, libgtest-dev, python3
# preinstalled) lacks to build and test NetApprox. Idempotent: does nothing when every package is present.
# Run as root (or as a user with sudo). Safe without a terminal (CI=true, no stdin).
set -euo pipefail

PACKAGES=(
  libsodium-dev        # authenticated sessions in the engine (build); pulls in libsodium23 (runtime)
  pkg-config           # CMake finds libsodium through it
  clang                # libFuzzer target
  clang-format-14      # native/ style check (scripts/check-native-format.sh)
  libclang-rt-14-dev   # libFuzzer + ASan/UBSan runtimes for clang 14
  iperf3               # TCP baselines in benchmarks
  nlohmann-json3-dev   # JSON output of the perf tool
  iproute2             # ip netns / veth / tc for the network lab
  unzip                # scripts/test.sh inspects the approx-core and approx-spark jars
  linux-perf           # benchmarks/netlab/veth_profile.sh (per-datagram CPU budget, docs/driver.md)
  qemu-user-static     # scripts/test.sh runs the shipped linux-aarch64 library's C test under qemu-aarch64-static
  libc6-arm64-cross    # ... with this aarch64 glibc as its sysroot (qemu -L /usr/aarch64-linux-gnu)
)

log() { echo "[setup] $*"; }

missing=()
for p in "${PACKAGES[@]}"; do
  if dpkg -s "$p" >/dev/null 2>&1 && grep -q '^Status: install ok installed' <<<"$(dpkg -s "$p" 2>/dev/null)"; then
    :
  else
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  log "all packages present: ${PACKAGES[*]}"
else
  log "missing packages: ${missing[*]}"
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo -n)
    else
      log "ERROR: not root and no sudo; install as root: apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  log "apt-get update"
  "${SUDO[@]}" apt-get update -q </dev/null
  log "apt-get install -y --no-install-recommends ${missing[*]}"
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

# Tools the build needs that this script does not install (they are part of the base image); fail early and
# clearly when one is absent. (The shipped library's toolchain, Zig, and libsodium's source come from PyPI through
# pip: native/portable/build.sh fetches them, hash-checked, into build/native-portable on the first build.)
for tool in java mvn cmake ninja c++ ctest python3 readelf flock; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    log "ERROR: '$tool' not found on PATH (expected preinstalled: JDK 17, Maven, gcc/g++, cmake, ninja, python3 with pip)" >&2
    exit 1
  fi
done
if [ ! -e /usr/include/gtest/gtest.h ] && [ ! -e /usr/local/include/gtest/gtest.h ]; then
  log "ERROR: GoogleTest headers not found (Debian package libgtest-dev)" >&2
  exit 1
fi
# Plotting for benchmarks/netlab (netlab.plots). Not needed by the test suite, so a failure only warns.
if python3 -c "import matplotlib" >/dev/null 2>&1; then
  log "matplotlib present"
else
  log "python3 -m pip install --user matplotlib==3.9.2 (benchmarks/netlab plots)"
  python3 -m pip install --user -q matplotlib==3.9.2 </dev/null || log "WARNING: matplotlib install failed; benchmarks/netlab/run.sh retries it"
fi
log "ok"
