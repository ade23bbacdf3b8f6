#!/usr/bin/env bash
# Checks that every C/C++ source under native/ is formatted as native/.clang-format says (clang-format 14).
#   bash scripts/check-native-format.sh          # check: lists the files that differ, exits 1 if any
#   bash scripts/check-native-format.sh --fix    # reformat them in place
# CLANG_FORMAT selects the binary (default clang-format-14, from scripts/setup.sh).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
CLANG_FORMAT="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "$CLANG_FORMAT" >/dev/null 2>&1; then
  echo "[format] ERROR: $CLANG_FORMAT not found (scripts/setup.sh installs clang-format-14)" >&2
  exit 1
fi
mapfile -t FILES < <(git ls-files 'native/*.cpp' 'native/*.hpp' 'native/*.h' 'native/*.c')
if [ "${1:-}" = "--fix" ]; then
  "$CLANG_FORMAT" -i --style=file "${FILES[@]}"
  echo "[format] reformatted ${#FILES[@]} native files"
  exit 0
fi
BAD=()
for f in "${FILES[@]}"; do
  if ! "$CLANG_FORMAT" --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
    BAD+=("$f")
  fi
done
if [ ${#BAD[@]} -gt 0 ]; then
  echo "[format] ${#BAD[@]} of ${#FILES[@]} native files are not formatted (fix: bash scripts/check-native-format.sh --fix):" >&2
  printf '  %s\n' "${BAD[@]}" >&2
  exit 1
fi
echo "[format] ${#FILES[@]} native files formatted as native/.clang-format says"
