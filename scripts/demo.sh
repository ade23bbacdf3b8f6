#!/usr/bin/env bash
# Builds NetApprox (native engine + approx-core jar, no tests) and runs the ATP demo: a transfer between two
# local endpoints in one process that prints, per group, what was delivered, the measured loss and the JCT.
# Extra arguments are passed to `atp-perf demo` (see `atp-perf --help`).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if [ "${SKIP_SETUP:-0}" != "1" ]; then
  bash "$ROOT/scripts/setup.sh"
fi

echo "[demo] building: mvn -B -q install -DskipTests"
# shellcheck disable=SC2086
mvn -B -q -ntp ${MAVEN_ARGS:-} install -DskipTests

# The perf tool lives in the CMake build directory approx-core's Maven build uses.
PERF=""
for candidate in "$ROOT/approx-core/target/native-build/atp-perf" "$ROOT/native/build/atp-perf"; do
  if [ -x "$candidate" ]; then PERF="$candidate"; break; fi
done
if [ -z "$PERF" ]; then
  echo "[demo] ERROR: atp-perf was not built (expected approx-core/target/native-build/atp-perf;" \
       "is native/tools/atp_perf.cpp present?)" >&2
  exit 1
fi

echo "[demo] running: ${PERF#"$ROOT"/} demo $*"
exec "$PERF" demo "$@"
