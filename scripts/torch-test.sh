#!/usr/bin/env bash
# netapprox-torch's tests (python/netapprox-torch; docs/pytorch.md): the CPU torch wheel (pinned) and numpy installed
# on first use into build/torch-<version> (pip --target: no venv, nothing outside the checkout), the package itself
# installed with pip from the repository into build/netapprox-torch, then its unittest suite (segments, the C API
# binding, a 3-rank all-reduce, 3-rank DDP training) against the libnetapprox.so the Maven build made
# (approx-core/target/native-build; NETAPPROX_LIBRARY overrides). PyPI's torch wheel pulls its CUDA libraries
# (~4 GB): torch preloads them even on a machine without a GPU.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TORCH_VERSION="2.15.0"
NUMPY_VERSION="2.4.6"
DEPS="$ROOT/build/torch-$TORCH_VERSION"
PKG="$ROOT/build/netapprox-torch"
LIB="${NETAPPROX_LIBRARY:-$ROOT/approx-core/target/native-build/libnetapprox.so}"
log() { echo "[torch] $*"; }

if [ ! -f "$LIB" ]; then
  log "ERROR: $LIB not found: build it first (mvn -DskipTests -Dnative.portable=false -pl approx-core install)" >&2
  exit 1
fi
if [ ! -f "$DEPS/.installed" ]; then
  log "installing torch==$TORCH_VERSION numpy==$NUMPY_VERSION into $DEPS (first use; ~4 GB)"
  rm -rf "$DEPS"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --target "$DEPS" \
    "torch==$TORCH_VERSION" "numpy==$NUMPY_VERSION" </dev/null
  touch "$DEPS/.installed"
fi
log "installing python/netapprox-torch with pip into $PKG"
rm -rf "$PKG"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$PKG" \
  "$ROOT/python/netapprox-torch" </dev/null
cd "$ROOT/python/netapprox-torch"  # the tests import the installed package, not src/
PYTHONPATH="$PKG:$DEPS" NETAPPROX_LIBRARY="$LIB" python3 -c \
  "import netapprox_torch, sys; assert netapprox_torch.__file__.startswith('$PKG'), netapprox_torch.__file__"
PYTHONPATH="$PKG:$DEPS" NETAPPROX_LIBRARY="$LIB" timeout "${TORCH_TEST_TIMEOUT:-1200}" \
  python3 -m unittest discover -s tests -t . -v 2>&1 | sed 's/^/[torch] /'
exit "${PIPESTATUS[0]}"
