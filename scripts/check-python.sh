#!/usr/bin/env bash
# Python style check (benchmarks/, native/tests/tools): `ruff format --check` and `ruff check` with the
# repository's ruff.toml. ruff is pinned and installed on first use into build/ruff (pip --target: no venv,
# nothing outside the checkout). `--fix` reformats and applies ruff's safe fixes instead of checking.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUFF_VERSION="0.17.5"
RUFF_DIR="$ROOT/build/ruff"
log() { echo "[python] $*"; }

if [ ! -f "$RUFF_DIR/.installed-$RUFF_VERSION" ]; then
  log "installing ruff==$RUFF_VERSION into $RUFF_DIR"
  rm -rf "$RUFF_DIR"
  python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$RUFF_DIR" "ruff==$RUFF_VERSION" </dev/null
  touch "$RUFF_DIR/.installed-$RUFF_VERSION"
fi
RUFF="$RUFF_DIR/bin/ruff"
cd "$ROOT"
if [ "${1:-}" = "--fix" ]; then
  "$RUFF" format .
  "$RUFF" check --fix .
  exit 0
fi
if ! "$RUFF" format --check .; then
  log "ERROR: Python files are not formatted; run: bash scripts/check-python.sh --fix" >&2
  exit 1
fi
if ! "$RUFF" check .; then
  log "ERROR: ruff check found problems (above); bash scripts/check-python.sh --fix applies the safe fixes" >&2
  exit 1
fi
log "ruff $RUFF_VERSION: $(git ls-files '*.py' | grep -vc '^benchmarks/results/') Python files formatted and clean"
