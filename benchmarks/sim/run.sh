#!/usr/bin/env bash
# The ns-3 simulation of ATP (docs/simulation.md). One command per task:
#
#   benchmarks/sim/run.sh setup            install ns-3 (PyPI wheel ns3==3.44.post0, pinned) into build/sim-ns3
#   benchmarks/sim/run.sh build            setup + build atp-sim (CMake, Release) into build/sim
#   benchmarks/sim/run.sh test             build + the simulator's tests (benchmarks/sim/test_sim.py)
#   benchmarks/sim/run.sh smoke            build + the smoke preset (k=4, a few dozen jobs per scheme, < 2 min)
#                                          -> benchmarks/results/sim/smoke/summary.json
#   benchmarks/sim/run.sh k4               every figure on the k=4 fat-tree -> benchmarks/results/sim/k4 (+ PNGs)
#   benchmarks/sim/run.sh paper            every figure at paper scale (k=12, 192 hosts, 40G) -> .../sim/paper
#   benchmarks/sim/run.sh figN [PRESET]    one figure (fig5 fig6 fig9 fig10 fig11 fig12 fig13 fig14), PRESET k4
#                                          (default) or paper -> benchmarks/results/sim/PRESET-figN
#   benchmarks/sim/run.sh ci               test + smoke (what scripts/test.sh runs)
#
# Environment: SIM_NS3 (ns-3 install dir, default build/sim-ns3), SIM_BUILD (default build/sim), SIM_JOBS
# (simulations in parallel, default 2), SIM_OUT (results dir override), SIM_SEED (default 1).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NS3_VERSION="3.44.post0"
NS3_DIR="${SIM_NS3:-$ROOT/build/sim-ns3}"
BUILD="${SIM_BUILD:-$ROOT/build/sim}"
JOBS="${SIM_JOBS:-2}"
SEED="${SIM_SEED:-1}"
SIM="$BUILD/atp-sim"
log() { echo "[sim] $*"; }

setup() {
  if [ -f "$NS3_DIR/.installed-$NS3_VERSION" ] && [ -f "$NS3_DIR/ns3/include/ns3/core-module.h" ]; then
    return
  fi
  log "installing ns3==$NS3_VERSION (PyPI wheel: ns-3's C++ libraries and headers) into $NS3_DIR"
  rm -rf "$NS3_DIR"
  # --no-deps: only the C++ libraries and headers are used; the wheel's Python binding (cppyy) is not.
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$NS3_DIR" "ns3==$NS3_VERSION" </dev/null
  touch "$NS3_DIR/.installed-$NS3_VERSION"
}

build() {
  setup
  cmake -S "$HERE" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNS3_ROOT="$NS3_DIR/ns3" >/dev/null
  cmake --build "$BUILD"
}

figures() {  # figures PRESET OUT [--only ...]
  local preset="$1" out="$2"
  shift 2
  python3 "$HERE/sim.py" run --preset "$preset" --sim "$SIM" --out "$out" --jobs "$JOBS" --seed "$SEED" "$@"
  if python3 -c "import matplotlib" >/dev/null 2>&1; then
    python3 "$HERE/sim.py" plot --results "$out"
  else
    log "matplotlib missing (scripts/setup.sh installs matplotlib==3.9.2): CSVs written, no PNGs"
  fi
}

cmd="${1:-}"
case "$cmd" in
  setup) setup ;;
  build) build ;;
  test)
    build
    ATP_SIM="$SIM" python3 "$HERE/test_sim.py" -v
    ;;
  smoke)
    build
    python3 "$HERE/sim.py" run --preset smoke --sim "$SIM" --out "${SIM_OUT:-$ROOT/benchmarks/results/sim/smoke}" \
      --jobs "$JOBS" --seed "$SEED"
    ;;
  ci)
    build
    ATP_SIM="$SIM" python3 "$HERE/test_sim.py" -v
    python3 "$HERE/sim.py" run --preset smoke --sim "$SIM" --out "${SIM_OUT:-$ROOT/build/sim-smoke}" \
      --jobs "$JOBS" --seed "$SEED"
    python3 "$HERE/check_summary.py" "${SIM_OUT:-$ROOT/build/sim-smoke}/summary.json"
    ;;
  k4 | paper)
    build
    figures "$cmd" "${SIM_OUT:-$ROOT/benchmarks/results/sim/$cmd}"
    ;;
  fig5 | fig6 | fig9 | fig10 | fig11 | fig12 | fig13 | fig14)
    preset="${2:-k4}"
    build
    figures "$preset" "${SIM_OUT:-$ROOT/benchmarks/results/sim/$preset-$cmd}" --only "$cmd"
    ;;
  *)
    sed -n '2,20p' "$0"
    exit 2
    ;;
esac
